#!/usr/bin/env bash
# Crash loop: the real wayfinder-server on one --data_dir, a client putting,
# editing (UpdateMap) and deleting maps, `kill -9` at random moments,
# restart, many rounds. Every acknowledged PutMap / UpdateMap / DeleteMap
# (the CLI exited 0) must survive: after each restart every map of the
# ledger is there with its version and content (its size, and the length of
# a path whose octile length differs per content), its edits (the number of
# batches since the upload, the live obstacles, and the cell the batches
# patch: blocked or free), deleted maps stay deleted, nothing else is
# listed, and versions of a name only ever go up (a re-created name
# continues above its deleted version). Each batch adds or removes two
# obstacles at once and patches a cell: a batch half applied (torn) shows
# as a state the ledger never had.
# The one operation whose CLI call did not succeed (the kill came in flight)
# may have landed or not; both states are accepted and the ledger follows
# what the server reports.
# Some rounds also kill the server while it is still loading. At the end the
# data directory holds exactly the ledger's maps: no temporary or *.corrupt
# files, a tombstone (NAME.wfgone) for every name deleted last, and edit
# logs (NAME.wflog) only of current maps.
# Bounded in count and in time: ROUNDS rounds, but no new round starts
# once CRASH_BUDGET seconds (default 150) have passed and 5 are done, so a
# machine under load ends well inside ctest's timeout with fewer rounds.
#   usage: crash_loop_test.sh SERVER CLI PROBE EXAMPLES_DIR [ROUNDS]
#   env:   CRASH_SEED (default: the PID) to replay the same random choices;
#          CRASH_BUDGET (seconds).
set -euo pipefail
server_bin=$1 cli_bin=$2 probe_bin=$3 examples_dir=$4 rounds=${5:-20}
seed=${CRASH_SEED:-$$}
budget=${CRASH_BUDGET:-150}
RANDOM=$seed

