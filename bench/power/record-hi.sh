#!/bin/bash
# Records A/A gates for bench/power's resampling (README, "Answers a
# phase", third session): per round, the exp and tail targets at the hi
# profile (8 x (1 s + 7.5 s) at 200/s, 1,500 answers a phase), and, while
# their recorded A/A gates number fewer than 20, the cpu and bimodal targets
# at rec (8 x (1 s + 5 s) at 30/s). Run from the repository's root:
#   bash bench/power/record-hi.sh FIRST_ROUND LAST_ROUND OUT.jsonl [REC_ROUNDS]
# REC_ROUNDS (default 10): how many of the rounds also record cpu and
# bimodal. Touch OUT.stop to end it after the current round.
set -u
first=${1:-300} last=${2:-319} out=${3:-target/power/hi.jsonl} recRounds=${4:-10}
mkdir -p "$(dirname "$out")"
bin=$(mktemp -d)/power
go build -o "$bin" ./bench/power || exit 1
gate() { # round profile target scenarios [flags]
  local r=$1 p=$2 t=$3 sc=$4; shift 4
  echo "== round $r $p target $t $sc $* $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  "$bin" --profile "$p" "$@" --target "$t" --runs 1 --first-run "$r" --scenarios "$sc" --max-load 1000 --out "$out" 2>&1 | tail -2
}
for r in $(seq "$first" "$last"); do
  [ -e "$out.stop" ] && break
  gate "$r" hi exp aa
  gate "$r" hi tail aa
  if [ $((r - first)) -lt "$recRounds" ]; then
    gate "$r" rec cpu aa
    gate "$r" rec bimodal aa
  fi
done
