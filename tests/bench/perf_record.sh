#!/usr/bin/env bash
# perf_record.sh - the live recorder's own cost, pipe against perf record -z,
# side by side in one run (docs/performance.md, "Live recording").
#
# Cases (BENCH_CASES, default "sys4k sys20k cmd"):
#   sys4k   the whole system at 4 kHz with call chains while burn keeps
#           every CPU busy
#   sys20k  the same at 20 kHz
#   cmd     `-- mixed SECS` (forks, threads, syscalls, deep stacks) at 4 kHz
# in turn, for each SECS of BENCH_SECS (default "5 10 20"), BENCH_RUNS times
# (default 3), alternating:
#   pipe -q -s perf:event=cpu-clock,freq=F,pages=128[,duration=SECS] \
#       [-c BENCH_CODEC] -k file:p.dat [-- mixed SECS]
#   perf record -q -z --compression-level=L -g [-a] -e cpu-clock -F F \
#       -m 128 -o f.perf -- {sleep SECS | mixed SECS}
# (same event, frequency, call chains and ring size; pipe at its default
# codec unless BENCH_CODEC is set, perf -z at its default level 1 unless
# BENCH_PERF_LEVEL is set).  BENCH_TOGETHER=1 runs the two at once rather
# than in turn: on a shared machine the load then falls on both alike
# (each also sees the other's samples; in `cmd` each runs its own
# `mixed`).
#
# The recorder's CPU time is user+sys from getrusage of the recorder process
# (all its threads); for `cmd`, the command's own CPU (measured by a wrapper
# around it) is taken off.  Voluntary context switches likewise (wakeups).
# Per case: each run's CPU, peak RSS, wakeups/s, samples, lost, bytes/sample;
# then CPU per sample as the least-squares slope over every run of every
# duration, the fixed cost as its intercept, and pipe/perf ratios.
# Targets: CPU per sample <= 0.5x perf's, file <= 0.8x perf's bytes,
# wakeups/s <= perf's, 0 lost at 20 kHz where perf loses none; peak RSS
# flat in the recording's length (the longest duration's against the
# shortest's, e.g. BENCH_SECS="10 60").
# BENCH_LOAD (default "0"): extra load beside each case, one pass of
# every case per item: N starts N more busy loops (`burn 0 N`), `mem` a
# loop that streams 64 MiB buffers through memory (dd from /dev/zero to
# /dev/null), e.g. BENCH_LOAD="0 1 2 mem" BENCH_CASES=sys20k for lost
# samples against load; each pass ends with every run's lost samples,
# pipe's against perf's.
# BENCH_PROFILE=1 adds a profile of pipe itself (perf record -g on pipe).
set -u
PIPE=$BUILD/pipe
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$BUILD/tests/workloads
RUNS=${BENCH_RUNS:-3}
SECS=${BENCH_SECS:-5 10 20}
CASES=${BENCH_CASES:-sys4k sys20k cmd}
CODEC=${BENCH_CODEC:-}
LEVEL=${BENCH_PERF_LEVEL:-1}
TOGETHER=${BENCH_TOGETHER:-0}
LOADS=${BENCH_LOAD:-0}
NCPU=$(getconf _NPROCESSORS_ONLN)
dir=$(mktemp -d /tmp/pipe-rec.XXXXXX)
wpid=
lpid=
trap '[ -n "$wpid" ] && kill $wpid 2>/dev/null; [ -n "$lpid" ] && kill $lpid 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "perf_record.sh: $*" >&2; exit 1; }

[ -x "$W/burn" ] && [ -x "$W/mixed" ] ||
	fail "no workloads in '$W' (make $BUILD/tests/workloads.stamp)"
command -v perf >/dev/null || fail "perf is not installed"
"$PIPE" -q -s perf:event=cpu-clock,duration=10ms -k null >/dev/null 2>&1 ||
	fail "pipe cannot record the whole system here"

# measure OUT CMD...: run CMD; write "cpu_s max_rss_kib nvcsw status" of
# it and its waited-for descendants to OUT, its standard error to OUT.err.
# The children's CPU and switches are taken after less before: a python3
# that is a shim (pyenv) has already waited for its own helpers before
# the script starts, and those count as its children too (0.25-0.45 s).
measure() {
	local out=$1; shift
	python3 - "$out" "$@" <<'PY'
import resource, subprocess, sys
b = resource.getrusage(resource.RUSAGE_CHILDREN)
r = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL,
                   stderr=open(sys.argv[1] + ".err", "w"))
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.4f %d %d %d\n" % (
    u.ru_utime + u.ru_stime - b.ru_utime - b.ru_stime, u.ru_maxrss,
    u.ru_nvcsw - b.ru_nvcsw, r.returncode))
