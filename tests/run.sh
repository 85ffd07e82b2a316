#!/usr/bin/env bash
# tests/run.sh BUILD[:CASES] [BUILD[:CASES]...] - run the whole suite once
# per build dir: unit tests (BUILD/tests/test_*) and end-to-end cases
# (tests/e2e/*/cmd).  BUILD:CASES runs on that build only the cases whose
# name contains one of CASES's comma-separated substrings (make test's
# ThreadSanitizer build: build-tsan:unit/test_container_reader,e2e/0203-).
# All the builds' cases run in one pool.  A race stops a ThreadSanitizer
# build's program (halt_on_error=1 is put before any TSAN_OPTIONS given).
#
# An e2e case is a folder tests/e2e/NNNN-name/ with an executable `cmd`
# (bash), run in a fresh temp dir with PIPE (the binary), BUILD (absolute
# build dir), TOP (repo root), CASE (the case folder) and WORK (cwd) set.
# If `expected` exists, cmd's stdout must equal it.  Exit 0 passes, 77
# skips (the last line of its output is the reason), anything else fails.
# Unit test binaries follow the same exit convention.
#
# Cases run in parallel, TEST_JOBS at a time (default: one more than the
# CPUs, at most 4), the longest ones first (the list `slow` below);
# results are printed in suite order as they complete.
# TEST_FILTER=substr runs only the cases whose name contains it (several
# substrings, space-separated: the cases that contain any of them).  A case
# running longer than TEST_TIMEOUT seconds (default 900: a guard against
# hangs, not a speed check; a loaded machine stretches the ASan cases a
# lot) is killed and fails.
#
# Ends with the CPU seconds of each build's cases and the costliest
# cases, then "N passed, N failed, N skipped" over every build, skips
# listed.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
pass=0 fail=0 skip=0
skips=() fails=() costs=()
declare -A build_cpu=()
filter=${TEST_FILTER:-}
ncpu=$(nproc 2>/dev/null || echo 2)
jobs=${TEST_JOBS:-$(( ncpu + 1 > 4 ? 4 : ncpu + 1 ))}
limit=${TEST_TIMEOUT:-900}
case $jobs in
''|*[!0-9]*|0) echo "tests/run.sh: TEST_JOBS must be a positive number" >&2; exit 2 ;;
esac
case $limit in
''|*[!0-9]*|0) echo "tests/run.sh: TEST_TIMEOUT must be a positive number" >&2; exit 2 ;;
esac
umask 022
export TSAN_OPTIONS=halt_on_error=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}
res=$(mktemp -d "${TMPDIR:-/tmp}/pipe-suite.XXXXXX")
trap 'rm -rf "$res"' EXIT

# The cases' python3 is Debian's, which `make deps` installs, when it is
# there: a python3 found first in PATH may be a version manager's shim
# (pyenv's is a bash script that runs pyenv, which then runs python:
# 0.6 CPU seconds a start against 0.05), and the cases start python3
# hundreds of times.  They use its standard library only.
if [ -x /usr/bin/python3 ]; then
	mkdir "$res/bin" && ln -s /usr/bin/python3 "$res/bin/python3" &&
		export PATH="$res/bin:$PATH"
fi

# Kill what a case left running (found by the marker in its environment);
# prints how many there were.
reap() { # work-dir
	local p n=0
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = $$ ] && continue
		if grep -qsxzF "PIPE_TEST_WORK=$1" "$p/environ"; then
			kill -9 "${p#/proc/}" 2>/dev/null && n=$((n + 1))
		fi
	done
	echo "$n"
}

# Each task leaves $res/IDX.rc and $res/IDX.out, then $res/IDX.done
# (written last, so the printer never sees half a result).
# The CPU time is the task's children's (bash's `times`, second line).
finish() { # idx rc output start-seconds
	local cpu
	times > "$res/$1.times"
	cpu=$(awk 'NR == 2 { n = 0
		for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] }
		printf "%.1f", n }' "$res/$1.times")
	printf '%s\n' "$3" > "$res/$1.out"
	echo "$2 $(( $(date +%s) - $4 )) $cpu" > "$res/$1.rc"
	: > "$res/$1.done"
}

run_unit() { # idx build binary
	local start out rc
	start=$(date +%s)
	out=$(env TOP="$TOP" BUILD="$TOP/$2" timeout "$limit" "$3" 2>&1); rc=$?
	finish "$1" "$rc" "$out" "$start"
}

run_e2e() { # idx build case-dir
	local idx=$1 b=$2 dir=$3 work out rc left start
	start=$(date +%s)
	work=$(mktemp -d "${TMPDIR:-/tmp}/pipe-test.XXXXXX")
	out=$(cd "$work" && PIPE="$TOP/$b/pipe" BUILD="$TOP/$b" TOP="$TOP" \
		CASE="$dir" WORK="$work" PIPE_TEST_WORK="$work" \
		timeout "$limit" bash "$dir/cmd" 2>"$work/.stderr")
	rc=$?
	left=$(reap "$work")
	if [ "$rc" = 0 ] && [ "$left" != 0 ]; then
		rc=1
		out="the case left $left processes running (killed)"
	fi
	if [ "$rc" = 0 ] && [ -f "$dir/expected" ]; then
		if ! diff -u "$dir/expected" <(printf '%s\n' "$out") >"$work/.diff"; then
			rc=1; out=$(cat "$work/.diff")
		fi
	elif [ "$rc" != 0 ]; then
		out=$(printf '%s\n%s' "$out" "$(cat "$work/.stderr")")
		[ "$rc" = 77 ] && out=$(printf '%s\n' "$out" | grep -v '^$' | tail -n 1)
	fi
	rm -rf "$work"
	finish "$idx" "$rc" "$out" "$start"
}

