package contract

import "path/filepath"

// DefaultTarget is the target folder when no flag names another:
// `perfgate prepare` writes the built arms there and `perfgate run` reads
// them from it.
const DefaultTarget = "target"

// The names inside the target folder besides the arms (BaseArm, HeadArm,
// and TreeDir inside an arm).
const (
	// RunDirName is the run's own folder: its report, summary, logs, the
	// arms' work directories and rendered configs.
	RunDirName = "perf-run"
	// BaseNote is the file in the base arm's folder naming the base
	// commit and why it was chosen (package base reads and writes it).
	BaseNote = "base.md"
	// ServicesDir is the folder in the run's folder with the resolved
	// compose files and the services' logs.
	ServicesDir = "services"
)

// Target is the layout of the target folder ("target" unless a flag says
// otherwise), so every command names its parts the same way:
//
//	target/perf-base/         the base arm (base.md, tree/, its build)
//	target/perf-head/         the head arm
//	target/perf-run/          the run (RunDir)
type Target string

// Base is the base arm's folder.
func (t Target) Base() string { return filepath.Join(string(t), BaseArm) }

// Head is the head arm's folder.
func (t Target) Head() string { return filepath.Join(string(t), HeadArm) }

// BaseNote is the base arm's base.md.
func (t Target) BaseNote() string { return filepath.Join(t.Base(), BaseNote) }

// BaseTree is the base's exported tree, inside its arm.
func (t Target) BaseTree() string { return filepath.Join(t.Base(), TreeDir) }

// Run is the run's folder when no flag names another.
func (t Target) Run() RunDir { return RunDir(filepath.Join(string(t), RunDirName)) }

// RunDir is the layout of a run's folder (target/perf-run unless --out
// names another):
//
//	perf-run/base/, head/, variant/   each arm's work directory (@DIR@)
//	perf-run/services/                compose files and services' logs
type RunDir string

// Arm is the work directory of the arm with this role ("base", "head",
// "variant"): the @DIR@ its command, env and config are given.
func (r RunDir) Arm(role string) string { return filepath.Join(string(r), role) }

// Services is the folder of the resolved compose files and the services'
// logs.
func (r RunDir) Services() string { return filepath.Join(string(r), ServicesDir) }
