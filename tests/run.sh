#!/usr/bin/env bash
# tests/run.sh BUILD [BUILD...] - run the whole suite once per build dir:
# unit tests (BUILD/tests/test_*) and end-to-end cases (tests/e2e/*/cmd).
#
# An e2e case is a folder tests/e2e/NNNN-name/ with an executable `cmd`
# (bash), run in a fresh temp dir with PIPE (the binary), BUILD (absolute
# build dir), TOP (repo root), CASE (the case folder) and WORK (cwd) set.
# If `expected` exists, cmd's stdout must equal it.  Exit 0 passes, 77
# skips (the last line of its output is the reason), anything else fails.
# Unit test binaries follow the same exit convention.
#
# Ends with "N passed, N failed, N skipped" over every build, skips listed.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
pass=0 fail=0 skip=0
skips=() fails=()
filter=${TEST_FILTER:-}

run_one() { # build name cmd...
	local b=$1 name=$2; shift 2
	local out rc
	[ -n "$filter" ] && [[ "$name" != *$filter* ]] && return
	t_start=$(date +%s)
	out=$("$@" 2>&1); rc=$?
	report "$b" "$name" "$rc" "$out"
}

report() { # build name rc output
	local b=$1 name=$2 rc=$3 out=$4 secs
	secs=$(( $(date +%s) - t_start ))
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1)); echo "ok    [$b] $name (${secs}s)"
	elif [ "$rc" = 77 ]; then
		local why; why=$(printf '%s\n' "$out" | tail -n 1)
		skip=$((skip + 1)); skips+=("[$b] $name: $why"); echo "skip  [$b] $name: $why"
	else
		fail=$((fail + 1)); fails+=("[$b] $name")
		echo "FAIL  [$b] $name (exit $rc)"
		printf '%s\n' "$out" | tail -n 25 | sed 's/^/      | /'
	fi
}

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

run_e2e() { # build case-dir
	local b=$1 dir=$2 name work out rc
	name=e2e/$(basename "$dir")
	[ -n "$filter" ] && [[ "$name" != *$filter* ]] && return
	t_start=$(date +%s)
	work=$(mktemp -d "${TMPDIR:-/tmp}/pipe-test.XXXXXX")
	out=$(cd "$work" && PIPE="$TOP/$b/pipe" BUILD="$TOP/$b" TOP="$TOP" \
		CASE="$dir" WORK="$work" PIPE_TEST_WORK="$work" \
		timeout 300 bash "$dir/cmd" 2>"$work/.stderr")
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
	report "$b" "$name" "$rc" "$out"
	rm -rf "$work"
}

for b in "$@"; do
	echo "== suite on $b"
	for t in "$TOP/$b"/tests/test_*; do
		[ -x "$t" ] || continue
		run_one "$b" "unit/$(basename "$t")" env TOP="$TOP" BUILD="$TOP/$b" "$t"
	done
	for d in "$TOP"/tests/e2e/*/; do
		[ -f "$d/cmd" ] || continue
		run_e2e "$b" "${d%/}"
	done
done

echo
if [ ${#skips[@]} -gt 0 ]; then
	echo "skipped:"
	printf '  %s\n' "${skips[@]}"
fi
if [ ${#fails[@]} -gt 0 ]; then
	echo "failed:"
	printf '  %s\n' "${fails[@]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
