package exampleservice

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestConfigRefusals(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown flag", []string{"--bogus"}, nil, "flag provided but not defined"},
		{"argument", []string{"extra"}, nil, `unexpected argument "extra"`},
		{"negative latency", []string{"--latency", "-1ms"}, nil, "--latency -1ms is negative"},
		{"factor below 1", []string{"--latency-factor", "0.9"}, nil, "below 1"},
		{"negative wait", []string{"--wait-mean", "-1ms"}, nil, "must not be negative"},
		{"slow share over 1", []string{"--slow-share", "1.5"}, nil, "not a fraction between 0 and 1"},
		{"negative cpu work", []string{"--cpu-work", "-1"}, nil, "must not be negative"},
		{"huge leak", []string{"--leak", "2000000000"}, nil, "bounded to 1 GiB"},
		{"zero store writes", []string{"--store-writes", "0"}, nil, "commits at least once"},
		{"idle busy over 1", []string{"--idle-busy", "1.5"}, nil, "between 0 and 1"},
		{"idle commits -2", []string{"--idle-commits", "-2", "--store", "postgres://x@127.0.0.1/db"}, nil, "-1 for a poller"},
		{"idle commits without store", []string{"--idle-commits", "5"}, nil, "needs a store"},
		{"two stores", []string{"--store", "postgres://x@127.0.0.1/db", "--store-file", "f"}, nil, "not both"},
		{"stall too long", []string{"--stall", "3s"}, nil, "shorter than --stall-every"},
		{"bad override", []string{"--status-override", "hello=500"}, nil, "is not PATH=CODE"},
		{"bad override code", []string{"--status-override", "/hello=99"}, nil, "200 to 599"},
		{"missing store file", []string{"--store-file", "/nonexistent/store.dsn"}, nil, "reading the store's connection string"},
		{"bad DSN", []string{"--store", "postgres://a b@::::"}, nil, "does not parse"},
		{"bad env knob", nil, map[string]string{"EXAMPLED_CPU_WORK": "lots"}, "EXAMPLED_CPU_WORK"},
		{"busy addr", []string{"--addr", "256.0.0.1:1"}, nil, "listening on --addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			err := Main(context.Background(), tt.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Main(%q) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}

// A variable of the prefix that names no knob stops the service, named
// with its near miss; its value, which may be a connection string, is
// never quoted.
func TestUnknownEnvKnobRefused(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"typo", map[string]string{"EXAMPLED_LATENCYY": "4ms"},
			"environment variable EXAMPLED_LATENCYY names no knob; did you mean EXAMPLED_LATENCY?"},
		{"secret value", map[string]string{"EXAMPLED_STORE_DSN": "postgres://u:hunter2@db/x"},
			"EXAMPLED_STORE_DSN names no knob"},
		{"two, far from any knob", map[string]string{"EXAMPLED_ZZZZZZ": "v1x", "EXAMPLED_QQQQQQ": "v2x"},
			"environment variables EXAMPLED_QQQQQQ, EXAMPLED_ZZZZZZ name no knob; run with -h for the knobs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := parseConfig(nil, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("parseConfig = %v, want an error containing %q", err, tt.want)
			}
			for _, v := range tt.env {
				if strings.Contains(err.Error(), v) {
					t.Errorf("the refusal quotes the value %q: %v", v, err)
				}
			}
		})
	}
}

func TestHelp(t *testing.T) {
	var out strings.Builder
	err := Main(context.Background(), []string{"-h"}, &out, &out)
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(out.String(), "-cpu-work") {
		t.Fatalf("Main(-h) = %v with %q, want flag.ErrHelp and the knobs", err, out.String())
	}
}

func TestEnvSetsKnobsAndFlagsWin(t *testing.T) {
	t.Setenv("EXAMPLED_LATENCY", "7ms")
	t.Setenv("EXAMPLED_CPU_WORK", "11")
	c, err := parseConfig([]string{"--cpu-work", "22"}, io.Discard)
	if err != nil {
		t.Fatalf("parseConfig: %v", err)
	}
	if c.latency.String() != "7ms" || c.cpuWork != 22 {
		t.Fatalf("latency %s cpu-work %d, want 7ms from the environment and 22 from the flag", c.latency, c.cpuWork)
	}
}
