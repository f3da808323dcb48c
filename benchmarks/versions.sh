#!/usr/bin/env bash
# Two installed versions of pbtxt-scan side by side, interleaved (base, now, base, now...), on the
# 1 GB inputs of the generator: fp and bp, a fresh bp cache each run, under /usr/bin/time.
#
#   python -m venv /tmp/base && /tmp/base/bin/pip install -q git+file://$PWD@<commit>   # or a worktree
#   python -m venv /tmp/now && /tmp/now/bin/pip install -q .
#   for k in dense feed queue const; do python -m benchmarks.generate $k --size 1GB -o $DIR/$k.pbtxt; done
#   python -m benchmarks.generate binary --size 1GB -o $DIR/binary.pb
#   bash benchmarks/versions.sh /tmp/base/bin/pbtxt-scan /tmp/now/bin/pbtxt-scan $DIR 5 > times.tsv
#   python benchmarks/versions_table.py times.tsv      # medians and ratios, the first (cold) round left out
#
# One row a run: round, input, command, version, "wall user sys maxrss_kb", the answer.
set -u
base=$1 now=$2 dir=$3 rounds=${4:-5}
for r in $(seq 1 "$rounds"); do
  for f in dense feed queue const binary; do
    path=$dir/$f.pbtxt; [ "$f" = binary ] && path=$dir/$f.pb
    [ -e "$path" ] || continue
    for cmd in fp bp; do
      for v in base now; do
        bin=$base; [ "$v" = now ] && bin=$now
        cache=$(mktemp -d)
        t=$(mktemp)
        ans=$(PBTXT_SCAN_CACHE_DIR=$cache PBTXT_SCAN_NO_PROGRESS=1 /usr/bin/time -o "$t" -f "%e %U %S %M" "$bin" "$cmd" "$path" 2>/dev/null)
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$f" "$cmd" "$v" "$(cat "$t")" "$ans"
        rm -rf "$cache" "$t"
      done
    done
  done
done
