#!/usr/bin/env bash
# size.sh - file bytes per sample, pipe against `perf record -z` (issue 6).
# Records the bundled mixed workload (tests/workloads/mixed.c) for SIZE_SECS
# seconds (default 40: over 100k samples at 4 kHz on 2 CPUs, even with
# other load on the machine) in turn with
#   pipe -s perf:event=cpu-clock,freq=4000 -c zstd:L -k file:p.dat -- mixed S
#   perf record -B -g -e cpu-clock -F 4000 --compression-level=L -o f.perf \
#       -- mixed S
# for L in 1 3 9, SIZE_RUNS times each (default 2, alternating: the mix of
# the workload varies from run to run), and prints file bytes / samples for
# each run and pooled, and the ratio pipe/perf (target: at most 0.80).
# Then it rewrites the first level-3 pipe recording with transform=off and
# several block sizes (same records, so `pipe verify` digests must match)
# to show what each part buys, and estimates a trained zstd dictionary
# with tests/bench/codec_speed.
# perf's sample count comes from `perf report --stats` on a copy passed
# through tests/tools/perfdata-fix-mmap2.py (perf 6.1 on kernel 6.18).
# perf runs with -B: its build-id pass crashes on this kernel.
# SIZE_COPTS adds writer options to pipe's -c (e.g. ",block=256K");
# SIZE_SECS, SIZE_LEVELS, SIZE_RUNS, SIZE_BLOCKS, SIZE_DICT_BLOCKS change
# the other knobs.
set -u
PIPE=$BUILD/pipe
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$BUILD/tests/workloads/mixed
SECS=${SIZE_SECS:-40}
LEVELS=${SIZE_LEVELS:-1 3 9}
BLOCKS=${SIZE_BLOCKS:-16K 32K 64K 128K 256K 1M}
DICT_BLOCKS=${SIZE_DICT_BLOCKS:-8K 64K 128K 256K}
RUNS=${SIZE_RUNS:-2}
OPTS=${SIZE_COPTS:-}     # more writer options for the live runs: ,block=256K
MIN_SAMPLES=100000
dir=$(mktemp -d /tmp/pipe-size.XXXXXX)
trap 'rm -rf "$dir"' EXIT
calc() { awk "BEGIN { printf \"%.2f\\n\", $* }"; }
info() { "$PIPE" info "$1" | sed -n "s/^$2: //p"; }
fail() { echo "size.sh: $*" >&2; exit 1; }

[ -x "$W" ] || fail "no workload '$W' (make $BUILD/tests/workloads.stamp)"
command -v perf >/dev/null || fail "perf is not installed"

perf_samples() {
	python3 "$TOP/tests/tools/perfdata-fix-mmap2.py" "$1" "$1.fixed" \
		>/dev/null 2>&1 || return 1
	perf report -i "$1.fixed" --stats 2>/dev/null |
		awk '/SAMPLE events:/ { print $3; exit }'
	rm -f "$1.fixed"
}

short=0
echo "mixed workload, $SECS s, cpu-clock 4 kHz, -g, 2 CPUs, $RUNS runs each,"
echo "pipe -c zstd:L$OPTS"
echo "(pipe, perf, pipe, perf, ...); B/s: file bytes per sample; ratio:"
echo "pipe/perf; p_raw, f_raw: bytes per sample before compression (pipe"
echo "info raw_bytes; perf's own 'original' size); 'all': the runs pooled"
printf '%-7s %8s %9s %8s %8s %9s %8s %7s %6s %6s\n' level pipe_smp \
	pipe_B pipe_B/s perf_smp perf_B perf_B/s ratio p_raw f_raw
