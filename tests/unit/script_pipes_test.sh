#!/usr/bin/env bash
# Under `set -o pipefail`, `producer | grep -q pattern` fails at random: grep
# exits at its first match, the producer still writing gets SIGPIPE, and the
# pipeline's status is the producer's 141 even though the pattern was found
# (a flaky e2e_cli_server once). `| head` does the same. No script may
# use these forms; match a string with `grep -q pattern <<<"$text"` or
# `[[ $text == *pattern* ]]`, take the first line with `sed -n 1p`.
set -euo pipefail
src=$1
scripts=()
while IFS= read -r -d '' f; do scripts+=("$f"); done < <(
  find "$src" \( -name 'build*' -o -name '.git' \) -prune -o \
    \( -name '*.sh' -o -path "$src/.ci/run" \) -type f -print0)
[ ${#scripts[@]} -gt 0 ] || { echo "no scripts found under $src" >&2; exit 1; }
# A pipe into grep with -q/--quiet/--silent/-m (anywhere among its options),
# or into head.
bad='\|[[:space:]]*(grep|egrep|fgrep)([[:space:]]+-[A-Za-z]*[qm][A-Za-z]*|[[:space:]]+--(quiet|silent|max-count))|\|[[:space:]]*head([[:space:]]|$)'
# Comment lines are left out, and so is this script, which spells the forms.
self=$(basename "$0")
hits=$(grep -nE "$bad" "${scripts[@]}" | grep -vE '^[^:]*:[0-9]+:[[:space:]]*#' |
  grep -v "/$self:" || true)
if [ -n "$hits" ]; then
  echo "pipes that can die of SIGPIPE under pipefail (use grep -q ... <<<\"\$text\" or sed -n 1p):" >&2
  echo "$hits" >&2
  exit 1
fi
echo "no '| grep -q' or '| head' in ${#scripts[@]} scripts"