PY
}

# the command of the `cmd` case, run by the recorder: it writes the CPU
# time and wakeups of itself and the workload, to be taken off
cat > "$dir/wrap.py" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[2:])
c = resource.getrusage(resource.RUSAGE_CHILDREN)
s = resource.getrusage(resource.RUSAGE_SELF)
open(sys.argv[1], "w").write("%.4f %d\n" % (
    c.ru_utime + c.ru_stime + s.ru_utime + s.ru_stime,
    c.ru_nvcsw + s.ru_nvcsw))
PY

# perf's samples and lost samples, from `perf report` on a copy fixed for
# perf 6.1 on this kernel (docs/performance.md)
perf_counts() {
	local f=$1 s l
	python3 "$TOP/tests/tools/perfdata-fix-mmap2.py" "$f" "$f.fixed" \
		>/dev/null 2>&1 || cp "$f" "$f.fixed"
	s=$(perf report -i "$f.fixed" --stats 2>/dev/null |
		awk '/ SAMPLE events:/ { print $3; exit }')
	l=$(perf report -i "$f.fixed" --stdio --sort dso -g none 2>/dev/null |
		sed -n 's/^# Total Lost Samples: //p' | head -n 1)
	echo "${s:-0} ${l:-0}"
	rm -f "$f.fixed"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# record CASE WHO SECS: one recording, measured into $dir/m.WHO
record() {
	local c=$1 who=$2 secs=$3 freq=4000 sys=1 copt=()
	[ "$c" = sys20k ] && freq=20000
	[ "$c" = cmd ] && sys=
	[ -n "$CODEC" ] && copt=(-c "$CODEC")
	if [ "$who" = pipe ]; then rm -f "$dir/p.dat"; else rm -f "$dir/f.perf"; fi
	rm -f "$dir/wrap.$who"
	if [ "$who" = pipe ]; then
		if [ -n "$sys" ]; then
			measure "$dir/m.$who" "$PIPE" -q -s "perf:event=cpu-clock,freq=$freq,pages=128,duration=${secs}s" \
				"${copt[@]}" -k "file:$dir/p.dat"
		else
			measure "$dir/m.$who" "$PIPE" -q -s "perf:event=cpu-clock,freq=$freq,pages=128" \
				"${copt[@]}" -k "file:$dir/p.dat" -- \
				python3 "$dir/wrap.py" "$dir/wrap.$who" "$W/mixed" "$secs"
		fi
	else
		if [ -n "$sys" ]; then
			measure "$dir/m.$who" perf record -q -z --compression-level="$LEVEL" \
				-g -a -e cpu-clock -F "$freq" -m 128 \
				-o "$dir/f.perf" -- sleep "$secs"
		else
			measure "$dir/m.$who" perf record -q -z --compression-level="$LEVEL" \
				-g -e cpu-clock -F "$freq" -m 128 -o "$dir/f.perf" -- \
				python3 "$dir/wrap.py" "$dir/wrap.$who" "$W/mixed" "$secs"
		fi
	fi
}

# tally CASE WHO SECS: appends the recording's
# "secs cpu rss_kib wakeups/s samples lost bytes dropped" to $dir/CASE.WHO
# (dropped: of the lost samples, those in blocks pipe's encoder queue
# dropped, from its warning; the rest the kernel lost in the rings)
tally() {
	local c=$1 who=$2 secs=$3 cpu rss csw rc n l b wcpu=0 wcsw=0 d=0
	if [ "$who" = pipe ]; then
		d=$(sed -n 's/.* blocks ([0-9]* records, \([0-9]*\) samples) were dropped.*/\1/p' \
			"$dir/m.$who.err" | head -n 1)
		n=$("$PIPE" info "$dir/p.dat" | sed -n 's/^samples: //p')
		l=$("$PIPE" info "$dir/p.dat" | sed -n 's/^lost: //p')
		b=$(stat -c %s "$dir/p.dat")
	else
		read -r n l <<< "$(perf_counts "$dir/f.perf")"
		b=$(stat -c %s "$dir/f.perf")
	fi
	read -r cpu rss csw rc < "$dir/m.$who"
	[ "$rc" = 0 ] || fail "$who ($c, $secs s) failed (exit $rc): $(tail -n 3 "$dir/m.$who.err")"
	[ -s "$dir/wrap.$who" ] && read -r wcpu wcsw < "$dir/wrap.$who"
	awk -v s="$secs" -v c="$cpu" -v wc="$wcpu" -v r="$rss" -v k="$csw" \
		-v wk="$wcsw" -v n="$n" -v l="$l" -v b="$b" -v d="${d:-0}" 'BEGIN {
		printf "%s %.4f %d %.2f %d %d %d %d\n", s, c - wc, r, (k - wk) / s, n, l, b, d
	}' >> "$dir/$c.$who"
}

