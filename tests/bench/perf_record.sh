#!/usr/bin/env bash
# perf_record.sh - the live recorder's own cost, pipe against perf (issue 5).
# The whole system is recorded while the bundled burn workload, started
# separately, keeps every CPU busy; in turn, for SECS in 10 and 30:
#   pipe -q -s perf:event=cpu-clock,freq=4000,pages=128,duration=SECS \
#       -c zstd:1 -k file:p.dat
#   perf record -q -z --compression-level=1 -g -a -e cpu-clock -F 4000 \
#       -m 128 -o f.perf -- sleep SECS
# (same event, frequency, callchains, ring size and zstd level), RUNS times
# each (default 5), and prints medians of the recorder's CPU time
# (user+sys, from getrusage of the recorder alone), peak RSS, samples and
# lost.  From the 10 s and 30 s medians: CPU per sample (the slope) and
# fixed cost (the intercept).  Targets: pipe's CPU per sample at most 0.7x
# perf's; no loss at 4 kHz on every CPU with callchains.  Two more rows:
# `nodict` is pipe with -c zstd:1,dict=off (no trained dictionary, as
# perf -z has none), `null` is pipe with -k null: the source and the bus
# alone, no file, to show what the writer (transform, codec) costs.
# Knobs: BENCH_RUNS, BENCH_SECS ("10 30"), BENCH_FREQ (4000).
set -u
PIPE=$BUILD/pipe
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$BUILD/tests/workloads/burn
RUNS=${BENCH_RUNS:-5}
SECS=${BENCH_SECS:-10 30}
FREQ=${BENCH_FREQ:-4000}
NCPU=$(getconf _NPROCESSORS_ONLN)
dir=$(mktemp -d /tmp/pipe-rec.XXXXXX)
wpid=
trap '[ -n "$wpid" ] && kill $wpid 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "perf_record.sh: $*" >&2; exit 1; }

[ -x "$W" ] || fail "no workload '$W' (make $BUILD/tests/workloads.stamp)"
command -v perf >/dev/null || fail "perf is not installed"
"$PIPE" -q -s perf:event=cpu-clock,duration=10ms -k null >/dev/null 2>&1 ||
	fail "pipe cannot record the whole system here"

# measure OUT CMD...: run CMD, write "cpu_seconds max_rss_kib status" to
# OUT, its standard error to OUT.err
measure() {
	local out=$1; shift
	python3 - "$out" "$@" <<'PY'
import resource, subprocess, sys
r = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL,
                   stderr=open(sys.argv[1] + ".err", "w"))
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.4f %d %d\n" % (u.ru_utime + u.ru_stime,
                                               u.ru_maxrss, r.returncode))
PY
}

# perf's sample and lost counts, from `perf report --stats` on a copy
# fixed for perf 6.1 on this kernel (docs/performance.md)
perf_counts() {
	local f=$1 s l
	python3 "$TOP/tests/tools/perfdata-fix-mmap2.py" "$f" "$f.fixed" \
		>/dev/null 2>&1 || cp "$f" "$f.fixed"
	perf report -i "$f.fixed" --stats > "$f.stats" 2>/dev/null
	s=$(awk '/ SAMPLE events:/ { print $3; exit }' "$f.stats")
	l=$(awk '/ LOST_SAMPLES events:/ { print $3; exit }' "$f.stats")
	[ -z "$l" ] && l=$(awk '/ LOST events:/ { print $3; exit }' "$f.stats")
	echo "${s:-0} ${l:-0}"
	rm -f "$f.fixed" "$f.stats"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

"$W" 0 "$NCPU" & wpid=$!
echo "system-wide, cpu-clock $FREQ Hz, -g, $NCPU CPUs busy with burn; medians of $RUNS"
printf '%-6s %4s %9s %8s %9s %7s\n' rec secs cpu_s rss_MiB samples lost
for secs in $SECS; do
	for who in pipe nodict perf null; do
		: > "$dir/$who.$secs"
		for i in $(seq "$RUNS"); do
			rm -f "$dir/p.dat" "$dir/f.perf"
			if [ $who = pipe ] || [ $who = nodict ]; then
				codec=zstd:1
				[ $who = nodict ] && codec=zstd:1,dict=off
				measure "$dir/m" "$PIPE" -q -s "perf:event=cpu-clock,freq=$FREQ,pages=128,duration=${secs}s" \
					-c "$codec" -k "file:$dir/p.dat"
				n=$("$PIPE" info "$dir/p.dat" | sed -n 's/^samples: //p')
				l=$("$PIPE" info "$dir/p.dat" | sed -n 's/^lost: //p')
			elif [ $who = null ]; then
				measure "$dir/m" "$PIPE" -s "perf:event=cpu-clock,freq=$FREQ,pages=128,duration=${secs}s" \
					-k null:print=off
				read -r n l <<< "$(sed -n 's/^pipe: \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' "$dir/m.err")"
			else
				measure "$dir/m" perf record -q -z --compression-level=1 \
					-g -a -e cpu-clock -F "$FREQ" -m 128 \
					-o "$dir/f.perf" -- sleep "$secs"
				read -r n l <<< "$(perf_counts "$dir/f.perf")"
			fi
			read -r cpu rss rc < "$dir/m"
			[ "$rc" = 0 ] || fail "$who run failed (exit $rc)"
			echo "$cpu $rss $n $l" >> "$dir/$who.$secs"
		done
		c=$(awk '{ print $1 }' "$dir/$who.$secs" | median)
		r=$(awk '{ print $2 }' "$dir/$who.$secs" | median)
		n=$(awk '{ print $3 }' "$dir/$who.$secs" | median)
		l=$(awk '{ print $4 }' "$dir/$who.$secs" | sort -g | tail -n 1)
		printf '%-6s %4s %9.3f %8.1f %9d %7d\n' $who "$secs" "$c" \
			"$(awk "BEGIN { print $r / 1024 }")" "$n" "$l"
		echo "$c $n" > "$dir/$who.$secs.med"
	done
done
echo "(lost: the largest of the runs)"
set -- $SECS
[ $# -ge 2 ] || exit 0
a=$1 b=${!#}
echo
printf '%-6s %14s %12s\n' rec us/sample fixed_s
for who in pipe nodict perf null; do
	read -r c1 n1 < "$dir/$who.$a.med"
	read -r c2 n2 < "$dir/$who.$b.med"
	awk -v c1="$c1" -v n1="$n1" -v c2="$c2" -v n2="$n2" -v w=$who 'BEGIN {
		s = (n2 > n1) ? (c2 - c1) / (n2 - n1) : 0
		printf "%-6s %14.3f %12.3f\n", w, s * 1e6, c1 - s * n1
	}' | tee -a "$dir/slopes"
done
awk '{ v[$1] = $2 } END {
	if (v["perf"] <= 0)
		exit
	printf "pipe/perf CPU per sample: %.2f (target <= 0.70)\n", v["pipe"] / v["perf"]
	printf "nodict/perf CPU per sample: %.2f\n", v["nodict"] / v["perf"]
	printf "null/perf CPU per sample: %.2f\n", v["null"] / v["perf"]
}' "$dir/slopes"
