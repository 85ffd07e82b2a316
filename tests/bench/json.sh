#!/usr/bin/env bash
# json.sh - the json sink against perf data convert --to-json: the
# bundled burn workload (2 threads) recorded by pipe and by perf in turn
# at 10 kHz, at two lengths (BENCH_JSON_MS, default 5000 and 50000 ms:
# about 100k and 1M samples); whole runs side by side (pipe's CPU over
# perf's at each size; target 0.2x, peak RSS below perf's), time per
# sample from the difference of the two runs (fixed cost apart), and
# bytes per sample as written and minified.  CPU time, best of
# BENCH_RUNS (5).  Needs perf_event_open and perf.
set -u
: "${BUILD:?}" "${TOP:?}"
PIPE=$BUILD/pipe burn=$BUILD/tests/workloads/burn
. "$TOP/tests/bench/common.bash"
# BENCH_DIR=DIR keeps the recordings in DIR and reuses those found there
if [ -n "${BENCH_DIR:-}" ]; then
	W=$BENCH_DIR
	mkdir -p "$W"
else
	W=$(mktemp -d "${TMPDIR:-/tmp}/pipe-bench-json.XXXXXX")
	trap 'rm -rf "$W"' EXIT
fi
cd "$W" || exit 1
bench_need_perf
MS=${BENCH_JSON_MS:-5000 50000}
for ms in $MS; do
	[ -s "p$ms.dat" ] && [ -s "f$ms.data" ] && continue
	"$PIPE" -q -s perf:event=cpu-clock,freq=10000 -k "file:p$ms.dat" -- "$burn" $ms 2 || exit 1
	perf record -q -e cpu-clock -F 10000 -g --sample-cpu -B -N --no-bpf-event \
		-o "raw$ms.data" -- "$burn" $ms 2 >/dev/null 2>&1 || exit 1
	python3 "$TOP/tests/tools/perfdata-fix-mmap2.py" "raw$ms.data" "f$ms.data" >/dev/null || exit 1
done
python3 - "$PIPE" "${BENCH_RUNS:-5}" $MS <<'PY'
import json, os, resource, subprocess, sys
pipe = sys.argv[1]
runs = int(sys.argv[2])
sizes = [int(v) for v in sys.argv[3:5]]
def run(cmd, n=runs):
    best = None
    for _ in range(n):
        r = subprocess.run(["python3", "-c", """
import resource, subprocess, sys
b = resource.getrusage(resource.RUSAGE_CHILDREN)
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(u.ru_utime + u.ru_stime - b.ru_utime - b.ru_stime, u.ru_maxrss)"""] + cmd, capture_output=True,
            text=True, check=True)
        cpu, rss = r.stdout.split()
        cur = (float(cpu), int(rss))
        best = cur if best is None or cur[0] < best[0] else best
    return best
def count(path):
    d = json.load(open(path, encoding="utf-8"))
    n = len(d["samples"])
    mini = len(json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode())
    return n, os.path.getsize(path), mini
rows = {}
whole = {}
cases = {
    "perf data convert --to-json": lambda ms: ["perf", "data", "convert", "--force",
        "-i", "f%d.data" % ms, "--to-json", "o.json"],
    "json": lambda ms: [pipe, "-q", "-s", "file:p%d.dat" % ms, "-k", "json:o.json,force=on"],
    "json compact=on": lambda ms: [pipe, "-q", "-s", "file:p%d.dat" % ms, "-k",
        "json:o.json,force=on,compact=on"],
    "json symbols=off": lambda ms: [pipe, "-q", "-s", "file:p%d.dat" % ms, "-k",
        "json:o.json,force=on,symbols=off"],
}
print("%-28s %10s %12s %12s %10s %10s" % ("", "us/sample", "RSS small", "RSS 10x",
                                           "B/sample", "minified"))
base = None
for name, mk in cases.items():
    pts = []
    for ms in sizes:
        cpu, rss = run(mk(ms))
        n, size, mini = count("o.json")
        pts.append((cpu, rss, n, size, mini))
        whole[(name, ms)] = (cpu, rss, n)
    (c1, r1, n1, s1, m1), (c2, r2, n2, s2, m2) = pts
    us = (c2 - c1) / (n2 - n1) * 1e6
    base = base or us
    print("%-28s %10.2f %10d K %10d K %10.1f %10.1f   (%.2fx)" % (
        name, us, r1, r2, s2 / n2, m2 / n2, us / base))
perf = "perf data convert --to-json"
for ms in sizes:
    fc, fr, fn = whole[(perf, ms)]
    for name in cases:
        if name == perf:
            continue
        pc, pr, pn = whole[(name, ms)]
        print("whole run, %d ms (%d samples): %s / perf CPU %.3fx (%.3f s / %.3f s), "
              "peak RSS %.2fx" % (ms, pn, name, pc / fc, pc, fc, pr / fr))
PY
