#!/usr/bin/env python3
"""pprof.py - compare `go tool pprof` output with pipe's report.

  pprof.py top TOP REPORT EVENT   -top flat% per function against the
                                  report (sort=sym) rows of EVENT: every
                                  function within 0.1 points, and the same
                                  set of functions at 0.1% and more
  pprof.py traces TRACES FOLDED   -traces stacks and counts (run with
                                  -sample_index=EVENT_samples) against
                                  report:format=folded,inline=on: equal
                                  (pprof's "NAME (inline)" is the
                                  report's "NAME (inlined)")
  pprof.py leaves TRACES          every -traces stack is one frame: one
                                  location, its inlined levels apart
"""
import collections
import re
import sys


def top(path):
    shares, on = collections.Counter(), False
    for line in open(path):
        if re.match(r'^\s+flat\s+flat%', line):
            on = True
            continue
        if not on or not line.strip():
            continue
        cells = line.split(None, 5)
        if len(cells) < 6:
            continue
        shares[cells[5].rstrip('\n')] += float(cells[1].rstrip('%'))
    return shares


def report(path, event):
    shares, ev = collections.Counter(), None
    for line in open(path):
        m = re.match(r"# Samples: .* of event '([^']*)'", line)
        if m:
            ev = m.group(1)
            continue
        m = re.match(r'^\s+([0-9.]+)%\s+\d+\s+\[.\] (.*)$', line)
        if m and ev == event:
            shares[m.group(2)] += float(m.group(1))
    return shares


def inlined(name):
    return name[:-len(' (inline)')] + ' (inlined)' if name.endswith(' (inline)') else name


def traces(path):
    out, comm, stack, val = collections.Counter(), None, [], 0

    def flush():
        if stack:
            out[(comm,) + tuple(reversed(stack))] += val
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('-----------+'):
            flush()
            stack, comm = [], None
            continue
        m = re.match(r'^\s+comm:\s+(.*)$', line)
        if m:
            comm = m.group(1)
            continue
        if re.match(r'^\s+(pid|tid):', line):
            continue
        m = re.match(r'^\s{0,10}(\d+)\s{3}(.*)$', line)
        if m and not stack:
            val, stack = int(m.group(1)), [inlined(m.group(2))]
            continue
        m = re.match(r'^\s{13}(.*)$', line)
        if m and stack:
            stack.append(inlined(m.group(1)))
    flush()
    return out


def folded(path):
    out = collections.Counter()
    for line in open(path):
        s, n = line.rstrip('\n').rsplit(' ', 1)
        out[tuple(s.split(';'))] += int(n)
    return out


def main():
    bad = []
    if sys.argv[1] == 'top':
        a, b = top(sys.argv[2]), report(sys.argv[3], sys.argv[4])
        if not a or not b:
            sys.exit('no rows: pprof %d, report %d' % (len(a), len(b)))
        for f in sorted(set(a) | set(b)):
            if abs(a[f] - b[f]) > 0.1 + 1e-9:
                bad.append('%s: pprof %.3f%%, report %.2f%%' % (f, a[f], b[f]))
        print('%d functions, top: %s' % (len(a), max(a, key=a.get)))
    elif sys.argv[1] == 'leaves':
        a = traces(sys.argv[2])
        if not a:
            sys.exit('no traces')
        for k in a:
            own = [f for f in k[1:] if not f.endswith(' (inlined)')]
            if len(own) != 1:
                bad.append('a stack of %d frames: %s' % (len(own), ';'.join(k)))
    else:
        a, b = traces(sys.argv[2]), folded(sys.argv[3])
        if not a:
            sys.exit('no traces')
        for k in set(a) | set(b):
            if a[k] != b[k]:
                bad.append('%s: pprof %d, report %d' % (';'.join(k), a[k], b[k]))
        print('%d stacks, %d samples' % (len(a), sum(a.values())))
    if bad:
        print('\n'.join(bad[:20]))
        sys.exit(1)


if __name__ == '__main__':
    main()
