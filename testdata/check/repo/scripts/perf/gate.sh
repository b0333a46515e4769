#!/usr/bin/env bash
# The fixture's older gate script: trees from before perf/arm.env derive
# their overrides from gateway_env().
set -euo pipefail
readonly LOG_LEVEL=info

gateway_env() {
	echo "SVC__LOG=$LOG_LEVEL"
	echo "SVC__CACHE__ENABLED=true"
}

main() { echo "usage: gate.sh build|run" >&2; exit 2; }
main "$@"
