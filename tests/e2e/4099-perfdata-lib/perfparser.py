#!/usr/bin/env python3
"""perfparser.py OUT REPORT - hotspot's perfparser output against pipe's
report (sort=comm+dso+sym).

perfparser (hotspot-perfparser) writes "QPERFSTREAM\\0", a 4-byte stream
version, then messages: a little-endian u32 length, then a big-endian
QDataStream payload whose first byte is the message type.  Read here:
strings (5: id, bytes), locations (3: id, address, file, pid, line,
column, parent location id), symbols (4: location id, name string id,
...),
commands (2: pid, tid, time, cpu, comm string id) and samples (13: pid,
tid, time, cpu, frame location ids, guessed frames, (attr, period)
pairs).  Each sample's period goes to the command of its thread and the
symbol of its first frame (the symbol of a location without one is its
parent's).

Every report row of 0.5% or more in a user binary must be there within
0.1 points (kernel rows have no binary in perfparser's output; the vdso
it cannot read), the sample count must be equal; prints the top row.
"""
import collections
import re
import struct
import sys


def be(fmt, d, o):
    return struct.unpack_from('>' + fmt, d, o)


def parse(path):
    d = open(path, 'rb').read()
    if d[:12] != b'QPERFSTREAM\0':
        sys.exit('%s: not perfparser output' % path)
    strings, syms, comms, parents = {}, {}, {}, {}
    shares, samples, o = collections.Counter(), 0, 16
    while o + 4 <= len(d):
        n = struct.unpack_from('<I', d, o)[0]
        m = d[o + 4:o + 4 + n]
        o += 4 + n
        t = m[0]
        if t == 5:
            sid, ln = be('iI', m, 1)
            strings[sid] = m[9:9 + ln].decode(errors='replace')
        elif t == 3:
            lid, _, _, _, _, _, parent = be('iQiIiii', m, 1)
            parents[lid] = parent
        elif t == 4:
            lid, name, binary = be('iii', m, 1)
            syms[lid] = (name, binary)
        elif t == 2:
            pid, tid, _, _, comm = be('iiQIi', m, 1)
            comms[tid] = comm
        elif t == 13:
            pid, tid, _, _, nf = be('iiQII', m, 1)
            frames = be('%di' % nf, m, 25)
            p = 25 + 4 * nf + 1
            nv = be('I', m, p)[0]
            period = sum(be('iQ', m, p + 4 + 12 * i)[1] for i in range(nv))
            samples += 1
            leaf, hops = frames[0] if frames else None, 0
            while leaf not in syms and leaf in parents and hops < 64:
                leaf, hops = parents[leaf], hops + 1
            name, binary = syms.get(leaf, (None, None))
            name = strings.get(name, '[unknown]')
            # a thread without a command of its own has its process's
            comm = strings.get(comms.get(tid, comms.get(pid)), '?')
            shares[(comm, strings.get(binary, '?'), name)] += period
    total = sum(shares.values())
    return {k: 100.0 * v / total for k, v in shares.items()}, samples


def report(path):
    rows, samples = collections.Counter(), 0
    for line in open(path):
        m = re.match(r'# Samples: (\d+)', line)
        if m:
            samples += int(m.group(1))
        m = re.match(r'^\s+([0-9.]+)%\s+\d+\s+(\S+)\s+(\S+)\s+\[.\] (.*)$',
                     line)
        if m:
            rows[(m.group(2), m.group(3), m.group(4))] += float(m.group(1))
    return rows, samples


def main():
    a, na = parse(sys.argv[1])
    b, nb = report(sys.argv[2])
    bad = []
    if na != nb:
        bad.append('samples: perfparser %d, report %d' % (na, nb))
    for k, v in b.items():
        # the kernel's symbols perfparser names from kallsyms, no binary;
        # the vdso it cannot read (no file): neither is compared
        if k[1] in ('[kernel.kallsyms]', '[vdso]'):
            continue
        if v >= 0.5 and abs(a.get(k, 0) - v) > 0.1:
            bad.append('%s: perfparser %.2f%%, report %.2f%%' %
                       ('|'.join(k), a.get(k, 0), v))
    top = max(b, key=b.get)
    print('%d samples; top %s %.2f%% (perfparser %.2f%%)' %
          (na, '|'.join(top), b[top], a.get(top, 0)))
    if bad:
        print('\n'.join(bad))
        sys.exit(1)


if __name__ == '__main__':
    main()
