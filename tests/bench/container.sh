#!/usr/bin/env bash
# container.sh - what the bus and the container cost per record:
#   A: synth -> null                      (source + bus + merge)
#   B: synth -> file (codec none, tmpfs)  (A + block builder + writer)
#   C: file -> null                       (reader + merge + bus)
# write cost = (B - A) / records, read cost = C / records, both in ns.
# CPU time (user+sys), medians of 5 runs.  Target (issue 3): under 50 ns per record.
set -u
PIPE=$BUILD/pipe
N=${BENCH_RECORDS:-2000000}
dir=$(mktemp -d /dev/shm/pipe-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
calc() { awk "BEGIN { printf \"%.6f\\n\", $* }"; }
# CPU seconds (user + sys) of one run: steadier than wall time on a
# shared machine, and what a recorder or reader costs
t() {
	local TIMEFORMAT='%3U %3S' out
	out=$( { time "$@" >/dev/null 2>&1; } 2>&1 ) || { echo "failed: $*" >&2; exit 1; }
	calc "${out% *} + ${out#* }"
}
A=$(for i in 1 2 3 4 5; do t "$PIPE" -q -s "synth:$N" -k null:print=off; done | med)
B=$(for i in 1 2 3 4 5; do rm -f "$dir/x.dat"; t "$PIPE" -q -s "synth:$N" -c none -k "file:$dir/x.dat"; done | med)
C=$(for i in 1 2 3 4 5; do t "$PIPE" -q -s "file:$dir/x.dat" -k null:print=off; done | med)
R=$("$PIPE" info "$dir/x.dat" | sed -n 's/^records: //p')
printf 'records: %s (synth:%s, 2 CPUs, codec none, tmpfs)\n' "$R" "$N"
printf '%-34s %8.3f s  %8.1f Mrec/s\n' "A synth -> null" "$A" "$(calc "$R / $A / 1e6")"
printf '%-34s %8.3f s  %8.1f Mrec/s\n' "B synth -> file" "$B" "$(calc "$R / $B / 1e6")"
printf '%-34s %8.3f s  %8.1f Mrec/s\n' "C file -> null" "$C" "$(calc "$R / $C / 1e6")"
printf 'write cost (B-A)/rec: %.1f ns   read cost C/rec: %.1f ns   bus+merge A/rec: %.1f ns\n' \
	"$(calc "($B - $A) * 1e9 / $R")" "$(calc "$C * 1e9 / $R")" "$(calc "$A * 1e9 / $R")"
