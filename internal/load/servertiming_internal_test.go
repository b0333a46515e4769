package load

import "testing"

func TestParseServerTiming(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"total;dur=12.5", 12500, true},
		{"db;dur=5, app;dur=47.2", 47200, true}, // nested metrics: the largest, never the sum
		{"app;dur=80, total;dur=60", 60000, true},
		{`cache;desc="Cache Read";dur=23.2`, 23200, true},
		{"miss, db;dur=53", 53000, true},
		{`total;dur="7"`, 7000, true},
		{"cpu;desc=x", 0, false},
		{"db;dur=abc", 0, false},
		{"db;dur=-3", 0, false},
		{"", 0, false},
	} {
		got, ok := parseServerTiming([]byte(tc.in))
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("parseServerTiming(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{{"12.5", 12500, true}, {" 3ms", 3000, true}, {"x", 0, false}, {"-1", 0, false}} {
		got, ok := parseMillis([]byte(tc.in))
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("parseMillis(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
