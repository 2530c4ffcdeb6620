#!/bin/bash
# usage: bench/ab_ingest.sh ROUNDS A_ROOT B_ROOT FILE...
# Whole CLI ingests of each FILE by two checkouts (A and B), alternating, the order swapped every round, each into
# a fresh data dir with MALLOC_TRIM_THRESHOLD_=0 (as the launcher sets it). Prints per run: wall s, user+sys CPU s,
# sys s, peak RSS (MB, from /usr/bin/time), minor page faults (the whole run's, children included) and the 1-minute
# load. For A/B pairs on a shared 2-core machine: compare pairs taken in the same minutes, not runs from different
# hours.
R=$1; A=$2; B=$3; shift 3
run() { # root label file
  local d; d=$(mktemp -d /tmp/abtrim.XXXXXX)
  local out
  out=$( { cd "$1" && MALLOC_TRIM_THRESHOLD_=0 /usr/bin/time -f "%e %U %S %M %R" node bin/stallscope.mjs ingest "$3" --data-dir "$d" >/dev/null 2>/tmp/abtrim.err.$$; } 2>&1 )
  local t; t=$(tail -1 /tmp/abtrim.err.$$)
  read -r e u s m r <<<"$t"
  printf "%-28s %s wall=%s cpu=%.2f sys=%s peak=%dMB minflt=%s load=%s\n" "$(basename "$3")" "$2" "$e" "$(echo "$u + $s" | bc)" "$s" "$((m/1024))" "$r" "$(cut -d' ' -f1 /proc/loadavg)"
  rm -rf "$d" /tmp/abtrim.err.$$
}
for f in "$@"; do
  for ((i=0;i<R;i++)); do
    if (( i % 2 == 0 )); then run "$A" A "$f"; run "$B" B "$f"; else run "$B" B "$f"; run "$A" A "$f"; fi
  done
done
