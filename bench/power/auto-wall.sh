#!/bin/bash
# Wall time of a default-profile gate (8 x (2 s + 10 s) at 30/s, the 60 s
# idle phase: a fixed gate's before its pairs, an adaptive gate's after)
# with fixed 8 pairs against pairs = "auto" (min 4, max 16),
# each over the example service with a head twice as slow: the issue 22
# goal "a clear 2x regression decided in at most half the fixed gate's
# time". Run from the repository's root on a quiet machine:
#   bash bench/power/auto-wall.sh [OUT_DIR]
set -eu
out=${1:-target/power/auto-wall}
mkdir -p "$out"
bin=$(mktemp -d)
go build -o "$bin/perfgate" ./cmd/perfgate
go build -o "$bin/exampled" ./internal/exampleservice/cmd/exampled
groups='[[group]]
name = "hello"
path = "/hello"
expect = 200

[[group]]
name = "item"
path = "/items/7"
expect = 200
'
printf '%s' "$groups" >"$out/fixed.toml"
printf '%s\n[ab]\npairs = "auto"\n' "$groups" >"$out/auto.toml"
for kind in fixed auto; do
  start=$(date +%s%N)
  rc=0
  "$bin/perfgate" ab --plan "$out/$kind.toml" --out "$out/$kind" --ready /healthz \
    --base-cmd "$bin/exampled --addr 127.0.0.1:@PORT@ --latency 5ms" \
    --head-cmd "$bin/exampled --addr 127.0.0.1:@PORT@ --latency 5ms --latency-factor 2" >"$out/$kind.log" 2>&1 || rc=$?
  end=$(date +%s%N)
  pairs=$(grep -c '^pair [0-9]*/[0-9]*: base p50' "$out/$kind.log" || true)
  printf '%s: exit %d, %d pairs, wall %.1f s\n' "$kind" "$rc" "$pairs" "$(((end - start) / 1000000))e-3"
done
grep -h '^adaptive pairs' "$out/auto.log" || true
# An adaptive gate's idle phase follows its pairs and is skipped when they
# already fail the gate; the fixed gate's came first.
grep -h '^idle phase not run' "$out/auto.log" || true
rm -rf "$bin"
