#!/usr/bin/env bash
# tests/bench/run.sh BUILD - run every benchmark (tests/bench/*.sh but
# this one), each printing its own table.  Not part of make test.
set -u
B=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
rc=0
for b in "$here"/*.sh; do
	[ "$(basename "$b")" = run.sh ] && continue
	echo "== $(basename "$b")"
	BUILD=$B TOP=$(dirname "$(dirname "$here")") bash "$b" || rc=1
	echo
done
exit $rc