# run_pair CASE SECS: pipe and perf one after the other, or at once
# (BENCH_TOGETHER=1: each records while the other does, so the machine's
# load falls on both alike)
run_pair() {
	local c=$1 secs=$2 ppid
	if [ "$TOGETHER" = 1 ]; then
		record "$c" pipe "$secs" & ppid=$!
		record "$c" perf "$secs"
		wait "$ppid"
	else
		record "$c" pipe "$secs"
		record "$c" perf "$secs"
	fi
	tally "$c" pipe "$secs"
	tally "$c" perf "$secs"
}

# load_start LOAD: start the extra load of BENCH_LOAD's item LOAD
load_start() {
	lpid=
	case $1 in
	0) ;;
	mem) dd if=/dev/zero of=/dev/null bs=64M count=1000000000 2>/dev/null & lpid=$! ;;
	*[!0-9]*) fail "BENCH_LOAD: '$1' is not a number or mem" ;;
	*) "$W/burn" 0 "$1" & lpid=$! ;;
	esac
}

# run_case CASE: every duration and run of CASE, then its tables
run_case() {
	local c=$1 secs i who r0 r1 lo hi
	: > "$dir/$c.pipe"
	: > "$dir/$c.perf"
	wpid=
	if [ "$c" != cmd ]; then
		"$W/burn" 0 "$NCPU" & wpid=$!
	fi
	for secs in $SECS; do
		for i in $(seq "$RUNS"); do
			run_pair "$c" "$secs"
		done
	done
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null
	wpid=
	echo
	echo "== $c: medians of $RUNS runs (lost: the largest run)"
	printf '%-5s %4s %8s %8s %10s %9s %7s %8s\n' rec secs cpu_s rss_MiB wakeups/s samples lost B/sample
	for who in pipe perf; do
		for secs in $SECS; do
			awk -v s="$secs" '$1 == s' "$dir/$c.$who" > "$dir/sel"
			printf '%-5s %4s %8.3f %8.1f %10.1f %9d %7d %8.2f\n' "$who" "$secs" \
				"$(awk '{ print $2 }' "$dir/sel" | median)" \
				"$(awk '{ print $3 / 1024 }' "$dir/sel" | median)" \
				"$(awk '{ print $4 }' "$dir/sel" | median)" \
				"$(awk '{ print $5 }' "$dir/sel" | median)" \
				"$(awk '{ print $6 }' "$dir/sel" | sort -g | tail -n 1)" \
				"$(awk '{ print ($5 ? $7 / $5 : 0) }' "$dir/sel" | median)"
		done
	done
	# least squares over every run: cpu = fixed + slope * samples
	for who in pipe perf; do
		awk -v w="$who" '{ n++; x += $5; y += $2; xx += $5 * $5; xy += $5 * $2
			k += $4; b += $7; s += $5 }
		END {
			d = n * xx - x * x
			slope = d ? (n * xy - x * y) / d : 0
			printf "%s %.6f %.4f %.2f %.3f\n", w, slope * 1e6,
				(y - slope * x) / n, k / n, s ? b / s : 0
		}' "$dir/$c.$who"
	done > "$dir/$c.fit"
	echo
	printf '%-5s %14s %10s %10s %9s\n' rec us/sample fixed_s wakeups/s B/sample
	awk '{ printf "%-5s %14.3f %10.3f %10.1f %9.2f\n", $1, $2, $3, $4, $5 }' "$dir/$c.fit"
	set -- $SECS
	lo=$1 hi=${!#}
	awk -v c="$c" -v one="$([ "$lo" = "$hi" ] && echo 1)" '{ u[$1] = $2; k[$1] = $4; b[$1] = $5 } END {
		if (b["perf"] <= 0)
			exit
		if (one || u["perf"] <= 0)
			printf "%s pipe/perf: CPU per sample n/a (one duration: no slope), ", c
		else
			printf "%s pipe/perf: CPU per sample %.2fx (target <= 0.50), ", c, u["pipe"] / u["perf"]
		printf "bytes %.2fx (target <= 0.80), ", b["pipe"] / b["perf"]
		printf "wakeups/s %.2fx (target <= 1)\n", k["perf"] ? k["pipe"] / k["perf"] : 0
	}' "$dir/$c.fit"
	# whole recordings of the longest duration, fixed cost included
	r0=$(awk -v s="$hi" '$1 == s { print $2 }' "$dir/$c.pipe" | median)
	r1=$(awk -v s="$hi" '$1 == s { print $2 }' "$dir/$c.perf" | median)
	awk -v c="$c" -v hi="$hi" -v a="$r0" -v b="$r1" 'BEGIN {
		printf "%s whole %s s recordings, recorder CPU: pipe %.3f s, perf %.3f s (%.2fx)\n", c, hi, a, b, b ? a / b : 0
	}'
	# peak RSS against the recording's length: shortest and longest
	# duration, medians (target: flat)
	for who in pipe perf; do
		r0=$(awk -v s="$lo" '$1 == s { print $3 / 1024 }' "$dir/$c.$who" | median)
		r1=$(awk -v s="$hi" '$1 == s { print $3 / 1024 }' "$dir/$c.$who" | median)
		awk -v c="$c" -v w="$who" -v lo="$lo" -v hi="$hi" -v a="$r0" -v b="$r1" 'BEGIN {
			printf "%s %s peak RSS: %.1f MiB at %s s, %.1f MiB at %s s (%.2fx)\n", c, w, a, lo, b, hi, a ? b / a : 0
		}'
	done
	# lost samples of every run, pipe's against perf's (target: 0 where
	# perf loses none)
	paste -d' ' "$dir/$c.pipe" "$dir/$c.perf" | awk -v c="$c" -v ld="$load" '{
		n++; runs = runs sprintf(" %d/%d", $6, $14)
		if ($8) runs = runs sprintf(" (%d dropped)", $8)
		if ($6 > 0) pl++
		if ($14 > 0) fl++
		if ($6 > 0 && $14 == 0) worse++
		ps += $5; pls += $6; pd += $8; fs += $13; fls += $14
	} END {
		printf "%s load %s lost, pipe/perf per run:%s\n", c, ld, runs
		printf "%s load %s lost: pipe in %d of %d runs (%.3f%% of its samples, %d of them dropped by its encoder queue), perf in %d (%.3f%%); pipe lost where perf did not: %d\n",
			c, ld, pl, n, ps ? 100 * pls / ps : 0, pd, fl, fs ? 100 * fls / fs : 0, worse
	}'
}

