#!/usr/bin/env python3
"""damage.py MODE FILE - damage FILE many ways and check that `pipe info --scan`
agrees with the Python oracle (tests/tools/pipefile.py) on every variant.

  cuts   the file cut at hundreds of offsets: exactly the DATA blocks
         complete before the cut are read, recovered: yes, one torn line
  flips  one byte flipped at hundreds of positions (file header, block
         headers, payloads, index, trailers): never a crash, the same
         counts as the oracle, one stderr line per damage
  payload-flips  the same in payloads only (the middle of each block, and
         a stride over the file), for a codec's file whose headers
         `flips` has already covered on a stored file
Needs PIPE and TOP in the environment.  Exit 0 when all agree.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOP"], "tests", "tools"))
import pipefile  # noqa: E402

PIPE = os.environ["PIPE"]
KEYS = ("records", "samples", "blocks", "damaged_blocks", "damaged_records",
        "torn_bytes", "recovered")


# On the ASan build, LeakSanitizer's check at exit is a third of the
# CPU of a start of pipe: it runs on the variants the layout picks (block
# edges, every header field) and on every fifth of the stride's, which
# mostly repeat the payload and header paths of the others.
NO_LEAK_CHECK = dict(os.environ, ASAN_OPTIONS="detect_leaks=0" + (
    ":" + os.environ["ASAN_OPTIONS"] if os.environ.get("ASAN_OPTIONS") else ""))


def run_info(path, leak_check=True):
    p = subprocess.run([PIPE, "info", "--scan", path], capture_output=True, text=True,
                       timeout=60, env=None if leak_check else NO_LEAK_CHECK)
    vals = {}
    for line in p.stdout.splitlines():
        k, _, v = line.partition(": ")
        vals[k] = v
    return p.returncode, vals, [l for l in p.stderr.splitlines() if l]


def oracle(data, name):
    try:
        return pipefile.PipeFile(data, name)
    except pipefile.Unreadable as e:
        return str(e)


def put(name, data):
    # a new file each time: ext4 writes a file truncated and rewritten
    # out to the disk when it is closed (auto_da_alloc), milliseconds
    # a variant
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass
    with open(name, "wb") as f:
        f.write(data)


def check(data, name, what, errors, want_records=None, leak_check=True):
    put(name, data)
    rc, vals, err = run_info(name, leak_check)
    o = oracle(data, name)
    if isinstance(o, str):
        if rc != 1 or len(err) < 1 or not err[0].startswith(
                "pipe: cannot read '%s'" % name):
            errors.append("%s: oracle says '%s', pipe exit %d: %s"
                          % (what, o, rc, err))
        return
    if rc != 0:
        errors.append("%s: pipe info exit %d: %s" % (what, rc, err))
        return
    for k in KEYS:
        if str(o.tot[k]) != vals.get(k):
            errors.append("%s: %s is %s, oracle says %s"
                          % (what, k, vals.get(k), o.tot[k]))
    lines = o.tot["damaged_blocks"] + (1 if o.tot["torn_bytes"] else 0)
    if len(err) != lines or any(not l.startswith("pipe: ") for l in err):
        errors.append("%s: %d stderr lines, want %d: %s"
                      % (what, len(err), lines, err))
    if want_records is not None and vals.get("records") != str(want_records):
        errors.append("%s: %s records, want %d"
                      % (what, vals.get("records"), want_records))


def cuts(data, layout, errors):
    first = layout[0][1]                    # end of the META block
    stride = list(range(0, len(data), max(1, len(data) // 250)))
    edges = set([b for _, b, _, _ in layout] +
                [a + 8 for a, _, _, _ in layout] +
                [b - 1 for _, b, _, _ in layout])
    offs = sorted(set(stride) | edges)
    leaky = edges | set(stride[::5])
    n = 0
    for cut in offs:
        if cut >= len(data):
            continue
        want = sum(r for a, b, t, r in layout if b <= cut and t == 2)
        check(data[:cut], "cut.dat", "cut at %d" % cut, errors,
              want if cut >= first else None, cut in leaky)
        n += 1
    # streamed through a pipe: the same records for a few cuts
    for cut in offs[::25]:
        if cut < first:
            continue
        put("cut.dat", data[:cut])
        with open("cut.dat", "rb") as f:
            p = subprocess.run([PIPE, "-q", "-s", "file:-", "-k", "null"],
                               stdin=f, capture_output=True, text=True)
        want = sum(r for a, b, t, r in layout if b <= cut and t == 2)
        if "records: %d" % want not in p.stdout.splitlines():
            errors.append("stdin cut at %d: %s %s" % (cut, p.stdout,
                                                      p.stderr))
    return n


def flips(data, layout, errors, headers=True):
    pos = set(range(0, 64, 5)) if headers else set()
    for i, (a, b, t, r) in enumerate(layout):
        some = [(a + b) // 2]
        if headers:
            some += [a + 4, a + 33, a + 66, b - 16, b - 1]
        if headers and (i % 3 == 0 or t != 2):
            some += [a, a + 6, a + 9, a + 17, a + 41, a + 50, a + 75, a + 81,
                     a + 90, a + 100, b - 20, b - 9]
        pos.update(some)
    stride = list(range(0, len(data), max(1, len(data) // 150)))
    leaky = pos | set(stride[::5])
    pos.update(stride)
    n = 0
    for p in sorted(x for x in pos if x < len(data)):
        d = bytearray(data)
        d[p] ^= 0x10
        check(bytes(d), "flip.dat", "flip at %d" % p, errors,
              leak_check=p in leaky)
        n += 1
    return n


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        data = f.read()
    pf = pipefile.PipeFile(data, path)
    layout = [(b["off"], b["off"] + b["total"], b["type"], b["records"])
              for b, _ in pf.blocks]
    errors = []
    if mode == "cuts":
        n, least = cuts(data, layout, errors), 200
    elif mode == "flips":
        n, least = flips(data, layout, errors), 200
    else:
        n, least = flips(data, layout, errors, headers=False), 100
    for e in errors[:20]:
        print(e)
    print("%s: %d variants, %d disagreements" % (mode, n, len(errors)))
    return 1 if errors or n < least else 0


if __name__ == "__main__":
    sys.exit(main())
