# tests/e2e/4099-perfdata-lib/pd.sh - helpers for the perf.data cases
# (4000-4098), sourced after tests/e2e/lib.sh.  This folder has no `cmd`:
# it is not a case itself.  pdtool.py edits perf.data copies, rows.py
# compares report tables row for row.
LIB4=$TOP/tests/e2e/4099-perfdata-lib
BURN=$BUILD/tests/workloads/burn
[ -x "$BURN" ] || fail "no workload '$BURN': run 'make tests'"

# perf record runs with -B: collecting build-ids at its end aborts perf
# 6.1 on this kernel's MMAP2 records, as perf report does

# perf_record_require: exit 77 (skip) unless `perf record` works here
perf_record_require() {
	command -v perf >/dev/null || { echo "skip: no perf command"; exit 77; }
	if ! perf record -B -q -o "$WORK/.probe.data" -- true >/dev/null 2>"$WORK/.probe.err"; then
		case "$(cat "$WORK/.probe.err")" in
		*ermission*|*EACCES*|*EPERM*|*paranoid*|*"not supported"*)
			echo "skip: perf record refused here: $(head -n 1 "$WORK/.probe.err")"
			exit 77 ;;
		esac
		fail "perf record failed: $(cat "$WORK/.probe.err")"
	fi
}

# perf_rows FILE: perf's table of FILE (no children, no graphs).  perf 6.1
# aborts on the MMAP2 records kernel 6.18 flags with a bogus build-id
# (some recordings, not all): then perf reads a copy with the flag cleared
# (tests/tools/perfdata-fix-mmap2.py), and for compressed records, where
# that script cannot reach, a copy inflated by the zstd tool first
# (pdtool.py decompress); a note says so.  pipe always reads the file as
# it is.
perf_table() {
	perf report --stdio --no-children -g none --sort comm,dso,sym -i "$1" 2>/dev/null
}
# perf_ok_on FILE: perf report reads FILE whole (it may say "failed to
# process" and still exit 0), with perf_table's options: whether perf 6.1
# aborts on a flagged MMAP2 record depends on them (a default report read
# a busy machine's system-wide recording that the sorted one aborted on)
perf_ok_on() {
	local err

	err=$(perf report --stdio --no-children -g none --sort comm,dso,sym \
		-i "$1" 2>&1 >/dev/null) || return 1
	case "$err" in *"failed to process"*|*"Couldn't"*) return 1 ;; esac
}
# perf_readable FILE: prints FILE, or the copy of it perf can read
perf_readable() {
	local fix="$TOP/tests/tools/perfdata-fix-mmap2.py"

	if perf_ok_on "$1"; then
		echo "$1"
		return 0
	fi
	# the fix reaches pipe-mode files too (perf inject aborts on the same
	# records, so it cannot stand in)
	echo "note: perf report aborts on '$1': comparing with a fixed copy" >&2
	python3 "$fix" "$1" "$1.fixed" 2>/dev/null && perf_ok_on "$1.fixed" &&
		{ echo "$1.fixed"; return 0; }
	echo "note: and on the fixed copy: inflated by the zstd tool first" >&2
	python3 "$LIB4/pdtool.py" decompress "$1" "$1.plain" &&
		python3 "$fix" "$1.plain" "$1.plain.fixed" 2>/dev/null &&
		echo "$1.plain.fixed"
}
perf_rows() {
	local f

	f=$(perf_readable "$1") || return 1
	perf_table "$f"
}

# pipe_rows SPEC: pipe's table of source SPEC
pipe_rows() {
	"$PIPE" -q -s "$1" -k report
}

# same_rows A B [COMM]: the two tables agree row for row
same_rows() {
	if [ -n "${3:-}" ]; then
		python3 "$LIB4/rows.py" -c "$3" "$1" "$2" >rows.diff
	else
		python3 "$LIB4/rows.py" "$1" "$2" >rows.diff
	fi || fail "tables differ: $(cat rows.diff)"
}
