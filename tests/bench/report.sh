#!/usr/bin/env bash
# report.sh - the report sink against perf report (issue 7).
# The known-split workload (tests/fixtures/split_main) is recorded in turn
# by pipe (-s perf:freq=F -k file:p.dat) and by perf (perf record -B -g
# -F F), at about 50k and 500k samples (BENCH_FREQ, default 10000 Hz;
# BENCH_SMALL/BENCH_LARGE workload CPU seconds, default 4.25 and 42.5).
# Then, RUNS times each (default 5), the least CPU time (user+sys; the
# least is the figure other load on the machine disturbs least) and the
# median peak RSS of:
#   flat:  pipe -s file:p.dat -k report
#          perf report --stdio --no-children -g none -i f.perf
#   graph: pipe -s file:p.dat -k report:children=on,graph=caller
#          perf report --stdio -i f.perf        (children and graphs)
# From the two sizes: time per sample (slope) and fixed cost (intercept);
# and peak RSS growth from the small to the large recording.  perf reads a
# copy fixed by tests/tools/perfdata-fix-mmap2.py (docs/performance.md).
# Last, tests/bench/llvm_syms: load and sort libLLVM's dynamic symbols.
# Whole runs: pipe's CPU time over perf's at each size, side by side in
# one run (targets: flat 0.25x, children and graphs 0.2x; peak RSS below
# perf's).  The default sizes give about 100k and 1M samples (two
# processes of the workload at 10 kHz: 8.5 and 85 CPU seconds).
# Per-sample slopes too: at most 0.3x perf's in both modes, at most +20%
# RSS for 10x samples; libLLVM under 10 ms.
set -u
PIPE=$BUILD/pipe
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
FX=$BUILD/tests/fixtures
W=$FX/split_main
RUNS=${BENCH_RUNS:-5}
FREQ=${BENCH_FREQ:-10000}
SMALL=${BENCH_SMALL:-8.5}
LARGE=${BENCH_LARGE:-85}
# BENCH_DIR=DIR keeps the recordings in DIR and reuses those found there
# (a 1M-sample recording is many minutes of a loaded machine)
if [ -n "${BENCH_DIR:-}" ]; then
	dir=$BENCH_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d /tmp/pipe-report.XXXXXX)
	trap 'rm -rf "$dir"' EXIT
fi
fail() { echo "report.sh: $*" >&2; exit 1; }
calc() { awk "BEGIN { printf \"%.4f\\n\", $* }"; }
med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
least() { sort -g | head -n 1; }

mkdir -p "$FX" "$BUILD/bench"
make -s -C "$TOP/tests/fixtures" OUT="$FX" >/dev/null || fail "cannot build fixtures"
command -v perf >/dev/null || fail "perf is not installed"

# measure CMD...: "cpu_seconds max_rss_kib" of CMD (its output discarded)
measure() {
	python3 - "$@" <<'PY'
import resource, subprocess, sys
# children python itself ran at start-up are counted before: subtract
b = resource.getrusage(resource.RUSAGE_CHILDREN)
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
if r.returncode:
    sys.exit("failed: %s" % " ".join(sys.argv[1:]))
print("%.4f %d" % (u.ru_utime + u.ru_stime - b.ru_utime - b.ru_stime,
                   u.ru_maxrss))
PY
}
# medians CMD...: RUNS runs; prints "least-cpu median-rss"
medians() {
	local i out=$dir/m.txt
	: > "$out"
	for i in $(seq "$RUNS"); do measure "$@" >> "$out" || fail "$*"; done
	echo "$(awk '{print $1}' "$out" | least) $(awk '{print $2}' "$out" | med)"
}

