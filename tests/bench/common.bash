# common.bash - sourced by the benchmarks that record with perf (not run
# on its own: tests/bench/run.sh runs the *.sh files).
#
# bench_need_perf: ends the benchmark as skipped (exit 0, the reason on
# stdout) unless $PIPE may open perf events here and perf is installed.
bench_need_perf() {
	if ! "$PIPE" -q -s perf:event=cpu-clock,duration=10ms,cpus=0 \
		-k null:print=off 2>/dev/null; then
		echo "skipped: perf_event_open not permitted"
		exit 0
	fi
	if ! command -v perf >/dev/null; then
		echo "skipped: perf not installed"
		exit 0
	fi
}
