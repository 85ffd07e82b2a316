#!/usr/bin/env bash
# tests/fuzz/run.sh BUILD SECONDS [HARNESS...] - libFuzzer runs (make fuzz):
# each harness of BUILD/fuzz (a FUZZER=1 build) for SECONDS, niced, on its
# corpus in BUILD/corpus/NAME, seeded by seeds.sh from the normal build.
# Crashes land in BUILD/crashes/NAME/; each should become a regression
# input in tests/fuzz/regress/NAME/ and a test named after the behaviour.
# Prints one line per harness: executions, corpus size, crashes.
# FUZZ_RUNS=N also stops each harness after N executions.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=$1 SECS=$2; shift 2
cd "$TOP"
[ -x build/pipe ] || { echo "fuzz: build/pipe missing: run make tests" >&2; exit 1; }
# seeds once per build of pipe (runs may go on in parallel)
if [ ! -f "$B/seeds/.stamp" ] || [ build/pipe -nt "$B/seeds/.stamp" ]; then
	tests/fuzz/seeds.sh build "$B/seeds" >/dev/null || exit 1
	touch "$B/seeds/.stamp"
fi
names=("$@")
if [ ${#names[@]} = 0 ]; then
	for h in "$B"/fuzz/fuzz_*; do
		[ -x "$h" ] && names+=("$(basename "${h#*/fuzz_}")")
	done
fi
fail=0
for n in "${names[@]}"; do
	seeds=$B/seeds/${n}
	corpus=$B/corpus/$n crashes=$B/crashes/$n
	mkdir -p "$corpus" "$crashes"
	dict=()
	[ -f "tests/fuzz/$n.dict" ] && dict=(-dict="tests/fuzz/$n.dict")
	log=$B/fuzz-$n.log
	regress=()
	[ -d "tests/fuzz/regress/$n" ] && regress=("tests/fuzz/regress/$n")
	runs=()
	[ -n "${FUZZ_RUNS:-}" ] && runs=(-runs="$FUZZ_RUNS")
	# whole files: 16 KiB holds blocks of every kind, and a smaller
	# input runs several times faster
	len=65536
	case $n in container|pdread) len=16384 ;; esac
	nice -n 10 "$B/fuzz/fuzz_$n" -max_total_time="$SECS" "${runs[@]}" -rss_limit_mb=2048 \
		-timeout=60 -max_len=$len -artifact_prefix="$crashes/" \
		-print_final_stats=1 "${dict[@]}" "$corpus" "$seeds" \
		"${regress[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	found=$(ls "$crashes" | wc -l)
	echo "fuzz_$n: ${execs:-0} executions in ${SECS}s, corpus $(ls "$corpus" | wc -l), crashes $found (exit $rc)"
	[ "$found" = 0 ] && [ "$rc" = 0 ] || fail=1
done
exit $fail
