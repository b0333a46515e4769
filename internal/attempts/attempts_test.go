package attempts

import (
	"reflect"
	"strings"
	"testing"
)

const epyc = "AMD EPYC 9V74 80-Core Processor"

func TestDecide(t *testing.T) {
	stall := Policy{StallProne: []string{epyc}}
	tests := []struct {
		name   string
		policy Policy
		in     Outcome
		next   Next
		reason string
	}{
		{"pass is final", stall, Outcome{Number: 1, HasExitCode: true, ExitCode: 0, CPUModel: epyc}, Final, "passed"},
		{"cannot judge retries on any model", stall, Outcome{Number: 1, HasExitCode: true, ExitCode: 2, CPUModel: "Intel Xeon"}, Retry, "cannot judge on Intel Xeon"},
		{"cannot judge retries on a stall-prone model too", stall, Outcome{Number: 2, HasExitCode: true, ExitCode: 2, CPUModel: epyc}, Retry, "cannot judge"},
		{"regression on a stall-prone model retries", stall, Outcome{Number: 1, HasExitCode: true, ExitCode: 1, CPUModel: epyc}, Retry, "listed as stall-prone"},
		{"regression elsewhere is final", stall, Outcome{Number: 1, HasExitCode: true, ExitCode: 1, CPUModel: "Intel Xeon"}, Final, "not a stall-prone"},
		{"regression with no stall-prone list is final", Policy{}, Outcome{Number: 1, HasExitCode: true, ExitCode: 1, CPUModel: epyc}, Final, "not a stall-prone"},
		{"regression on an unknown model is final", stall, Outcome{Number: 1, HasExitCode: true, ExitCode: 1}, Final, "an unknown CPU model"},
		{"model matched ignoring case and outer spaces", stall, Outcome{Number: 1, HasExitCode: true, ExitCode: 1, CPUModel: "  amd epyc 9v74 80-core processor\t"}, Retry, "stall-prone"},
		{"model inner spaces are not folded", stall, Outcome{Number: 1, HasExitCode: true, ExitCode: 1, CPUModel: "AMD EPYC 9V74  80-Core Processor"}, Final, "not a stall-prone"},
		{"no exit code, workflow went on: retry", stall, Outcome{Number: 1}, Retry, "without an exit code"},
		{"workflow cancelled: no retry", stall, Outcome{Number: 1, WorkflowCancelled: true}, Final, "cancelled"},
		{"workflow cancelled after a cannot judge: no retry", stall, Outcome{Number: 1, HasExitCode: true, ExitCode: 2, WorkflowCancelled: true}, Final, "cancelled"},
		{"a crash code counts as cannot judge", stall, Outcome{Number: 1, HasExitCode: true, ExitCode: 137}, Retry, "exit code 137 is not a verdict"},
		{"second retry allowed", stall, Outcome{Number: 2, HasExitCode: true, ExitCode: 2}, Retry, "cannot judge"},
		{"third attempt is the last", stall, Outcome{Number: 3, HasExitCode: true, ExitCode: 2}, Final, "at most 2 retries run and this was attempt 3"},
		{"third attempt without exit code is the last", stall, Outcome{Number: 3}, Final, "at most 2 retries"},
		{"third attempt stall-prone regression is the last", stall, Outcome{Number: 3, HasExitCode: true, ExitCode: 1, CPUModel: epyc}, Final, "at most 2 retries"},
		{"third attempt pass is final for its own reason", stall, Outcome{Number: 3, HasExitCode: true}, Final, "passed"},
		{"one retry allowed", Policy{MaxRetries: 1}, Outcome{Number: 2, HasExitCode: true, ExitCode: 2}, Final, "at most 1 retry run"},
		{"no retries allowed", Policy{MaxRetries: -1}, Outcome{Number: 1, HasExitCode: true, ExitCode: 2}, Final, "at most 0 retries"},
		{"five retries allowed", Policy{MaxRetries: 5}, Outcome{Number: 5, HasExitCode: true, ExitCode: 2}, Retry, "cannot judge"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.policy.Decide(tc.in)
			if d.Next != tc.next {
				t.Fatalf("next %q, want %q (reason %q)", d.Next, tc.next, d.Reason)
			}
			if !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("reason %q does not say %q", d.Reason, tc.reason)
			}
			if strings.Contains(d.Reason, "\n") {
				t.Errorf("reason %q is not one line", d.Reason)
			}
		})
	}
}

