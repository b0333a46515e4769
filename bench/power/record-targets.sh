#!/bin/bash
# Records gates of the bundled targets for bench/power's resampling (README,
# "The bundled targets, judged"): per round, A/A on every target, two 10 %
# heads of the cpu target, a 10 % head of exp at the shipped default profile,
# and the tail target with 20 s windows. Run from the repository's root:
#   bash bench/power/record-targets.sh FIRST_ROUND LAST_ROUND OUT.jsonl
# Touch OUT.stop to end it after the current round.
set -u
first=${1:-150} last=${2:-170} out=${3:-target/power/targets.jsonl}
mkdir -p "$(dirname "$out")"
bin=$(mktemp -d)/power
go build -o "$bin" ./bench/power || exit 1
gate() { # round target scenarios [flags]
  local r=$1 t=$2 sc=$3; shift 3
  echo "== round $r target $t $sc $* $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  "$bin" --profile rec "$@" --target "$t" --runs 1 --first-run "$r" --scenarios "$sc" --max-load 1000 --out "$out" 2>&1 | tail -2
}
for r in $(seq "$first" "$last"); do
  [ -e "$out.stop" ] && break
  gate "$r" cpu aa,slow10
  gate "$r" exp aa,slow10 --warmup 2s --measure 10s
  gate $((r + 500)) cpu slow10
  gate "$r" bimodal aa
  gate "$r" tail aa --measure 20s
done
