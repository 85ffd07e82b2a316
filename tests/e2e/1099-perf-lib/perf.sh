# tests/e2e/1099-perf-lib/perf.sh - helpers for the live perf source cases
# (1000-1098), sourced after tests/e2e/lib.sh.  This folder has no `cmd`:
# it is not a case itself.

# The bundled workload: main -> burn_run -> burn_outer -> burn_leaf_a/b.
BURN=$BUILD/tests/workloads/burn
[ -x "$BURN" ] || fail "no workload '$BURN': run 'make tests'"

# perf_require [system|command]: exit 77 (skip) when perf_event_open is
# refused (EACCES/EPERM) or the software clock event is missing (ENOENT);
# any other failure fails the case.
perf_require() {
	local out rc
	if [ "${1:-command}" = system ]; then
		out=$("$PIPE" -q -s perf:event=cpu-clock,duration=10ms -k null \
			2>&1 >/dev/null)
	else
		out=$("$PIPE" -q -s perf:event=cpu-clock -k null -- true \
			2>&1 >/dev/null)
	fi
	rc=$?
	[ "$rc" = 0 ] && return 0
	case "$out" in
	*"permission denied"*)
		echo "perf_event_open refused here (EACCES/EPERM): $(printf '%s' "$out" | head -n 1)"
		exit 77 ;;
	*"not supported"*)
		echo "perf_event_open: cpu-clock not supported here (ENOENT)"
		exit 77 ;;
	esac
	fail "perf probe failed (exit $rc): $out"
}

# json_lines FILE: the samples and sideband of FILE as JSON lines, raw ips
json_lines() {
	"$PIPE" -q -s "file:$1" -k json:-,format=lines,symbols=off,events=all
}

# wait_for_exit PID SECONDS: wait for a background job, failing after
# SECONDS; sets rc to its exit status
wait_for_exit() {
	local pid=$1 n=$(( $2 * 10 ))
	while kill -0 "$pid" 2>/dev/null; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || { kill -KILL "$pid"; fail "pid $pid hangs"; }
		sleep 0.1
	done
	wait "$pid"; rc=$?
}

# wait_for_blocks FILE: wait (at most 20 s) until FILE holds more than its
# header and metadata, that is until records reached it
wait_for_blocks() {
	local first="" size n=200
	while [ "$n" -gt 0 ]; do
		size=$(stat -c %s "$1" 2>/dev/null || echo 0)
		if [ "$size" -gt 0 ]; then
			[ -z "$first" ] && first=$size
			[ "$size" -gt "$first" ] && return 0
		fi
		n=$((n - 1))
		sleep 0.1
	done
	fail "no records reached '$1' in 20 s"
}
