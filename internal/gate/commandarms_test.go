package gate

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

func TestCommandArms(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, head CommandArm
		ready      string
		refusal    string // "" for none
	}{
		{name: "loopback", base: CommandArm{Cmd: "a", URL: "http://127.0.0.1:@PORT@"}, head: CommandArm{Cmd: "b"}, ready: "/healthz"},
		{name: "remote head", base: CommandArm{Cmd: "a"}, head: CommandArm{Cmd: "b", URL: "http://example.com/"}, refusal: "ab: --head-url \"http://example.com/\""},
		{name: "credentials hidden", base: CommandArm{Cmd: "a", URL: "http://me:hunter2@example.com:@PORT@/"}, head: CommandArm{Cmd: "b"}, refusal: "ab: --base-url \"http://***@example.com:@PORT@/\""},
		{name: "remote ready", base: CommandArm{Cmd: "a"}, head: CommandArm{Cmd: "b"}, ready: "tcp://10.0.0.1:80", refusal: "ab: --ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arms, err := CommandArms(tc.base, tc.head, tc.ready)
			if tc.refusal == "" {
				if err != nil || len(arms) != 2 || arms[1].Command[2] != "exec b" || arms[0].Ready != tc.ready {
					t.Fatalf("arms %+v, %v", arms, err)
				}
				return
			}
			if exit.Code(err) != exit.CannotJudge || !strings.HasPrefix(err.Error(), tc.refusal) || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error %v, want a refusal starting %q without the password", err, tc.refusal)
			}
		})
	}
}
