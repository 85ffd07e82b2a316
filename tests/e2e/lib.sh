# tests/e2e/lib.sh - helpers sourced by e2e cases (bash).
# fail MSG: print and exit 1.  expect_err CODE 'first stderr line' CMD...:
# run CMD, check its exit status and the exact first line of stderr.
fail() { echo "FAIL: $*" >&2; exit 1; }

expect_err() {
	local code=$1 line=$2 out rc; shift 2
	out=$("$@" 2>&1 >/dev/null); rc=$?
	[ "$rc" = "$code" ] || fail "exit $rc, want $code: $* -> $out"
	[ "$(printf '%s\n' "$out" | head -n 1)" = "$line" ] ||
		fail "stderr of '$*' was: $out -- want first line: $line"
}

# expect_hint 'hint line' CMD...: the second stderr line is that hint
expect_hint() {
	local line=$1 out; shift
	out=$("$@" 2>&1 >/dev/null)
	printf '%s\n' "$out" | grep -qxF -- "$line" ||
		fail "no line '$line' in stderr of '$*': $out"
}

# info_val FILE KEY: one value of `pipe info`
info_val() { "$PIPE" info "$1" | sed -n "s/^$2: //p"; }

# perf_ok: 0 when perf_event_open works here (cpu-clock, this process)
perf_ok() {
	"$PIPE" -q -s perf:event=cpu-clock,duration=10ms,cpus=0 -k null:print=off >/dev/null 2>"$WORK/.perf_probe"
}
