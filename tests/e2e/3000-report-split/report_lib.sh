# report_lib.sh - helpers for the report e2e cases (sourced after lib.sh).
# fixtures: build tests/fixtures into $BUILD/tests/fixtures, set FX.
# row_pct TEXT SYMBOL: the overhead of the row whose symbol is SYMBOL.
# near A B PTS: |A - B| <= PTS (decimals allowed).
fixtures() {
	FX=$BUILD/tests/fixtures
	mkdir -p "$FX"
	make -s -C "$TOP/tests/fixtures" OUT="$FX" >/dev/null ||
		fail "cannot build the fixtures"
}

row_pct() {
	printf '%s\n' "$1" | awk -v s="$2" '
		/^#/ { next }
		{ n = split($0, f, /\[[.k]\] /) }
		n == 2 && f[2] == s { sub(/%/, "", $1); print $1; exit }'
}

near() {
	awk -v a="$1" -v b="$2" -v p="$3" \
		'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= p) }'
}
