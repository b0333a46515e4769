package arms

import "testing"

func TestParseStat(t *testing.T) {
	// Fields 4..24 of proc(5), with utime=11 stime=12 cutime=13 cstime=14
	// start=555 rss=77.
	rest := " S 10 20 20 0 -1 4194560 100 0 0 0 11 12 13 14 20 0 1 0 555 1000 77"
	tests := []struct {
		name    string
		line    string
		wantErr bool
	}{
		{"plain", "42 (exampled)" + rest, false},
		{"spaces and parens in the name", "42 (a) (b c))" + rest, false},
		{"no name", "42 exampled" + rest, true},
		{"too short", "42 (x) S 1 2", true},
		{"not a number", "42 (x) S 1 2 2 0 -1 4194560 100 0 0 0 11 zz 13 14 20 0 1 0 555 1000 77", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parseStat([]byte(tt.line))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseStat(%q) = %+v, want an error", tt.line, p)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseStat: %v", err)
			}
			want := procStat{pid: 42, ppid: 10, pgrp: 20, state: 'S', self: 23, children: 27, start: 555, rssPages: 77}
			if p != want {
				t.Fatalf("parseStat = %+v, want %+v", p, want)
			}
		})
	}
}

func TestTreeFollowsParentsAndGroup(t *testing.T) {
	all := []procStat{
		{pid: 1, ppid: 0, pgrp: 1, start: 1},
		{pid: 100, ppid: 1, pgrp: 100, start: 7},   // the root
		{pid: 101, ppid: 100, pgrp: 100, start: 8}, // child
		{pid: 102, ppid: 101, pgrp: 300, start: 9}, // grandchild that left the group
		{pid: 103, ppid: 1, pgrp: 100, start: 9},   // orphan still in the group
		{pid: 200, ppid: 1, pgrp: 200, start: 9},   // a stranger
	}
	got := tree(all, procKey{100, 7}, 100)
	for _, pid := range []int{100, 101, 102, 103} {
		found := false
		for k := range got {
			found = found || k.pid == pid
		}
		if !found {
			t.Errorf("pid %d missing from the tree %v", pid, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("tree has %d members, want 4: %v", len(got), got)
	}
	// A reused root pid (another start time) is not the arm.
	if got := tree(all, procKey{100, 99}, 0); len(got) != 0 {
		t.Errorf("tree of a reused pid = %v, want empty", got)
	}
}
