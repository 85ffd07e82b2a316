# report_lib.sh - helpers for the report e2e cases (sourced after lib.sh).
# fixtures: build tests/fixtures into $BUILD/tests/fixtures, set FX.
# row_pct TEXT SYMBOL: the overhead of the row whose symbol is SYMBOL.
# near A B PTS: |A - B| <= PTS (decimals allowed).
# table_rows, check_shares, compare_shares: statistical checks, below.
# one case at a time brings them up to date (cases run in parallel: a
# binary relinked while another case records it would unwind nothing)
fixtures() {
	FX=$BUILD/tests/fixtures
	mkdir -p "$FX"
	flock "$FX/.lock" make -s -C "$TOP/tests/fixtures" OUT="$FX" >/dev/null ||
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

# Statistical checks on live recordings.  A busy machine adds kernel rows
# (scheduling, the workload's own clock reads) and stretches runs, so the
# designed rows are checked by their shares among themselves, never by
# absolute percentages, with an interval sized for their sample count:
# 4.5 binomial standard errors plus 1 point for the workload's own
# granularity (about 1 failure in 100,000 checks of a correct pipe).
#
# table_rows FILE [N]: "samples|key" for each row of the Nth table
# (default 1) of a report with a Samples column (pipe's, or perf's with
# -n); key is the sort columns and the symbol joined by '|', C++
# parameters cut: "split_main|libsplit.so|split_lib_work".
table_rows() {
	awk -v want="${2:-1}" '
		/^# Samples: / { t++ }
		t == want && /^ *[0-9.]+% +[0-9]+ / {
			if (!match($0, / \[[^]]\] /)) next
			sym = substr($0, RSTART + RLENGTH); sub(/\(.*/, "", sym)
			m = split(substr($0, 1, RSTART), f, " ")
			key = ""
			for (i = 3; i <= m; i++) key = key f[i] "|"
			print $2 "|" key sym
		}' "$1"
}

# check_shares FILE N WANT...: WANT is "PERCENT|key"; the designed
# shares must add up to 100.  Also fails when another row holds more
# than a third of the smallest designed row's samples: a row of the
# kernel's own functions ([kernel.kallsyms], a symbol) is the machine's
# and not held to that (a hypervisor's busy host put 7% of the samples
# of split_main, in perf's recording too, on pvm_irq_enable, where a
# timer interrupt held back while interrupts were off lands); a kernel
# row without a symbol (an address: a user address taken for the
# kernel's would be one) is.
check_shares() {
	local f=$1 n=$2; shift 2
	table_rows "$f" "$n" | awk -F'|' -v spec="$(printf '%s\n' "$@")" '
		BEGIN { k = split(spec, w, "\n")
			for (i = 1; i <= k; i++) { j = index(w[i], "|")
				want[substr(w[i], j + 1)] = substr(w[i], 1, j - 1) / 100 } }
		{ s = $1; key = substr($0, length(s) + 2)
		  if (key in want) got[key] += s
		  else if (key ~ /(^|\|)\[kernel\.kallsyms\]\|/ && key !~ /\|0x[0-9a-f]+$/) kernel += s
		  else if (s > other) { other = s; okey = key } }
		END { for (key in want) total += got[key]
			if (total < 30) { print "only " total " samples in the designed rows"; exit 1 }
			small = total
			for (key in want) {
				p = got[key] / total; e = want[key]
				tol = 4.5 * sqrt(e * (1 - e) / total) + 0.01
				d = p - e; if (d < 0) d = -d
				printf "%s: %.2f%% of %d, want %.0f +- %.2f\n", key, 100 * p, total, 100 * e, 100 * tol
				if (d > tol) bad = 1
				if (got[key] < small) small = got[key]
			}
			printf "kernel functions: %d samples\n", kernel
			if (other * 3 > small) { print "undesigned row " okey ": " other " samples"; bad = 1 }
			exit bad }' > "$WORK/.shares" ||
		{ cat "$f" >&2; fail "$f table $n: designed shares off: $(cat "$WORK/.shares")"; }
}

# compare_shares A B KEY...: the shares of KEY... among themselves in
# table 1 of reports A and B agree within 4.5 standard errors of their
# difference plus 1 point.
compare_shares() {
	local a=$1 b=$2; shift 2
	{ table_rows "$a" | sed 's/^/a|/'; table_rows "$b" | sed 's/^/b|/'; } |
	awk -F'|' -v spec="$(printf '%s\n' "$@")" '
		BEGIN { k = split(spec, w, "\n"); for (i = 1; i <= k; i++) keys[w[i]] = 1 }
		{ key = substr($0, length($1) + length($2) + 3)
		  if (key in keys) { got[$1, key] += $2; tot[$1] += $2 } }
		END { if (tot["a"] < 30 || tot["b"] < 30) { print "too few samples"; exit 1 }
			for (key in keys) {
				pa = got["a", key] / tot["a"]; pb = got["b", key] / tot["b"]
				p = (pa + pb) / 2
				tol = 4.5 * sqrt(p * (1 - p) * (1 / tot["a"] + 1 / tot["b"])) + 0.01
				d = pa - pb; if (d < 0) d = -d
				printf "%s: %.2f%% of %d vs %.2f%% of %d, +- %.2f\n", key,
					100 * pa, tot["a"], 100 * pb, tot["b"], 100 * tol
				if (d > tol) bad = 1
			}
			exit bad }' > "$WORK/.shares" ||
		fail "$a and $b disagree: $(cat "$WORK/.shares")"
}