work=$(mktemp -d)
data="$work/data"
mkdir -p "$data"
server_pid="" client_pid=""
cleanup() {
  for pid in $client_pid $server_pid; do
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL (round $round, seed $seed): $*" >&2
  echo "--- data dir ---" >&2; find "$data" -type f 2>/dev/null | sort >&2 || true
  echo "--- operations of the last round ---" >&2; cat "$work/ops" >&2 2>/dev/null || true
  echo "--- server log (last 60 lines) ---" >&2; tail -n 60 "$work/server.log" >&2 || true
  exit 1
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
addr=""
cli() { timeout 20 "$cli_bin" --server="$addr" --timeout=10 "$@"; }

# --- Contents. c0 is examples/maps/rooms.map; c1..c4 are 20-wide corridors
# with a wall in column 8 from row 1 down to row d, so the query below must
# dodge under it: octile length 13 + 2d(sqrt2 - 1). Each content has its own
# size and its own answer.
names=(n0 n1 n2 n3 n4)
ncontents=5
declare -a content_file content_size content_length
content_file[0]="$examples_dir/rooms.map"
[ -f "${content_file[0]}" ] || { echo "no ${content_file[0]}" >&2; exit 2; }
content_size[0]=$(awk '$1=="width"{w=$2} $1=="height"{h=$2} END{print w" x "h}' "${content_file[0]}")
content_length[0]=13
for d in 1 2 3 4; do
  f="$work/wall$d.map"
  {
    printf 'type octile\nheight %d\nwidth 20\nmap\n' $((d + 3))
    printf '@%.0s' $(seq 20); echo
    for row in $(seq 1 $((d + 1))); do
      if [ "$row" -le "$d" ]; then echo "@.......@..........@"; else echo "@..................@"; fi
    done
    printf '@%.0s' $(seq 20); echo
  } >"$f"
  content_file[d]=$f
  content_size[d]="20 x $((d + 3))"
  content_length[d]=$(awk -v d="$d" 'BEGIN{printf "%.6f", 13 + 2 * d * (sqrt(2) - 1)}')
done
query=(1.5 1.5 14.5 1.5)
# Batches patch the cell (18, 2), inside every content and on no shortest
# path of the query, and add obstacles far outside every map (so that the
# query's answer stays the content's).
patch_x=18 patch_y=2
# A CLI without `update` (a server without UpdateMap) runs the rounds with
# puts and deletes only.
edits=0
cli_help=$("$cli_bin" --help 2>&1 || true)
if grep -q "^  update NAME" <<<"$cli_help"; then edits=1; fi

# --- The ledger: what the server acknowledged. version 0 = absent; top =
# the highest version the name has had (it survives a delete); ned = batches
# since the upload, obs = the live obstacles (sorted, comma-separated), cell
# = the patched cell's value (- if not patched since the upload).
declare -A ver con top ned obs cell
for n in "${names[@]}"; do ver[$n]=0; con[$n]=-; top[$n]=0; ned[$n]=0; obs[$n]=""; cell[$n]=-; done
# The op in flight at the kill, if any.
unk_kind="" unk_name="" unk_content="" unk_batch="" unk_val=""

start_server() {  # [kill_after]: kill -9 that soon after the start instead
  addr="127.0.0.1:$(free_port)"
  "$server_bin" --listen="$addr" --data_dir="$data" --workers=2 >>"$work/server.log" 2>&1 &
  server_pid=$!
  if [ $# -gt 0 ]; then
    sleep "$1"
    kill_server
    return 0
  fi
  for _ in $(seq 1 200); do
    if timeout 5 "$probe_bin" --server="$addr" >/dev/null 2>&1; then return 0; fi
    kill -0 "$server_pid" 2>/dev/null || fail "server exited at start"
    sleep 0.1
  done
  fail "server not SERVING after 20 s"
}

kill_server() {
  kill -KILL "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# Sets obs_ver (0 = absent) and obs_con (content index, - if absent) from
# what the server says about map $1, checking its path answer.
observe() {
  local n=$1 out rc=0 size fp length fpver c
  obs_ned=0 obs_obs="" obs_cell=-
  out=$(cli get "$n" 2>&1) || rc=$?
  if [ "$rc" -eq 1 ] && grep -q "NOT_FOUND" <<<"$out"; then
    obs_ver=0 obs_con=-
    return 0
  fi
  [ "$rc" -eq 0 ] || fail "get $n exited $rc: $out"
  obs_ver=$(echo "$out" | sed -n 's/^version: *\([0-9][0-9]*\)$/\1/p')
  size=$(echo "$out" | sed -n 's/^size: *//p')
  [ -n "$obs_ver" ] || fail "get $n: no version in: $out"
  obs_con=-
  for c in $(seq 0 $((ncontents - 1))); do
    if [ "$size" = "${content_size[c]}" ]; then obs_con=$c; fi
  done
  [ "$obs_con" != - ] || fail "get $n: size \"$size\" is none of the uploaded contents"
  fp=$(cli --graph=grid --smoothing=none find-path "$n" "${query[@]}" 2>&1) \
    || fail "find-path $n: $fp"
  length=$(echo "$fp" | sed -n 's/^FOUND  length \([0-9.e+-]*\) .*/\1/p')
  fpver=$(echo "$fp" | sed -n 's/.* map version \([0-9][0-9]*\) .*/\1/p')
  [ -n "$length" ] || fail "find-path $n: $fp"
  awk -v a="$length" -v b="${content_length[obs_con]}" 'BEGIN{exit !(a - b < 1e-3 && b - a < 1e-3)}' \
    || fail "find-path $n (content c$obs_con): length $length, expected ${content_length[obs_con]}"
  [ "$fpver" = "$obs_ver" ] || fail "find-path $n answered from version $fpver, get says $obs_ver"
  obs_ned=$(echo "$out" | sed -n 's/^edits: *\([0-9][0-9]*\) batches.*/\1/p')
  obs_obs=$(echo "$out" | sed -n 's/^edits: .*obstacles: \(.*\)$/\1/p')
  [ "$obs_obs" != none ] || obs_obs=""
  obs_obs=$(echo "$obs_obs" | tr -d ' ' | tr ',' '\n' | sed '/^$/d' | sort | paste -sd, -)
  [ -n "$obs_ned" ] || obs_ned=0
  [ "$edits" -eq 1 ] || return 0
  # The patched cell: a path to it, or FAILED_PRECONDITION when blocked.
  rc=0
  out=$(cli --graph=grid find-path "$n" 1.5 1.5 "$patch_x.5" "$patch_y.5" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ]; then
    grep -q "is blocked" <<<"$out" || fail "find-path $n to the patched cell: $out"
    obs_cell=255
  else
    obs_cell=1
  fi
}

# A map's state as a string: absent, or version/content/batches/obstacles/
# cell (the cell only when patched since the upload: $6 is the ledger's).
state() {
  if [ "$1" -eq 0 ]; then echo "absent"; return; fi
  local c=$5
  [ "$6" != - ] || c=-
  echo "v$1/c$2/e$3/o[$4]/p$c"
}

# The obstacles after a batch: $1 the set, $2 add or rm, $3 the batch id.
batch_obstacles() {
  if [ "$2" = add ]; then
    printf '%s\n' ${1//,/ } "a$3" "b$3" | sed '/^$/d' | sort | paste -sd, -
  else
    printf '%s\n' ${1//,/ } | { grep -vx -e "a$3" -e "b$3" -e '' || true; } | sort | paste -sd, -
  fi
}

verified=0 resolved_new=0 resolved_old=0
# After a restart: every name is in its acknowledged state, or, for the op
# in flight at the kill, in its new state; then the ledger follows the server.
verify() {
  local n expect alt got listed want
  for n in "${names[@]}"; do
    observe "$n"
    expect=$(state "${ver[$n]}" "${con[$n]}" "${ned[$n]}" "${obs[$n]}" "${cell[$n]}" "${cell[$n]}")
    got=$(state "$obs_ver" "$obs_con" "$obs_ned" "$obs_obs" "$obs_cell" "${cell[$n]}")
    alt="" alt_got="" alt_obs="" alt_ned=0 alt_cell=-
    if [ "$unk_name" = "$n" ]; then
      case $unk_kind in
        put) alt_obs="" alt_ned=0 alt_cell=- ;;
        update)
          alt_obs=$(batch_obstacles "${obs[$n]}" "$unk_content" "$unk_batch")
          alt_ned=$((ned[$n] + 1)) alt_cell=$unk_val ;;
      esac
      case $unk_kind in
        put) alt=$(state $((top[$n] + 1)) "$unk_content" 0 "" - -) ;;
        update)
          alt=$(state $((top[$n] + 1)) "${con[$n]}" "$alt_ned" "$alt_obs" "$alt_cell" "$alt_cell") ;;
        *) alt=absent ;;
      esac
      alt_got=$(state "$obs_ver" "$obs_con" "$obs_ned" "$obs_obs" "$obs_cell" "$alt_cell")
    fi
    if [ "$got" = "$expect" ]; then
      [ -z "$alt" ] || resolved_old=$((resolved_old + 1))
    elif [ -n "$alt" ] && [ "$alt_got" = "$alt" ]; then
      resolved_new=$((resolved_new + 1))
      ver[$n]=$obs_ver con[$n]=$obs_con ned[$n]=$alt_ned obs[$n]=$alt_obs cell[$n]=$alt_cell
      [ "$obs_ver" -eq 0 ] || top[$n]=$obs_ver
    else
      fail "map $n: acknowledged $expect${alt:+ (or $alt, in flight at the kill)}, server has $got"
    fi
    verified=$((verified + 1))
  done
  unk_kind="" unk_name="" unk_content="" unk_batch="" unk_val=""
  listed=$(cli list) || fail "list: $listed"
  listed=$(echo "$listed" | awk 'NR > 1 {print $1, $2}' | sort)
  want=$(for n in "${names[@]}"; do [ "${ver[$n]}" -eq 0 ] || echo "$n ${ver[$n]}"; done | sort)
  [ "$listed" = "$want" ] || fail "list says [$listed], ledger [$want]"
}