# line LABEL PIPE_SAMPLES PIPE_BYTES PIPE_RAW PERF_SAMPLES PERF_BYTES PERF_RAW
line() {
	printf '%-7s %8d %9d %8.2f %8d %9d %8.2f %7.3f %6.1f %6.1f\n' \
		"$1" "$2" "$3" "$(calc "$3 / $2")" "$5" "$6" \
		"$(calc "$6 / $5")" \
		"$(awk "BEGIN { printf \"%.3f\", ($3 / $2) / ($6 / $5) }")" \
		"$(calc "$4 / $2")" "$(calc "$7 / $5")"
}
for L in $LEVELS; do
	tot=(0 0 0 0 0 0)
	for r in $(seq "$RUNS"); do
		p=$dir/pipe$L.$r.dat
		f=$dir/perf$L.$r.perf
		"$PIPE" -q -s perf:event=cpu-clock,freq=4000 -c "zstd:$L$OPTS" \
			-k "file:$p" -- "$W" "$SECS" ||
			fail "pipe record failed"
		perf record -B -g -e cpu-clock -F 4000 \
			--compression-level="$L" -o "$f" -- "$W" "$SECS" \
			>/dev/null 2>"$f.log" ||
			fail "perf record failed: $(tail -3 "$f.log")"
		# perf's own figure of its data before compression, in MiB
		fo=$(sed -n 's/.*(original \([0-9.]*\) MB.*/\1/p' "$f.log")
		fo=$(awk "BEGIN { printf \"%d\", ${fo:-0} * 1048576 }")
		ps_=$(info "$p" samples)
		fs=$(perf_samples "$f")
		[ -n "$fs" ] && [ "$fs" -gt 0 ] ||
			fail "no perf sample count for '$f'"
		[ "$ps_" -ge $MIN_SAMPLES ] && [ "$fs" -ge $MIN_SAMPLES ] ||
			short=1
		cur=("$ps_" "$(stat -c %s "$p")" "$(info "$p" raw_bytes)" \
			"$fs" "$(stat -c %s "$f")" "$fo")
		line "zstd:$L" "${cur[@]}"
		for i in 0 1 2 3 4 5; do
			tot[i]=$((tot[i] + cur[i]))
		done
		[ "$L" = 3 ] && [ "$r" = 1 ] && cp "$p" "$dir/ref.dat"
		rm -f "$p" "$f" "$f.log"
	done
	[ "$RUNS" -gt 1 ] && line all "${tot[@]}"
done
[ $short = 0 ] ||
	echo "note: fewer than $MIN_SAMPLES samples in a run; raise SIZE_SECS"

[ -f "$dir/ref.dat" ] || exit 0
ref=$dir/ref.dat
rs=$(info "$ref" samples)
digest=$("$PIPE" verify "$ref" 2>&1 | grep digest)
echo
echo "the zstd:3 pipe recording rewritten (same $rs samples; digests checked):"
printf '%-28s %10s %8s %7s\n' "-c" bytes B/s blocks
row() {
	local c=$1 o=$dir/x.dat d
	rm -f "$o"
	"$PIPE" -q -s "file:$ref" -c "$c" -k "file:$o" ||
		fail "rewrite $c failed"
	d=$("$PIPE" verify "$o" 2>&1 | grep digest)
	[ "$d" = "$digest" ] || fail "digest of $c differs: $d / $digest"
	printf '%-28s %10d %8.2f %7s\n' "$c" "$(stat -c %s "$o")" \
		"$(calc "$(stat -c %s "$o") / $rs")" "$(info "$o" blocks)"
}
row none:transform=off
row none:transform=on
row zstd:3,transform=off
for b in $BLOCKS; do
	row "zstd:3,block=$b"
done
row zstd:3,block=1M,transform=off

# Dictionaries are not in the writer yet: estimate them with codec_speed
# (train 32 KiB on the first blocks, use it for the rest; tests/bench/).
cs=$BUILD/bench/codec_speed
mkdir -p "$BUILD/bench"
cc -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$TOP/include/pipe" \
	-o "$cs" "$TOP/tests/bench/codec_speed.c" -ldl ||
	fail "cannot build codec_speed"
echo
echo "zstd:3 with a trained 32 KiB dictionary (estimate; transform on):"
for b in $DICT_BLOCKS; do
	rm -f "$dir/c.dat"
	"$PIPE" -q -s "file:$ref" -c "none:transform=on,block=$b" \
		-k "file:$dir/c.dat" || fail "rewrite failed"
	printf 'block=%-5s' "$b"
	"$cs" "$BUILD/plugins" "$dir/c.dat" zstd:3:dict=32 | grep 'dict ' ||
		fail "codec_speed failed"
done
exit 0
