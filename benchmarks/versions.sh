#!/usr/bin/env bash
# Two installed versions of pbtxt-scan side by side, interleaved (base, now, base, now...), on the
# 1 GB inputs of the generator: fp and bp (or the commands CMDS names), a fresh cache each run, under
# /usr/bin/time. `show` looks up the base's bp answer (a late node); `report` writes its page to stdout.
#
#   python -m venv /tmp/base && /tmp/base/bin/pip install -q git+file://$PWD@<commit>   # or a worktree
#   python -m venv /tmp/now && /tmp/now/bin/pip install -q .
#   for k in dense feed queue const; do python -m benchmarks.generate $k --size 1GB -o $DIR/$k.pbtxt; done
#   python -m benchmarks.generate binary --size 1GB -o $DIR/binary.pb
#   bash benchmarks/versions.sh /tmp/base/bin/pbtxt-scan /tmp/now/bin/pbtxt-scan $DIR 5 > times.tsv
#   python benchmarks/versions_table.py times.tsv      # medians and ratios, the first (cold) round left out
#   CMDS="fp bp stats check nodes show report" INPUTS="dense binary" bash benchmarks/versions.sh ...
#   CMDS="check:1 check:2 stats:1 stats:2" ...     # CMD:N runs CMD ... --jobs N
#
# One row a run: round, input, command, version, "wall user sys maxrss_kb", the answer (its md5 when
# it is longer than a line).
set -u
base=$1 now=$2 dir=$3 rounds=${4:-5}
cmds=${CMDS:-fp bp} inputs=${INPUTS:-dense feed queue const binary}
for r in $(seq 1 "$rounds"); do
  for f in $inputs; do
    path=$dir/$f.pbtxt; [ "$f" = binary ] && path=$dir/$f.pb
    [ -e "$path" ] || continue
    late=""
    for cmd in $cmds; do
      name=${cmd%%:*}
      args=("$name" "$path")
      if [ "$name" = show ]; then
        [ -n "$late" ] || late=$(PBTXT_SCAN_NO_PROGRESS=1 "$base" bp "$path" 2>/dev/null)
        args=(show "$path" "$late")
      elif [ "$name" = report ]; then
        args=(report "$path" -o -)
      fi
      [ "$name" = "$cmd" ] || args+=(--jobs "${cmd#*:}")
      for v in base now; do
        bin=$base; [ "$v" = now ] && bin=$now
        cache=$(mktemp -d)
        t=$(mktemp) out=$(mktemp)
        PBTXT_SCAN_CACHE_DIR=$cache PBTXT_SCAN_NO_PROGRESS=1 /usr/bin/time -o "$t" -f "%e %U %S %M" "$bin" "${args[@]}" >"$out" 2>/dev/null
        if [ "$(wc -l <"$out")" -le 1 ]; then ans=$(cat "$out"); else ans="md5 $(md5sum <"$out" | cut -c1-12)"; fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$f" "$cmd" "$v" "$(tail -1 "$t")" "$ans"
        rm -rf "$cache" "$t" "$out"
      done
    done
  done
done
