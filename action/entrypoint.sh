#!/usr/bin/env bash
# The action's entrypoint: run one perfgate command in the workspace and
# turn its exit code into the `verdict` output. The args input arrives as
# one word; it is split like a shell would, without evaluating it.
set -uo pipefail
cd "${GITHUB_WORKSPACE:-.}"
cmd="$1"; shift
read -r -a args <<<"${1:-}"
perfgate "$cmd" "${args[@]}"
code=$?
case $code in
  0) verdict=pass ;;
  1) verdict=regression ;;
  *) verdict=cannot-judge ;;
esac
[ -n "${GITHUB_OUTPUT:-}" ] && echo "verdict=$verdict" >>"$GITHUB_OUTPUT"
exit $code