# The client: a random mix of new maps, replacements and deletes, one at a
# time. A line goes to $work/ops only once the CLI exited 0 (acknowledged);
# the first failure (the kill) is logged as unknown and ends the loop.
client_loop() {
  local n c out rc v r batch val kind j=0 args
  while true; do
    n=${names[RANDOM % ${#names[@]}]}
    r=$((RANDOM % 100))
    if [ "${ver[$n]}" -ne 0 ] && [ "$r" -lt 15 ]; then
      rc=0; out=$(cli delete "$n" 2>&1) || rc=$?
      if [ "$rc" -ne 0 ]; then echo "unknown delete $n - - $rc - -"; return 0; fi
      echo "ack delete $n - - - - -"
      ver[$n]=0 con[$n]=- ned[$n]=0 obs[$n]="" cell[$n]=-
    elif [ "$edits" -eq 1 ] && [ "${ver[$n]}" -ne 0 ] && [ "$r" -lt 75 ]; then
      # One batch: two obstacles added (or the two of an earlier batch
      # removed) and the cell patched, all or nothing.
      val=$((RANDOM % 2 ? 255 : 1))
      if [ -n "${obs[$n]}" ] && [ $((RANDOM % 100)) -lt 40 ]; then
        kind=rm
        batch=${obs[$n]%%,*}; batch=${batch#a}
        args=("remove:a$batch" "cells:$patch_x,$patch_y,1,1=$val" "remove:b$batch")
      else
        kind=add
        j=$((j + 1)); batch="r${round}x$j"
        args=("rect:a$batch=1000,1000,1,1" "cells:$patch_x,$patch_y,1,1=$val"
              "rect:b$batch=1000,1000,1,1")
      fi
      rc=0; out=$(cli update "$n" "${args[@]}" 2>&1) || rc=$?
      if [ "$rc" -ne 0 ]; then echo "unknown update $n $kind - $rc $batch $val"; return 0; fi
      v=$(echo "$out" | sed -n 's/^version: *\([0-9][0-9]*\)$/\1/p')
      echo "ack update $n $kind ${v:-?} $((top[$n] + 1)) $batch $val"
      top[$n]=$((top[$n] + 1))
      ver[$n]=${top[$n]} ned[$n]=$((ned[$n] + 1)) cell[$n]=$val
      obs[$n]=$(batch_obstacles "${obs[$n]}" "$kind" "$batch")
    else
      c=$((RANDOM % ncontents))
      [ "$c" != "${con[$n]}" ] || c=$(((c + 1) % ncontents))
      rc=0; out=$(cli put-map "${content_file[c]}" --name="$n" 2>&1) || rc=$?
      if [ "$rc" -ne 0 ]; then echo "unknown put $n $c - $rc - -"; return 0; fi
      v=$(echo "$out" | sed -n "s/^stored $n version \([0-9][0-9]*\) .*/\1/p")
      echo "ack put $n $c ${v:-?} $((top[$n] + 1)) - -"
      top[$n]=$((top[$n] + 1))
      ver[$n]=${top[$n]} con[$n]=$c ned[$n]=0 obs[$n]="" cell[$n]=-
    fi
  done
}

# Replays the client's log into the ledger.
apply_ops() {
  local status kind n c v want batch val
  while read -r status kind n c v want batch val; do
    if [ "$status" = unknown ]; then
      unk_kind=$kind unk_name=$n unk_content=$c unk_batch=$batch unk_val=$val
      continue
    fi
    case $kind in
      put)
        [ "$v" = "$want" ] || fail "put $n acknowledged version $v, expected $want"
        ver[$n]=$v con[$n]=$c top[$n]=$v ned[$n]=0 obs[$n]="" cell[$n]=-
        acked_puts=$((acked_puts + 1)) ;;
      update)
        [ "$v" = "$want" ] || fail "update $n acknowledged version $v, expected $want"
        ver[$n]=$v top[$n]=$v ned[$n]=$((ned[$n] + 1)) cell[$n]=$val
        obs[$n]=$(batch_obstacles "${obs[$n]}" "$c" "$batch")
        acked_updates=$((acked_updates + 1)) ;;
      *)
        ver[$n]=0 con[$n]=- ned[$n]=0 obs[$n]="" cell[$n]=-
        acked_deletes=$((acked_deletes + 1)) ;;
    esac
  done <"$work/ops"
}

# Only NAME.wfmap, NAME.wflog and NAME.wfgone files (and version_floor,
# were there enough deleted names) and, right after a kill, temporaries of
# them.
check_files() {  # $1: 1 if temporaries are allowed
  local f bad
  bad=$(find "$data" -type f ! -name '*.wfmap' ! -name '*.wfgone' ! -name version_floor \
          ! -name '*.wflog' ! -name '*.wflog.tmp-*' \
          ! -name '*.wfmap.tmp-*' ! -name '*.wfgone.tmp-*' ! -name 'version_floor.tmp-*' | sort) \
    || fail "cannot list the data dir $data"
  [ -z "$bad" ] || fail "unexpected files in the data dir: $bad"
  if [ "$1" -eq 0 ]; then
    f=$(find "$data" -type f -name '*.tmp-*')
    [ -z "$f" ] || fail "temporary files left after a start: $f"
  fi
}

acked_puts=0 acked_updates=0 acked_deletes=0 mid_write=0 load_kills=0 in_flight=0
started=$SECONDS
round=0
done_rounds=0
start_server
for round in $(seq 1 "$rounds"); do
  if [ "$round" -gt 5 ] && [ $((SECONDS - started)) -ge "$budget" ]; then
    echo "crash loop: time budget of $budget s spent after $((round - 1)) rounds"
    break
  fi
  done_rounds=$round
  verify
  check_files 0

  : >"$work/ops"
  client_loop >>"$work/ops" 2>>"$work/client.err" &
  client_pid=$!
  # Let the client get going (under load a CLI call can take a while), then
  # kill at a random moment 0..700 ms later.
  for _ in $(seq 1 200); do [ -s "$work/ops" ] && break; sleep 0.1; done
  sleep "$(printf '0.%03d' $((RANDOM % 700)))"
  kill_server
  wait "$client_pid" || true
  client_pid=""
  apply_ops
  [ -z "$unk_name" ] || in_flight=$((in_flight + 1))
  if [ -n "$(find "$data" -name '*.tmp-*')" ]; then mid_write=$((mid_write + 1)); fi
  check_files 1

  # One round in four, also kill it while it loads the maps.
  if [ $((RANDOM % 4)) -eq 0 ]; then
    start_server "$(printf '0.%03d' $((RANDOM % 150)))"
    load_kills=$((load_kills + 1))
  fi
  start_server
done

round=final
verify
check_files 0
kill -TERM "$server_pid"
rc=0; wait "$server_pid" || rc=$?
server_pid=""
[ "$rc" -eq 0 ] || fail "server exited with $rc after SIGTERM"
stored=$(find "$data" -type f -name '*.wfmap' -printf '%f\n' | sed 's/\.wfmap$//' | sort)
want=$(for n in "${names[@]}"; do [ "${ver[$n]}" -eq 0 ] || echo "$n"; done | sort)
[ "$stored" = "$want" ] || fail "data dir holds [$stored], ledger [$want]"
gone=$(find "$data" -type f -name '*.wfgone' -printf '%f\n' | sed 's/\.wfgone$//' | sort)
want=$(for n in "${names[@]}"; do
  if [ "${ver[$n]}" -eq 0 ] && [ "${top[$n]}" -ne 0 ]; then echo "$n"; fi
done | sort)
[ "$gone" = "$want" ] || fail "data dir has tombstones [$gone], deleted names [$want]"
logs=$(find "$data" -type f -name '*.wflog' -printf '%f\n' | sed 's/\.wflog$//' | sort)
orphans=$(comm -23 <(echo "$logs") <(echo "$stored") | sed '/^$/d')
[ -z "$orphans" ] || fail "edit logs of maps that are not stored: $orphans"
check_files 0
# Guard against a vacuous pass (a client that never got an op through).
[ $((acked_puts + acked_deletes + acked_updates)) -ge "$done_rounds" ] \
  || fail "only $((acked_puts + acked_deletes + acked_updates)) ops acknowledged in $done_rounds rounds"
[ "$edits" -eq 0 ] || [ "$acked_updates" -gt 0 ] \
  || fail "no UpdateMap acknowledged in $done_rounds rounds"

echo "crash loop: $done_rounds rounds (seed $seed) in $((SECONDS - started)) s:" \
  "$acked_puts puts, $acked_updates updates and $acked_deletes deletes acknowledged," \
  "$verified map checks;" \
  "$in_flight ops cut off by a kill ($resolved_new had landed, $resolved_old had not)," \
  "$mid_write left a temporary file; $load_kills kills while loading"