declare -A n cpu rss
for size in small large; do
	secs=$SMALL; [ $size = large ] && secs=$LARGE
	if [ ! -s "$dir/p_$size.dat" ] || [ ! -s "$dir/f_$size.fixed" ]; then
		"$PIPE" -q -s "perf:freq=$FREQ" -k "file:$dir/p_$size.dat" -- "$W" "$secs" \
			>/dev/null || fail "pipe record"
		perf record -q -B -g -F "$FREQ" -o "$dir/f_$size.perf" -- "$W" "$secs" \
			>/dev/null 2>&1 || fail "perf record"
		python3 "$TOP/tests/tools/perfdata-fix-mmap2.py" "$dir/f_$size.perf" \
			"$dir/f_$size.fixed" >/dev/null 2>&1 || cp "$dir/f_$size.perf" "$dir/f_$size.fixed"
	fi
	n[pipe_$size]=$("$PIPE" info "$dir/p_$size.dat" | sed -n 's/^samples: //p')
	n[perf_$size]=$(perf report -i "$dir/f_$size.fixed" --stats 2>/dev/null |
		awk '/ SAMPLE events:/ { print $3; exit }')
	read -r cpu[pflat_$size] rss[pflat_$size] <<< \
		"$(medians "$PIPE" -q -s "file:$dir/p_$size.dat" -k report)"
	read -r cpu[fflat_$size] rss[fflat_$size] <<< \
		"$(medians perf report --stdio --no-children -g none -i "$dir/f_$size.fixed")"
	read -r cpu[pgraph_$size] rss[pgraph_$size] <<< \
		"$(medians "$PIPE" -q -s "file:$dir/p_$size.dat" -k report:children=on,graph=caller)"
	read -r cpu[fgraph_$size] rss[fgraph_$size] <<< \
		"$(medians perf report --stdio -i "$dir/f_$size.fixed")"
done

printf 'workload: split_main, freq %s Hz; samples pipe %s / %s, perf %s / %s\n' \
	"$FREQ" "${n[pipe_small]}" "${n[pipe_large]}" "${n[perf_small]}" "${n[perf_large]}"
printf '%-26s %9s %9s %11s %11s %9s %9s\n' "report" "small s" "large s" \
	"us/sample" "fixed ms" "RSS MiB" "RSS x10"
row() { # label key tool(pipe|perf)
	local s=${n[$3_small]} l=${n[$3_large]} ts=${cpu[$2_small]} tl=${cpu[$2_large]}
	local per fixed
	per=$(calc "($tl - $ts) / ($l - $s) * 1e6")
	fixed=$(calc "($ts - ($tl - $ts) / ($l - $s) * $s) * 1e3")
	printf '%-26s %9.3f %9.3f %11.3f %11.1f %9.1f %9.2f\n' "$1" "$ts" "$tl" \
		"$per" "$fixed" "$(calc "${rss[$2_large]} / 1024")" \
		"$(calc "${rss[$2_large]} / ${rss[$2_small]}")"
	echo "$per" > "$dir/per_$2"
}
row "pipe report (flat)" pflat pipe
row "perf report -g none" fflat perf
row "pipe children+graph" pgraph pipe
row "perf report (default)" fgraph perf
for size in small large; do
	printf 'whole run, %s (%s samples): pipe/perf CPU flat %.3fx (target 0.25x), children+graph %.3fx (target 0.2x); peak RSS flat %.2fx, graph %.2fx\n' \
		"$size" "${n[pipe_$size]}" \
		"$(calc "${cpu[pflat_$size]} / ${cpu[fflat_$size]}")" \
		"$(calc "${cpu[pgraph_$size]} / ${cpu[fgraph_$size]}")" \
		"$(calc "${rss[pflat_$size]} / ${rss[fflat_$size]}")" \
		"$(calc "${rss[pgraph_$size]} / ${rss[fgraph_$size]}")"
done
printf 'time per sample, pipe/perf: flat %.2fx, children+graph %.2fx (target 0.3x)\n' \
	"$(calc "$(cat "$dir/per_pflat") / $(cat "$dir/per_fflat")")" \
	"$(calc "$(cat "$dir/per_pgraph") / $(cat "$dir/per_fgraph")")"

lib=$(ls /usr/lib/x86_64-linux-gnu/libLLVM-1[0-9].so.1 /usr/lib/llvm-*/lib/libLLVM*.so* 2>/dev/null | tail -n 1)
if [ -z "$lib" ]; then
	echo "libLLVM: not installed (apt-get install libllvm15), not measured"
	exit 0
fi
cc -O2 -std=c11 -D_GNU_SOURCE -I"$TOP/symbolizer" -I"$TOP/lib" \
	-o "$BUILD/bench/llvm_syms" "$TOP/tests/bench/llvm_syms.c" \
	"$BUILD/obj/symbolizer/symtab.o" "$BUILD/obj/symbolizer/elfsyms.o" \
	"$BUILD/obj/lib/trust.o" "$BUILD/obj/lib/err.o" "$BUILD/obj/lib/grow.o" \
	-lelf -liberty ||
	fail "cannot build llvm_syms"
read -r syms mid lo hi <<< "$("$BUILD/bench/llvm_syms" "$lib")"
printf 'libLLVM load and sort: %s (%s functions): median %s ms CPU (min %s, max %s), target 10 ms\n' \
	"$lib" "$syms" "$mid" "$lo" "$hi"
