#!/usr/bin/env python3
"""rows.py A B - compare two report tables row for row: `pipe -k report`
or `perf report --stdio --no-children` output, per event.

Columns are cut where the dotted line under the header puts them (a
command may hold spaces); perf's Samples-less table and pipe's are both
read.  An unresolved address is shown by perf as 0x%016x and by pipe as
'[unknown] BIN+0xOFF': both become the bare hex.  Rows are compared as
sorted sets of (overhead, command, object, symbol).  Exit 1 with the
differences, 0 when equal (a row held twice, as two functions of one
name, must be there twice on both sides); `rows.py -p A` prints A's rows; `-c COMM`
first keeps only the rows of that command.
"""
import re
import sys
from collections import Counter


def columns(dots):
    spans, i = [], 0
    while True:
        s = dots.find('.', i)
        if s < 0:
            return spans
        e = s
        while e < len(dots) and dots[e] == '.':
            e += 1
        spans.append((s, e))
        i = e


def norm_sym(s):
    s = s.strip()
    m = re.match(r'\[(.)\] (.*)$', s)
    if m:
        s = m.group(2)
    m = re.match(r'\[unknown\] (?:\S+\+)?0x([0-9a-f]+)$', s)
    if m:
        return '0x%x' % int(m.group(1), 16)
    m = re.match(r'0x([0-9a-f]+)$', s)
    if m:
        return '0x%x' % int(m.group(1), 16)
    return s


def parse(path):
    tables, ev, spans, names = {}, None, None, None
    lines = open(path, errors='replace').read().splitlines()
    for n, line in enumerate(lines):
        m = re.match(r"# Samples: .* of event '([^']*)'", line)
        if m:
            ev = m.group(1)
            tables.setdefault(ev, [])
            continue
        if line.startswith('# ....'):
            spans = columns(line)
            names = [lines[n - 1][s:e + 40].split()[0] if lines[n - 1][s:].split() else ''
                     for s, e in spans]
            continue
        if not spans or ev is None or not re.match(r'^ +[0-9.]+% ', line):
            continue
        cells = []
        for k, (s, e) in enumerate(spans):
            end = spans[k + 1][0] if k + 1 < len(spans) else len(line)
            cells.append(line[s:end].strip() if k + 1 < len(spans)
                         else line[s:])
        row = dict(zip(names, cells))
        tables[ev].append('%s|%s|%s|%s' % (
            row['Overhead'], row['Command'], row['Shared'],
            norm_sym(row['Symbol'])))
    return {k: sorted(v) for k, v in tables.items()}


def kallsyms():
    """name -> address of the running kernel (aliases share an address)"""
    addrs = {}
    try:
        for line in open('/proc/kallsyms'):
            a, _, name = line.split()[:3]
            addrs.setdefault(name, int(a, 16))
    except OSError:
        pass
    return addrs


KSYMS = None


def aliases(r, x):
    """two rows naming one address: perf and pipe pick different aliases
    of a kernel symbol (__pi___x86_indirect_thunk_rax is
    __x86_indirect_thunk_rax), or perf names a PLT stub (name@plt) that
    pipe leaves unresolved"""
    global KSYMS
    # pipe names the PLT's header .plt; perf 6.1 credits it to _init,
    # the zero-sized symbol just before it
    if {r.rsplit('|', 1)[1], x.rsplit('|', 1)[1]} == {'.plt', '_init'}:
        return True
    if r.endswith('@plt') or x.endswith('@plt'):
        return True
    if '|[kernel.kallsyms]|' not in r:
        return False
    if KSYMS is None:
        KSYMS = kallsyms()
    a = KSYMS.get(r.rsplit('|', 1)[1])
    return a is not None and a != 0 and a == KSYMS.get(x.rsplit('|', 1)[1])


def main():
    if sys.argv[1] == '-c':  # -c COMM A B: only that command's rows
        comm = sys.argv[2]
        del sys.argv[1:3]
        global parse
        whole = parse
        parse = lambda p: {e: [r for r in v if r.split('|')[1] == comm]
                           for e, v in whole(p).items()}
    if sys.argv[1] == '-p':
        for ev, rows in parse(sys.argv[2]).items():
            for r in rows:
                print('%s|%s' % (ev, r))
        return 0
    a, b = parse(sys.argv[1]), parse(sys.argv[2])
    bad = 0
    if sorted(a) != sorted(b):
        print('events differ: %s vs %s' % (sorted(a), sorted(b)))
        return 1
    for ev in a:
        if not a[ev]:
            print('%s: no rows' % ev)
            bad = 1
        ca, cb = Counter(a[ev]), Counter(b[ev])
        # a row of the same share, command and object naming the same
        # address another way is the same row
        only_a, only_b = ca - cb, cb - ca
        for r in sorted(only_a.elements()):
            key = r.rsplit('|', 1)[0]
            twin = [x for x in +only_b if x.rsplit('|', 1)[0] == key and
                    aliases(r, x)]
            if twin:
                print('note: %s: %s is %s' % (ev, r, twin[0]))
                only_b[twin[0]] -= 1
                only_a[r] -= 1
        for r in sorted((+only_a).elements()):
            print('%s: only in %s: %s' % (ev, sys.argv[1], r))
            bad = 1
        for r in sorted((+only_b).elements()):
            print('%s: only in %s: %s' % (ev, sys.argv[2], r))
            bad = 1
    return bad


if __name__ == '__main__':
    sys.exit(main())