report() { # build name rc secs cpu-secs output
	local b=$1 name=$2 rc=$3 secs=$4 cpu=$5 out=$6
	local tenths=${cpu/./}
	build_cpu[$b]=$(( ${build_cpu[$b]:-0} + 10#$tenths ))
	costs+=("$cpu $secs [$b] $name")
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1)); echo "ok    [$b] $name (${secs}s, cpu ${cpu}s)"
	elif [ "$rc" = 77 ]; then
		local why; why=$(printf '%s\n' "$out" | grep -v '^$' | tail -n 1)
		skip=$((skip + 1)); skips+=("[$b] $name: $why"); echo "skip  [$b] $name: $why"
	else
		fail=$((fail + 1)); fails+=("[$b] $name")
		echo "FAIL  [$b] $name (exit $rc, ${secs}s)"
		printf '%s\n' "$out" | tail -n 25 | sed 's/^/      | /'
		# the reason (lib.sh's "FAIL: ..." line) when the evidence
		# printed after it pushed it out of those last lines
		printf '%s\n' "$out" | head -n -25 | grep -m 1 '^FAIL: ' |
			sed 's/^/      | (cut above) /'
	fi
}

# the task list, in suite order
t_build=() t_kind=() t_path=() t_name=()
declare -A only=() # build -> its CASES, space-separated
matches() { # name substrings (space-separated; empty: any)
	local f fs
	[ -z "$2" ] && return 0
	read -ra fs <<< "$2"
	for f in "${fs[@]}"; do
		[[ "$1" == *"$f"* ]] && return 0
	done
	return 1
}
add() { # build kind path name
	matches "$4" "$filter" && matches "$4" "${only[$1]:-}" || return
	t_build+=("$1") t_kind+=("$2") t_path+=("$3") t_name+=("$4")
}

# print every finished result that comes next in suite order
shown=0 header=
flush() {
	local rc secs cpu
	while [ "$shown" -lt "${#t_name[@]}" ] && [ -e "$res/$shown.done" ]; do
		if [ "${t_build[$shown]}" != "$header" ]; then
			header=${t_build[$shown]}
			echo "== suite on $header"
		fi
		read -r rc secs cpu < "$res/$shown.rc"
		report "${t_build[$shown]}" "${t_name[$shown]}" "$rc" "$secs" \
			"$cpu" "$(cat "$res/$shown.out")"
		shown=$((shown + 1))
	done
}

# The cases that take longest (wall, the longest of their builds, from an
# idle make test), longest first: they start first, so the run never ends
# on one of them alone while the other workers idle.  Results still print
# in suite order.
slow=(e2e/0202- e2e/4002- unit/test_container_damage e2e/3011- e2e/0220-
	e2e/4000- unit/test_codecs e2e/0201- e2e/0210- e2e/1010- e2e/4001-
	e2e/0205- e2e/0034- e2e/2000- e2e/2001- e2e/3106- e2e/4003-)

# the task indexes in the order they start: the slow cases, those of the
# later builds (sanitizers: slower) first, then the rest in suite order
run_order() {
	local s i k n=${#t_name[@]} started=()
	for s in "${slow[@]}"; do
		for ((k = n - 1; k >= 0; k--)); do
			[[ "${t_name[$k]}" == "$s"* ]] || continue
			[ -z "${started[$k]:-}" ] || continue
			started[$k]=1
			echo "$k"
		done
	done
	for ((i = 0; i < n; i++)); do
		[ -z "${started[$i]:-}" ] && echo "$i"
	done
}

main() {
	local a b t d i builds=()
	for a in "$@"; do
		b=${a%%:*}
		builds+=("$b")
		if [ "$a" != "$b" ]; then
			t=${a#*:}
			only[$b]=${t//,/ }
		fi
	done
	for b in "${builds[@]}"; do
		for t in "$TOP/$b"/tests/test_*; do
			[ -x "$t" ] || continue
			add "$b" unit "$t" "unit/$(basename "$t")"
		done
		for d in "$TOP"/tests/e2e/*/; do
			[ -f "$d/cmd" ] || continue
			add "$b" e2e "${d%/}" "e2e/$(basename "$d")"
		done
	done
	for i in $(run_order); do
		while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do
			wait -n
			flush
		done
		if [ "${t_kind[$i]}" = unit ]; then
			run_unit "$i" "${t_build[$i]}" "${t_path[$i]}" &
		else
			run_e2e "$i" "${t_build[$i]}" "${t_path[$i]}" &
		fi
		flush
	done
	wait
	flush

	echo
	for b in "${builds[@]}"; do
		t=${build_cpu[$b]:-}
		[ -n "$t" ] && echo "cpu [$b]: $((t / 10)).$((t % 10)) s in its cases"
	done
	if [ ${#costs[@]} -gt 0 ]; then
		echo "the costliest cases (cpu, wall seconds):"
		printf '%s\n' "${costs[@]}" | sort -rn | head -n 8 | sed 's/^/  /'
	fi
	if [ ${#skips[@]} -gt 0 ]; then
		echo "skipped:"
		printf '  %s\n' "${skips[@]}"
	fi
	if [ ${#fails[@]} -gt 0 ]; then
		echo "failed:"
		printf '  %s\n' "${fails[@]}"
	fi
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ] && [ "$shown" = "${#t_name[@]}" ]
}

# main runs only once bash has read the whole function, and this one line
# ends the script: editing it while a suite runs cannot break that run
main "$@"; exit
