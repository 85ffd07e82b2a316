#!/usr/bin/env bash
# container.sh - what the bus and the container cost per record:
#   A: synth -> null                      (source + bus + merge)
#   B: synth -> file (codec none, tmpfs)  (A + block builder + writer)
#   C: file -> null                       (reader + merge + bus)
#   V1, V2: pipe verify --threads 1 and 2 of the same file (287 MB raw)
#   I: pipe info of a file of about 1 GB (BENCH_INFO_RECORDS, 7.5M records)
#   F: the floor, read_floor.c: the file mapped and hashed once with XXH3,
#      and its parts (mapping, read(), hashing bytes in memory)
# write cost = (B - A) / records, read cost = C / records, both in ns.
# CPU time (user+sys), medians of 5 runs; verify and info also wall time
# (verify's under SCHED_FIFO, see below).
# Targets: read under 50 ns per record, verify's per-stream path under
# 20 ns, verify --threads 2 at least 1.6x --threads 1 (wall), info of
# 1 GB under 20 ms.
set -u
PIPE=$BUILD/pipe
N=${BENCH_RECORDS:-2000000}
# BENCH_TMP: where the files go (default /dev/shm, tmpfs; what mapping
# a page costs depends on the file system, see docs/performance.md)
dir=$(mktemp -d "${BENCH_TMP:-/dev/shm}/pipe-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
calc() { awk "BEGIN { printf \"%.6f\\n\", $* }"; }
# CPU seconds (user + sys) of one run: steadier than wall time on a
# shared machine, and what a recorder or reader costs
t() {
	local TIMEFORMAT='%3U %3S' out
	out=$( { time "$@" >/dev/null 2>&1; } 2>&1 ) || { echo "failed: $*" >&2; exit 1; }
	calc "${out% *} + ${out#* }"
}
# wall seconds of one run
w() {
	local TIMEFORMAT='%3R' out
	out=$( { time "$@" >/dev/null 2>&1; } 2>&1 ) || { echo "failed: $*" >&2; exit 1; }
	echo "$out"
}
A=$(for i in 1 2 3 4 5; do t "$PIPE" -q -s "synth:$N" -k null:print=off; done | med)
B=$(for i in 1 2 3 4 5; do rm -f "$dir/x.dat"; t "$PIPE" -q -s "synth:$N" -c none -k "file:$dir/x.dat"; done | med)
C=$(for i in 1 2 3 4 5; do t "$PIPE" -q -s "file:$dir/x.dat" -k null:print=off; done | med)
R=$("$PIPE" info "$dir/x.dat" | sed -n 's/^records: //p')
printf 'records: %s (synth:%s, 2 CPUs, codec none, in %s: %s)\n' "$R" "$N" "${BENCH_TMP:-/dev/shm}" "$(stat -f -c %T "$dir")"
printf '%-34s %8.3f s  %8.1f Mrec/s\n' "A synth -> null" "$A" "$(calc "$R / $A / 1e6")"
printf '%-34s %8.3f s  %8.1f Mrec/s\n' "B synth -> file" "$B" "$(calc "$R / $B / 1e6")"
printf '%-34s %8.3f s  %8.1f Mrec/s\n' "C file -> null" "$C" "$(calc "$R / $C / 1e6")"
printf 'write cost (B-A)/rec: %.1f ns   read cost C/rec: %.1f ns   bus+merge A/rec: %.1f ns\n' \
	"$(calc "($B - $A) * 1e9 / $R")" "$(calc "$C * 1e9 / $R")" "$(calc "$A * 1e9 / $R")"
V1=$(for i in 1 2 3 4 5; do t "$PIPE" verify --threads 1 "$dir/x.dat"; done | med)
V2=$(for i in 1 2 3 4 5; do t "$PIPE" verify --threads 2 "$dir/x.dat"; done | med)
# verify's wall time, --threads 1 against --threads 2: a ratio of two
# threads needs two CPUs free of other load.  30 alternating runs of
# each, spawned by a launcher under SCHED_FIFO (other load on the machine
# waits while they run; it falls back to normal scheduling when that is
# not allowed), and during each --threads 1 run the other CPU is held
# by a real-time shell loop (no memory traffic) and the reader pinned to
# CPU 0, so that no other load shares the machine with it either.
# Prints the medians in seconds, and whether it ran real-time.
wall_pair() {
	python3 - "$PIPE" "$dir/x.dat" "${BENCH_WALL_RUNS:-30}" <<'PY'
import os, signal, statistics, sys, time
pipe, path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
    rt = "SCHED_FIFO"
except OSError:
    rt = "normal scheduling"
null = os.open(os.devnull, os.O_WRONLY)
def run(argv):
    t = time.monotonic()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
    if os.waitpid(pid, 0)[1]:
        sys.exit("failed: %s" % " ".join(argv))
    return time.monotonic() - t
two = os.cpu_count() >= 2
w = {1: [], 2: []}
for i in range(runs):
    hold = None
    if two:
        hold = os.posix_spawnp("taskset", ["taskset", "-c", "1", "sh", "-c",
                                           "while :; do :; done"], os.environ)
        time.sleep(0.005)
    w[1].append(run(["/usr/bin/env", "taskset", "-c", "0", pipe, "verify",
                     "--threads", "1", path] if two else
                    [pipe, "verify", "--threads", "1", path]))
    if hold:
        os.kill(hold, signal.SIGKILL)
        os.waitpid(hold, 0)
    w[2].append(run([pipe, "verify", "--threads", "2", path]))
print("%.4f %.4f %s" % (statistics.median(w[1]), statistics.median(w[2]), rt))
PY
}
read -r W1 W2 WRT <<< "$(wall_pair)" || { echo "failed: verify wall" >&2; exit 1; }
printf 'verify CPU/rec: --threads 1 %.1f ns, --threads 2 %.1f ns; wall %.3f s / %.3f s = %.2fx (medians, %s)\n' \
	"$(calc "$V1 * 1e9 / $R")" "$(calc "$V2 * 1e9 / $R")" "$W1" "$W2" "$(calc "$W1 / $W2")" "${WRT:-?}"
# the floor: the file mapped and every byte hashed once (XXH3, 256 KiB
# at a time), as any reader that checks every checksum must; and its
# parts: mapping alone (one byte a page), read() into one buffer and
# hashing it, hashing bytes already in memory (what is left with no
# page to map: memory bandwidth and XXH3).  read_floor prints the CPU
# seconds of the part it measures.
if cc -O2 -std=c11 -D_GNU_SOURCE -o "$dir/read_floor" \
	"$(dirname "$0")/read_floor.c" -lxxhash 2>/dev/null; then
	fl() { for i in 1 2 3 4 5; do "$dir/read_floor" "$dir/x.dat" 262144 "$1" | cut -d' ' -f1; done | med; }
	F=$(fl map-hash)
	printf 'floor (map + XXH3 of every byte): %.1f ns/rec; C - floor %.1f ns, V1 - floor %.1f ns\n' \
		"$(calc "$F * 1e9 / $R")" "$(calc "($C - $F) * 1e9 / $R")" \
		"$(calc "($V1 - $F) * 1e9 / $R")"
	printf 'floor parts, ns/rec: map alone %.1f, read() + XXH3 %.1f, XXH3 of bytes in memory %.1f\n' \
		"$(calc "$(fl map-touch) * 1e9 / $R")" "$(calc "$(fl read-hash) * 1e9 / $R")" \
		"$(calc "$(fl mem-hash) * 1e9 / $R")"
fi
rm -f "$dir/x.dat"
NI=${BENCH_INFO_RECORDS:-7500000}
"$PIPE" -q -s "synth:$NI" -c none -k "file:$dir/g.dat" || { echo "failed: synth:$NI" >&2; exit 1; }
IC=$(for i in 1 2 3 4 5; do t "$PIPE" info "$dir/g.dat"; done | med)
IW=$(for i in 1 2 3 4 5; do w "$PIPE" info "$dir/g.dat"; done | med)
printf 'info of %.2f GB (%s): %.1f ms CPU, %.1f ms wall (median of 5)\n' \
	"$(calc "$(stat -c %s "$dir/g.dat") / 1e9")" \
	"$("$PIPE" info "$dir/g.dat" | sed -n 's/^counted_from: /counted from /p')" \
	"$(calc "$IC * 1e3")" "$(calc "$IW * 1e3")"
