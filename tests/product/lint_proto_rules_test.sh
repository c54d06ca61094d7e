#!/usr/bin/env bash
# The proto linter reports each rule it has: run it on a proto that breaks
# every rule once (lint_proto_bad.proto) and check each violation is named
# and the exit status is 1.
set -u
lint=$1 bad=$2
out=$(python3 "$lint" --no-history "$bad"); rc=$?
fail=0
expect() {
  if ! grep -qF -- "$1" <<<"$out"; then echo "not reported: $1"; fail=1; fi
}
expect "naming: message bad_message: not PascalCase"
expect "naming: field bad_message.BadField: not lower_snake_case"
expect "comments: field bad_message.uncommented: no comment"
expect "numbers: bad_message.twice: number 2 already used"
expect "numbers: GoodMessage.in_reserved: number 7 is reserved"
expect "numbers: GoodMessage.old_name: the name is reserved"
expect "naming: enum Colour: zero value UNKNOWN, expected COLOUR_UNSPECIFIED"
expect "naming: enum value Colour.Red: not UPPER_SNAKE_CASE"
expect "comments: service Uncommented: no comment"
expect "naming: rpc Uncommented.do_thing: not PascalCase"
if [[ $rc -ne 1 ]]; then echo "exit status $rc, expected 1"; fail=1; fi

# Removed and renamed fields against git history, in a throwaway repository.
repo=$(mktemp -d); trap 'rm -rf "$repo"' EXIT
git -C "$repo" init -q && git -C "$repo" config user.email t@t && git -C "$repo" config user.name t
v() {  # a version of the proto: $1 = the body of message M
  printf 'syntax = "proto3";\n// M.\nmessage M {\n%b}\n' "$1" > "$repo/m.proto"
}
v '  // A.\n  string a = 1;\n  // B.\n  string b = 2;\n'
git -C "$repo" add m.proto && git -C "$repo" commit -qm one
v '  // A.\n  string a = 1;\n'
out=$(python3 "$lint" "$repo/m.proto")
grep -qF 'reserved: M.b = 2' <<<"$out" || { echo "removed field not reported: $out"; fail=1; }
v '  // A.\n  string a = 1;\n  reserved 2;\n  reserved "b";\n'
python3 "$lint" "$repo/m.proto" >/dev/null || { echo "reserved removal reported"; fail=1; }
v '  // A.\n  string a = 1;\n  // B renamed.\n  string c = 2;\n'
out=$(python3 "$lint" "$repo/m.proto")
grep -qF 'number 2 was b' <<<"$out" || { echo "rename not reported: $out"; fail=1; }
if [[ $fail -ne 0 ]]; then exit 1; fi
echo "every rule reported"
