#!/usr/bin/env bash
# dwarf.sh - callchain=dwarf against perf record --call-graph dwarf, on
# Debian's own xz (stripped liblzma, no frame pointers) compressing 10 MB
# of base64 text, RUNS times (default 3), one pipe and one perf run side
# by side each time:
#   perf record -q -B -z --call-graph dwarf -F 1000 -p PID     (zstd 1, 8 KiB)
#   pipe -q -s perf:pid=PID,callchain=dwarf,freq=1000 -c zstd:1 -k file:p.dat
# Each recorder attaches to an xz started just before it, so its CPU time
# (user+sys of the recorder alone) excludes the workload.  Then the whole
# report with children, each from its own recording:
#   perf report --stdio --children --sort dso,sym -i perf.data
#   pipe -q -s file:p.dat -k report:children=on,sort=dso+sym
# Prints bytes per sample, recorder CPU per sample, report CPU, the share
# of stacks that reach main (under __libc_start_call_main) and the
# pipe/perf ratios of each.  Knobs: BENCH_RUNS.
set -u
PIPE=$BUILD/pipe
FIX=$TOP/tests/tools/perfdata-fix-mmap2.py
RUNS=${BENCH_RUNS:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
command -v xz >/dev/null && command -v perf >/dev/null ||
	{ echo "skip: xz or perf missing"; exit 0; }
head -c 7500000 /dev/urandom | base64 > in.txt
cpu() { awk '{ print $1 + $2 }' "$1"; }
printf '%-4s %9s %9s %8s %8s %9s %9s %8s %8s %7s\n' run 'perf B/s' 'pipe B/s' ratio \
	'perf us' 'pipe us' 'rep perf' 'rep pipe' ratio main
for r in $(seq "$RUNS"); do
	xz -9 -k -c -T1 in.txt >/dev/null & wl=$!
	/usr/bin/time -f '%U %S' -o perf.time perf record -q -B -z \
		--call-graph dwarf -F 1000 -o perf.data -p $wl >/dev/null 2>&1
	wait $wl
	xz -9 -k -c -T1 in.txt >/dev/null & wl=$!
	/usr/bin/time -f '%U %S' -o pipe.time "$PIPE" -q \
		-s perf:pid=$wl,callchain=dwarf,freq=1000 -c zstd:1 \
		-k file:p.dat,force=on >/dev/null 2>&1
	wait $wl
	python3 "$FIX" perf.data perf.fixed >/dev/null 2>&1 || cp perf.data perf.fixed
	ps=$(perf report -D -i perf.fixed 2>/dev/null | grep -c PERF_RECORD_SAMPLE)
	qs=$("$PIPE" info p.dat | sed -n 's/^samples: //p')
	/usr/bin/time -f '%U %S' -o prep.time perf report --stdio --children \
		--sort dso,sym -i perf.fixed >/dev/null 2>&1
	/usr/bin/time -f '%U %S' -o qrep.time "$PIPE" -q -s file:p.dat \
		-k report:q.txt,children=on,sort=dso+sym,force=on
	"$PIPE" -q -s file:p.dat -k report:q.folded,format=folded,force=on
	awk -v pb="$(stat -c %s perf.data)" -v qb="$(stat -c %s p.dat)" \
		-v ps="$ps" -v qs="$qs" -v pc="$(cpu perf.time)" -v qc="$(cpu pipe.time)" \
		-v pr="$(cpu prep.time)" -v qr="$(cpu qrep.time)" -v r="$r" \
		-v main="$(awk '{ n = $NF; t += n; if ($0 ~ /__libc_start_call_main/) m += n }
			END { printf "%.3f", m / t }' q.folded)" 'BEGIN {
		printf "%-4s %9.1f %9.1f %8.2f %8.1f %8.1f %9.2f %9.2f %8.2f %7s\n", r,
			pb / ps, qb / qs, (qb / qs) / (pb / ps), pc / ps * 1e6,
			qc / qs * 1e6, pr, qr, qr / pr, main }'
done
