#!/usr/bin/env bash
# answers_snapshot.sh BIN OUT: every command's --json answer (stdout, stderr, exit status) on every
# fixture, one file per (fixture, command), written by the pbtxt-scan at BIN. Two snapshots of two
# versions compared with `diff -r` say whether a refactor changed any answer (issue 36: "every answer
# on the fixtures is byte-identical under --json").
#   tools/answers_snapshot.sh /tmp/venv-base/bin/pbtxt-scan /tmp/ans-base
# With a third argument `--stdin`, each fixture that is a file is piped on stdin instead (`cat F |
# BIN CMD ... -`): the stream lanes' answers (issue 38), to compare with the same run of another version.
set -u
bin=$1 out=$2 stdin=${3:-}
mkdir -p "$out"
export PBTXT_SCAN_NO_PROGRESS=1 PBTXT_SCAN_CACHE_DIR
PBTXT_SCAN_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$PBTXT_SCAN_CACHE_DIR"' EXIT
run() {  # run KEY ARGS...: one answer, as the user sees it (stats' timing masked: it differs every run)
  local key=$1 rc a; shift
  if [ "$stdin" = --stdin ]; then  # (the fixture's path, the argument equal to $f, becomes -)
    local args=()
    for a in "$@"; do if [ "$a" = "$f" ]; then args+=(-); else args+=("$a"); fi; done
    cat "$f" | "$bin" "${args[@]}" 2>"$out/$key.err" | sed -E 's/"seconds": [0-9.e+-]+/"seconds": T/' >"$out/$key.out"
    rc=${PIPESTATUS[1]}
  else
    "$bin" "$@" 2>"$out/$key.err" | sed -E 's/"seconds": [0-9.e+-]+/"seconds": T/' >"$out/$key.out"
    rc=${PIPESTATUS[0]}
  fi
  echo "exit $rc" >>"$out/$key.out"
}
n=0
for f in tests/data/graphs/*.pbtxt tests/data/binary/*.pb tests/data/binary/*.meta tests/data/binary/*.gz \
         tests/data/binary/*/saved_model.pb tests/data/events/* tests/data/ge/*_Build.* tests/data/ge/dump_dir \
         tests/data/hostile/*; do
  [ -e "$f" ] || continue
  if [ "$stdin" = --stdin ] && [ ! -f "$f" ]; then continue; fi
  k=$(echo "$f" | tr '/' '_')
  for c in fp bp points stats check; do run "$k.$c" "$c" --json "$f"; done
  run "$k.nodes" nodes --json "$f"
  run "$k.explain" fp --explain "$f"
  name=$(tail -c +1 "$out/$k.fp.out" | python3 -c 'import sys, json
try: print(json.loads(sys.stdin.read().split("\nexit ")[0])["name"] or "")
except Exception: print("")')
  if [ -n "$name" ]; then
    run "$k.show" show --json "$f" "$name"
    run "$k.context" show --json --context 2 "$f" "$name"
  fi
  n=$((n + 1))
done
echo "$n inputs, $(ls "$out" | wc -l) files in $out" >&2
