package host

import (
	"strings"
	"testing"
)

func TestParseCPUModel(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\nmodel name\t: other\n", "AMD EPYC 7763 64-Core Processor"},
		{"trailing spaces", "model name\t:   Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz  \n", "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"},
		{"no model name (arm64)", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n", ""},
		{"empty", "", ""},
		{"model is not model name", "model\t\t: 1\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseCPUModel(strings.NewReader(tc.in)); got != tc.want {
				t.Errorf("ParseCPUModel = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFacts(t *testing.T) {
	tests := []struct {
		name           string
		env            map[string]string
		attempt, rerun int
	}{
		{"outside the workflow", nil, 0, 0},
		{"second attempt of a re-run", map[string]string{AttemptEnv: "2", "GITHUB_RUN_ATTEMPT": "3"}, 2, 3},
		{"not numbers", map[string]string{AttemptEnv: "two", "GITHUB_RUN_ATTEMPT": "-1"}, 0, 0},
		{"spaces", map[string]string{AttemptEnv: " 1 "}, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Facts(func(k string) string { return tc.env[k] })
			if r.Attempt != tc.attempt || r.RunAttempt != tc.rerun {
				t.Errorf("Facts = %+v, want attempt %d run attempt %d", r, tc.attempt, tc.rerun)
			}
			if r.CPUModel != CPUModel() {
				t.Errorf("CPUModel %q, want this machine's %q", r.CPUModel, CPUModel())
			}
		})
	}
}