func TestFinalOf(t *testing.T) {
	ran := func(n, code int) Outcome { return Outcome{Number: n, HasExitCode: true, ExitCode: code} }
	tests := []struct {
		name string
		in   []Outcome
		want Outcome
		ok   bool
	}{
		{"none", nil, Outcome{}, false},
		{"only a timed-out attempt", []Outcome{{Number: 1}}, Outcome{}, false},
		{"one attempt", []Outcome{ran(1, 1)}, ran(1, 1), true},
		{"the last that ran wins", []Outcome{ran(1, 2), ran(2, 2), ran(3, 0)}, ran(3, 0), true},
		{"a later attempt without exit code does not count", []Outcome{ran(1, 1), {Number: 2}}, ran(1, 1), true},
		{"order by number, not by position", []Outcome{ran(3, 0), ran(1, 2), ran(2, 1)}, ran(3, 0), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := FinalOf(tc.in)
			if ok != tc.ok || got != tc.want {
				t.Errorf("FinalOf = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestCode(t *testing.T) {
	tests := []struct {
		in   Outcome
		want int
	}{
		{Outcome{HasExitCode: true, ExitCode: 0}, 0},
		{Outcome{HasExitCode: true, ExitCode: 1}, 1},
		{Outcome{HasExitCode: true, ExitCode: 2}, 2},
		{Outcome{HasExitCode: true, ExitCode: 139}, 2},
		{Outcome{}, 2},
	}
	for _, tc := range tests {
		if got := Code(tc.in); got != tc.want {
			t.Errorf("Code(%+v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseStallProne(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ,", nil},
		{epyc, []string{epyc}},
		{" AMD EPYC 9V74 80-Core Processor ,Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz,", []string{epyc, "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"}},
	}
	for _, tc := range tests {
		if got := ParseStallProne(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseStallProne(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSameCPUModel(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{epyc, epyc, true},
		{" " + epyc + " ", "amd epyc 9v74 80-core processor", true},
		{"", "", false},
		{"  ", "", false},
		{"AMD EPYC 9V74", epyc, false},
	}
	for _, tc := range tests {
		if got := SameCPUModel(tc.a, tc.b); got != tc.want {
			t.Errorf("SameCPUModel(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSorted(t *testing.T) {
	in := []Outcome{{Number: 3}, {Number: 1}, {Number: 2}}
	got := Sorted(in)
	for i, o := range got {
		if o.Number != i+1 {
			t.Fatalf("Sorted = %+v", got)
		}
	}
	if in[0].Number != 3 {
		t.Errorf("Sorted changed its input: %+v", in)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, o := range []Outcome{
		{Number: 1, HasExitCode: true, ExitCode: 0, CPUModel: epyc},
		{Number: 2, HasExitCode: true, ExitCode: 2},
		{Number: 3},
	} {
		d := Policy{}.Decide(o)
		r := NewRecord(o, d, 4)
		if got := r.Outcome(); got != o {
			t.Errorf("record of %+v gives back %+v", o, got)
		}
		if r.Next != d.Next || r.Reason != d.Reason || r.RunAttempt != 4 {
			t.Errorf("record %+v lost the decision %+v", r, d)
		}
		if (r.ExitCode == nil) == o.HasExitCode {
			t.Errorf("record %+v: exit code null is %v, want %v", r, r.ExitCode == nil, !o.HasExitCode)
		}
	}
}
