// wftool lints and evaluates the workflows for internal/actiontest. It is a
// module of its own because actionlint v1.7.12 needs go.yaml.in/yaml/v4
// v4.0.0-rc.3, and compose-go v2.16.2 holds the main module at rc.4, whose
// parser errors actionlint cannot compile against.
module github.com/perfgate/perfgate/internal/actiontest/testdata/wftool

go 1.26

require github.com/rhysd/actionlint v1.7.12

require (
	github.com/bmatcuk/doublestar/v4 v4.10.0 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mattn/go-runewidth v0.0.21 // indirect
	github.com/mattn/go-shellwords v1.0.12 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	go.yaml.in/yaml/v4 v4.0.0-rc.3 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.42.0 // indirect
)
