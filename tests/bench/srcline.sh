#!/usr/bin/env bash
# srcline.sh - a report sorted by source line against perf's.
# The -O2 -g inlining fixture (tests/fixtures/fx_inline.c) is recorded by
# pipe (-s perf:freq=F, about BENCH_SAMPLES samples, default 250000; F is
# BENCH_FREQ, default 20000 Hz), written as perf.data by -k perfdata, and
# both read it RUNS times (default 5): the least CPU time (user+sys) and
# peak RSS of
#   pipe -s file:x.dat -k report:sort=srcline
#   perf report --stdio --no-children -g none --sort srcline -i x.data
# and pipe's ratio (target: at most 0.1x perf's, 10x faster).  The same
# samples in both; the machine's other load disturbs both alike.
set -u
PIPE=$BUILD/pipe
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
FX=$BUILD/tests/fixtures
RUNS=${BENCH_RUNS:-5}
FREQ=${BENCH_FREQ:-20000}
SAMPLES=${BENCH_SAMPLES:-250000}
dir=$(mktemp -d /tmp/pipe-srcline.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "srcline.sh: $*" >&2; exit 1; }

make -s -C "$TOP/tests/fixtures" OUT="$FX" >/dev/null || fail "cannot build fixtures"
command -v perf >/dev/null || fail "perf is not installed"
# about 240 million iterations a CPU second on this kind of machine
iters=$(awk -v s="$SAMPLES" -v f="$FREQ" 'BEGIN { printf "%.0f", s / f * 240000000 }')
"$PIPE" -q -s perf:freq="$FREQ" -k file:"$dir/x.dat" -- "$FX/fx_inline" "$iters" ||
	fail "record"
"$PIPE" -q -s file:"$dir/x.dat" -k perfdata:"$dir/x.data" || fail "perf.data"
n=$("$PIPE" info "$dir/x.dat" | sed -n 's/^samples: //p')
# least CMD...: the least "cpu_seconds max_rss_kib" of RUNS runs
least() {
	local i
	for i in $(seq "$RUNS"); do
		/usr/bin/time -f "%U %S %M" -o "$dir/t" "$@" >/dev/null 2>&1 ||
			fail "failed: $*"
		awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$dir/t"
	done | sort -g | head -n 1
}
set -- $(least "$PIPE" -q -s file:"$dir/x.dat" -k report:sort=srcline)
pc=$1 pm=$2
set -- $(least perf report --stdio --no-children -g none --sort srcline -i "$dir/x.data")
fc=$1 fm=$2
printf "%d samples, least CPU of %d runs\n" "$n" "$RUNS"
printf "%-8s %10s %12s\n" tool "cpu s" "peak RSS KiB"
printf "%-8s %10s %12s\n" pipe "$pc" "$pm" perf "$fc" "$fm"
awk -v p="$pc" -v f="$fc" 'BEGIN { r = f > 0 ? p / f : 0
	printf "pipe/perf CPU: %.3fx (target <= 0.1x): %s\n", r, r <= 0.1 ? "met" : "missed" }'
