#!/usr/bin/env bash
# demo.sh BUILD - record a short profile of a bundled workload and report
# it.  Falls back to synthetic records, said plainly, only where the
# kernel forbids perf_event_open.
set -u
B=${1:-build}
PIPE=$B/pipe
W=$B/tests/workloads
out=$(mktemp -d "${TMPDIR:-/tmp}/pipe-demo.XXXXXX")
trap 'rm -rf "$out"' EXIT
# the mixed workload: several processes, deep and shallow stacks, 2 s
workload="$W/mixed 2"
if "$PIPE" -q -s perf:event=cpu-clock,duration=10ms,cpus=0 -k null:print=off 2>/dev/null; then
	echo "== recording: pipe -s perf -c zstd:3 -k file:demo.dat -- $workload"
	"$PIPE" -s perf -c zstd:3 -k "file:$out/demo.dat" -- $workload || exit 1
else
	echo "== perf_event_open is not allowed here; recording synthetic records instead"
	"$PIPE" -s synth:50000 -c zstd:3 -k "file:$out/demo.dat" || exit 1
fi
echo "== pipe info demo.dat"
"$PIPE" info "$out/demo.dat" || exit 1
if "$PIPE" plugins | grep -q '^sink   report '; then
	echo "== pipe -s file:demo.dat -k report:top=15"
	"$PIPE" -s "file:$out/demo.dat" -k report:top=15 || exit 1
fi
