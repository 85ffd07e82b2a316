#!/usr/bin/env bash
# codecs.sh - codec speed and the default block size (issue 4).
# 1. Records real workloads with pipe: tests/workloads/mixed (CODECS_SECS,
#    default 20 s) and tests/workloads/burn (2 threads, same time), and
#    rewrites each with `-c none:transform=off` (raw records) and
#    `-c none:transform=on` (the column transform's output), block=128K.
# 2. tests/bench/codec_speed (built here into $BUILD/bench/) compresses and
#    decompresses every block of the mixed recording with each codec at its
#    default and two other levels: MB/s of codec input per core (thread CPU
#    time), ratio = record bytes / stored bytes.
# 3. Block sizes: `pipe -s file:raw.dat -c zstd:3,block=X -k file:out.dat`
#    for X in 16K..1M: bytes per sample; zstd:3 speed on the transformed
#    blocks of that size (codec_speed, record MB/s per core); the CPU time
#    (user+sys, median of 5) of that rewrite and of the same rewrite with
#    codec none, and record MB/s of the whole zstd rewrite (read, merge,
#    transform, compress, write).
# 4. Parallel decoding of a synth file of over 200 MB of records with 1
#    and 2 threads (issue 4's target: 1.5x), and `pipe verify` of it.
set -u
PIPE=$BUILD/pipe
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
SECS=${CODECS_SECS:-20}
BLOCKS=${CODECS_BLOCKS:-16K 32K 64K 128K 256K 1M}
SPECS=${CODECS_SPECS:-zlib:1 zlib:6 zlib:9 lzma:0 lzma:6 lzma:9 \
	zstd:1 zstd:3 zstd:9 zstd:19}
dir=$(mktemp -d /tmp/pipe-codecs.XXXXXX)
trap 'rm -rf "$dir"' EXIT
calc() { awk "BEGIN { printf \"%.2f\\n\", $* }"; }
info() { "$PIPE" info "$1" | sed -n "s/^$2: //p"; }
fail() { echo "codecs.sh: $*" >&2; exit 1; }
med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# cputime CMD...: user+sys seconds of CMD (bash's time: milliseconds)
cputime() {
	local TIMEFORMAT='%3U %3S'
	{ time "$@" >/dev/null 2>&1; } 2>"$dir/time" || fail "failed: $*"
	awk '{ print $1 + $2 }' "$dir/time"
}

mkdir -p "$BUILD/bench"
cc -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$TOP/include/pipe" \
	-I"$TOP/lib" -I"$TOP/core" -I"$TOP/tests/unit" \
	-o "$BUILD/bench/codec_speed" "$TOP/tests/bench/codec_speed.c" \
	"$TOP/core/params.c" "$TOP/lib/err.c" -ldl ||
	fail "cannot build codec_speed"

W=$BUILD/tests/workloads
"$PIPE" -q -s perf:event=cpu-clock,freq=4000 -c zstd:3 \
	-k "file:$dir/mixed.dat" -- "$W/mixed" "$SECS" ||
	fail "recording mixed failed"
"$PIPE" -q -s perf:event=cpu-clock,freq=4000 -c zstd:3 \
	-k "file:$dir/burn.dat" -- "$W/burn" "${SECS}000" 2 ||
	fail "recording burn failed"
for r in mixed burn; do
	"$PIPE" -q -s "file:$dir/$r.dat" -c none:transform=off,block=128K \
		-k "file:$dir/$r.raw.dat" || fail "rewrite failed"
	"$PIPE" -q -s "file:$dir/$r.dat" -c none:transform=on,block=128K \
		-k "file:$dir/$r.col.dat" || fail "rewrite failed"
done

for t in raw col; do
	f=$dir/mixed.$t.dat
	echo "codec speed, mixed recording ($(info "$f" samples) samples," \
		"$(info "$f" blocks) blocks of 128K records," \
		"transform $([ $t = raw ] && echo off || echo on))"
	"$BUILD/bench/codec_speed" "$BUILD/plugins" "$f" $SPECS ||
		fail "codec_speed failed"
	echo
done

for r in mixed burn; do
	src=$dir/$r.raw.dat
	s=$(info "$src" samples)
	mb=$(calc "$(info "$src" raw_bytes) / 1e6")
	echo "block size, $r recording: $s samples, $mb MB of records"
	printf '%-6s %9s %7s %9s %9s %8s %8s %8s\n' block bytes B/smp \
		comp_rec dec_rec zstd_s none_s rec_MB/s
	for b in $BLOCKS; do
		o=$dir/out.dat
		tz=$(for i in 1 2 3 4 5; do rm -f "$o"; cputime "$PIPE" \
			-q -s "file:$src" -c "zstd:3,block=$b" -k "file:$o"
			done | med)
		bytes=$(stat -c %s "$o")
		tn=$(for i in 1 2 3 4 5; do rm -f "$o.n"; cputime "$PIPE" \
			-q -s "file:$src" -c "none:block=$b" -k "file:$o.n"
			done | med)
		rm -f "$o.c"
		"$PIPE" -q -s "file:$src" -c "none:transform=on,block=$b" \
			-k "file:$o.c" || fail "rewrite failed"
		sp=$("$BUILD/bench/codec_speed" "$BUILD/plugins" "$o.c" zstd:3 |
			awk '$1 == "zstd:3" { print $7, $8 }')
		[ -n "$sp" ] || fail "codec_speed failed on block=$b"
		printf '%-6s %9d %7.2f %9s %9s %8.3f %8.3f %8.0f\n' "$b" \
			"$bytes" "$(calc "$bytes / $s")" $sp "$tz" "$tn" \
			"$(calc "$mb / $tz")"
	done
	echo
done

# 4. Parallel decoding: a synth file of over 200 MB of records (zstd:3),
#    read with 1 and 2 decoding threads; wall time, median of 5.  `pipe
#    verify` has no threads knob (it uses one per CPU), so this reads
#    through the same container reader with -s file:X,threads=N.
wall() {
	local TIMEFORMAT='%3R'
	{ time "$@" >/dev/null 2>&1; } 2>"$dir/time" || fail "failed: $*"
	cat "$dir/time"
}
big=$dir/big.dat
"$PIPE" -q -s "synth:${CODECS_BIG_SAMPLES:-1800000}" -c zstd:3 \
	-k "file:$big" || fail "cannot write '$big'"
echo "parallel decoding: synth file, $(calc "$(info "$big" raw_bytes) / 1e6")" \
	"MB of records, $(calc "$(stat -c %s "$big") / 1e6") MB stored," \
	"$(info "$big" blocks) blocks; wall s, median of 5"
for t in 1 2; do
	w=$(for i in 1 2 3 4 5; do wall "$PIPE" -q -s "file:$big,threads=$t" \
		-k null:print=off; done | med)
	eval "w$t=$w"
	printf 'threads=%d %8.3f s\n' "$t" "$w"
done
echo "speedup: $(calc "$w1 / $w2")x (target 1.5x)"
vw=$(for i in 1 2 3; do wall "$PIPE" verify "$big"; done | med)
echo "pipe verify (threads: one per CPU): $vw s"
