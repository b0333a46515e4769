#!/bin/bash
# Records A/A gates of the four bundled targets at the default profile
# (plan.Default: 8 x (2 s + 10 s) at 30/s), with each phase's latency
# histograms, for bench/power's resampling (README, "At the default
# profile, with histograms"). One round is one A/A gate per target, about
# 7 minutes. Run from the repository's root:
#   bash bench/power/record-default.sh FIRST_ROUND LAST_ROUND OUT.jsonl
# Touch OUT.stop to end it after the current gate.
set -u
first=${1:-1} last=${2:-5} out=${3:-target/power/default.jsonl}
mkdir -p "$(dirname "$out")"
bin=$(mktemp -d)/power
go build -o "$bin" ./bench/power || exit 1
for r in $(seq "$first" "$last"); do
  for t in exp cpu bimodal tail; do
    [ -e "$out.stop" ] && exit 0
    echo "== round $r target $t $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    "$bin" --profile default --target "$t" --runs 1 --first-run "$r" --scenarios aa --max-wait 2m --out "$out" 2>&1 | tail -2
  done
done