echo "pipe: $PIPE (codec: ${CODEC:-default}); perf -z level $LEVEL; together: $TOGETHER; $NCPU CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for load in $LOADS; do
	load_start "$load"
	if [ "$LOADS" != 0 ]; then
		echo
		echo "==== extra load: $load ($(cut -d' ' -f1-3 /proc/loadavg))"
	fi
	for c in $CASES; do
		run_case "$c"
	done
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null
	lpid=
done

[ "${BENCH_PROFILE:-0}" = 1 ] || exit 0
# where pipe's own CPU goes: perf record on pipe recording the system
echo
echo "== profile of pipe recording the whole system (4 kHz, -g, 10 s)"
"$W/burn" 0 "$NCPU" & wpid=$!
copt=()
[ -n "$CODEC" ] && copt=(-c "$CODEC")
rm -f "$dir/p.dat"
perf record -q -B -e cpu-clock -F 20000 -g -o "$dir/prof.perf" -- \
	"$PIPE" -q -s perf:event=cpu-clock,freq=4000,pages=128,duration=10s \
	"${copt[@]}" -k "file:$dir/p.dat" >/dev/null 2>&1
kill "$wpid"
wpid=
python3 "$TOP/tests/tools/perfdata-fix-mmap2.py" "$dir/prof.perf" \
	"$dir/prof.fixed" >/dev/null 2>&1 || cp "$dir/prof.perf" "$dir/prof.fixed"
perf report -i "$dir/prof.fixed" --no-children --stdio --sort dso -g none 2>/dev/null |
	grep -v '^#' | grep -v '^$' | head -n 8
perf report -i "$dir/prof.fixed" --no-children --stdio --sort dso,sym -g none \
	--percent-limit 1 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 25
