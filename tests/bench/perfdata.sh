#!/usr/bin/env bash
# perfdata.sh - perf.data in and out, and pprof out: the bundled burn
# workload recorded by perf record -g (perf.data) and by pipe (pipe
# file) at two lengths (10x the samples).  Reading: pipe -s perfdata
# into report and into null, against perf report on the same file.
# Writing: the perfdata and pprof sinks against json format=lines from
# the same pipe file.  CPU time (user+sys), best of 5; whole runs of the
# long recording and per-sample slopes from the difference of the two.
# Needs perf_event_open and perf.
set -u
: "${BUILD:?}" "${TOP:?}"
PIPE=$BUILD/pipe burn=$BUILD/tests/workloads/burn
. "$TOP/tests/bench/common.bash"
W=$(mktemp -d "${TMPDIR:-/tmp}/pipe-bench-perfdata.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
bench_need_perf
for ms in 1000 10000; do
	perf record -q -e cpu-clock -g -B -N --no-bpf-event -o "r$ms.data" \
		-- "$burn" $ms 2 >/dev/null 2>&1 || exit 1
	# perf 6.1 aborts on this kernel's MMAP2 records: it reads a fixed
	# copy (docs/performance.md), pipe the file as recorded
	python3 "$TOP/tests/tools/perfdata-fix-mmap2.py" "r$ms.data" "f$ms.data" 2>/dev/null || exit 1
	"$PIPE" -q -s perf:event=cpu-clock -k "file:p$ms.dat" -- "$burn" $ms 2 || exit 1
done
python3 - "$PIPE" <<'PY'
import subprocess, sys
pipe = sys.argv[1]
def run(cmd, n=5):
    best = None
    for _ in range(n):
        r = subprocess.run(["python3", "-c", """
import resource, subprocess, sys
b = resource.getrusage(resource.RUSAGE_CHILDREN)
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(u.ru_utime + u.ru_stime - b.ru_utime - b.ru_stime)"""] + cmd, capture_output=True, text=True, check=True)
        cpu = float(r.stdout)
        best = cpu if best is None else min(best, cpu)
    return best
def samples(spec):
    out = subprocess.run([pipe, "-q", "-s", spec, "-k", "null"], capture_output=True,
                         text=True, check=True).stdout
    return int([l for l in out.splitlines() if l.startswith("samples:")][0].split()[1])
def table(title, cases, spec, base_name):
    n1, n2 = samples(spec % 1000), samples(spec % 10000)
    print(title + " (%d and %d samples)" % (n1, n2))
    print("%-44s %9s %9s %11s" % ("", "whole s", "us/sample", "vs " + base_name))
    res = {}
    for name, mk in cases:
        c1, c2 = run(mk(1000)), run(mk(10000))
        res[name] = (c2, (c2 - c1) / (n2 - n1) * 1e6)
    bw, bs = res[base_name]
    for name, (w, s) in res.items():
        print("%-44s %9.3f %9.2f %5.2fx %5.2fx" % (name, w, s, w / bw, s / bs))
    print()
table("reading perf.data", [
    ("perf report --stdio", lambda ms: ["perf", "report", "--stdio", "-i", "f%d.data" % ms]),
    ("perf report --stdio --no-children -g none", lambda ms: ["perf", "report",
        "--stdio", "--no-children", "-g", "none", "-i", "f%d.data" % ms]),
    ("pipe -s perfdata -k report", lambda ms: [pipe, "-q", "-s", "perfdata:r%d.data" % ms,
        "-k", "report"]),
    ("pipe -s perfdata -k null", lambda ms: [pipe, "-q", "-s", "perfdata:r%d.data" % ms,
        "-k", "null:print=off"]),
], "perfdata:r%d.data", "perf report --stdio")
table("writing from a pipe file", [
    ("json format=lines", lambda ms: [pipe, "-q", "-s", "file:p%d.dat" % ms, "-k",
        "json:o.json,format=lines,force=on"]),
    ("perfdata", lambda ms: [pipe, "-q", "-s", "file:p%d.dat" % ms, "-k",
        "perfdata:o.data,force=on"]),
    ("perfdata compress=3", lambda ms: [pipe, "-q", "-s", "file:p%d.dat" % ms, "-k",
        "perfdata:o.data,force=on,compress=3"]),
    ("pprof", lambda ms: [pipe, "-q", "-s", "file:p%d.dat" % ms, "-k",
        "pprof:o.pb.gz,force=on"]),
    ("null (reading the pipe file alone)", lambda ms: [pipe, "-q", "-s",
        "file:p%d.dat" % ms, "-k", "null:print=off"]),
], "file:p%d.dat", "json format=lines")
PY
