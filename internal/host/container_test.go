package host

import (
	"slices"
	"strings"
	"testing"
)

const selfID = "4f3c2b1a0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a"

func TestParseContainerID(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a container", "636 620 8:1 /var/lib/docker/containers/" + selfID + "/resolv.conf /etc/resolv.conf rw,relatime - ext4 /dev/sda1 rw\n" +
			"637 620 8:1 /var/lib/docker/containers/" + selfID + "/hostname /etc/hostname rw,relatime - ext4 /dev/sda1 rw\n", selfID},
		{"a host", "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n25 22 0:5 / /dev rw - devtmpfs udev rw\n", ""},
		{"another container's log is not ours", "30 22 8:1 /var/lib/docker/containers/" + selfID + "/" + selfID + "-json.log /log rw - ext4 /dev/sda1 rw\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseContainerID(strings.NewReader(tc.in)); got != tc.want {
				t.Errorf("ParseContainerID = %q, want %q", got, tc.want)
			}
		})
	}
}

// The mounts the runner's container action handler gives the action.
var runnerInspect = `[{"Id":"` + selfID + `","Image":"sha256:abc","HostConfig":{"NetworkMode":"github_network_53269bd5"},
"Mounts":[
 {"Type":"bind","Source":"/var/run/docker.sock","Destination":"/var/run/docker.sock","RW":true},
 {"Type":"bind","Source":"/home/runner/work/repo/repo","Destination":"/github/workspace","RW":true},
 {"Type":"bind","Source":"/home/runner/work/_temp/_github_home","Destination":"/github/home","RW":true},
 {"Type":"bind","Source":"/home/runner/work/_temp/_github_workflow","Destination":"/github/workflow","RW":true},
 {"Type":"bind","Source":"/home/runner/work/_temp/_runner_file_commands","Destination":"/github/file_commands","RW":true},
 {"Type":"bind","Source":"/home/runner/work/_temp","Destination":"/github/runner_temp","RW":true},
 {"Type":"bind","Source":"/usr/share/zoneinfo","Destination":"/zoneinfo","RW":false},
 {"Type":"volume","Name":"cache","Source":"/var/lib/docker/volumes/cache/_data","Destination":"/cache","RW":false}
]}]`

func TestHostPath(t *testing.T) {
	c, err := parseInspect([]byte(runnerInspect))
	if err != nil {
		t.Fatal(err)
	}
	if c.NetworkMode != "github_network_53269bd5" || c.Image != "sha256:abc" || len(c.Mounts) != 8 {
		t.Fatalf("parsed %+v", c)
	}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"/github/workspace", "/home/runner/work/repo/repo", true},
		{"/github/workspace/target/perf-run", "/home/runner/work/repo/repo/target/perf-run", true},
		{"/github/file_commands/set_output_1", "/home/runner/work/_temp/_runner_file_commands/set_output_1", true},
		{"/github/workspacex", "", false},
		{"/cache/x", "", false}, // a volume has no host path to hand the engine
		{"/usr/bin", "", false},
	}
	for _, tc := range tests {
		got, ok := c.HostPath(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("HostPath(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSiblingCommand(t *testing.T) {
	c, err := parseInspect([]byte(runnerInspect))
	if err != nil {
		t.Fatal(err)
	}
	s := &Sibling{Parent: c, Name: "perfgate-4f3c2b1a0d9e", Label: "42-1-attempt-1", Args: []string{"run", "--pairs 2"},
		Dir: "/github/workspace",
		Env: []string{"GITHUB_OUTPUT=/github/file_commands/set_output_1", "INPUT_ARGS=--pairs 2", "HOSTNAME=4f3c2b1a0d9e", "SECRET=hunter2", "HOME=/github/home"}}
	args, env := s.Command()
	line := strings.Join(args, " ")
	for _, want := range []string{
		"run --rm --name perfgate-4f3c2b1a0d9e --network host",
		"--label perfgate.sibling=42-1-attempt-1", "--label perfgate.parent=" + selfID,
		"-v /home/runner/work/repo/repo:/github/workspace ", "-v /home/runner/work/repo/repo:/home/runner/work/repo/repo ",
		"-v /var/run/docker.sock:/var/run/docker.sock ", "-v cache:/cache:ro ",
		"--workdir /home/runner/work/repo/repo ",
		"-e GITHUB_OUTPUT ", "-e SECRET ", "-e " + SiblingEnv + " ", "-e " + ParentEnv + " ",
		"sha256:abc run --pairs 2",
	} {
		if !strings.Contains(line+" ", want) {
			t.Errorf("docker %s\nlacks %q", line, want)
		}
	}
	if strings.Contains(line, "hunter2") || strings.Contains(line, "HOSTNAME") {
		t.Errorf("a value or the parent's hostname is on the command line: %s", line)
	}
	if !strings.Contains(line, "-v /usr/share/zoneinfo:/zoneinfo:ro ") || strings.Contains(line, "/usr/share/zoneinfo:/usr/share/zoneinfo") {
		t.Errorf("a host system folder must be mounted at the parent's path only: %s", line)
	}
	if n := strings.Count(line, "/var/run/docker.sock:/var/run/docker.sock"); n != 1 {
		t.Errorf("the socket is mounted %d times", n)
	}
	for _, want := range []string{
		"GITHUB_OUTPUT=/home/runner/work/_temp/_runner_file_commands/set_output_1",
		"HOME=/home/runner/work/_temp/_github_home", "INPUT_ARGS=--pairs 2", "SECRET=hunter2",
		SiblingEnv + "=1", ParentEnv + "=" + selfID,
	} {
		if !slices.Contains(env, want) {
			t.Errorf("the CLI's environment lacks %q: %q", want, env)
		}
	}
}
