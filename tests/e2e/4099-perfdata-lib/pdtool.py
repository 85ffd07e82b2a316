#!/usr/bin/env python3
"""pdtool.py - perf.data surgery for the perfdata tests (4000-4098).

  pdtool.py seal IN OUT     a killed recording (data size 0) made readable
                            to perf: the data size of its whole records,
                            no features
  pdtool.py cut IN OUT      IN cut in the middle of its last whole record
  pdtool.py buildid IN OUT  MMAP2 records flagged as carrying a build-id
                            over their maj/min/inode, as kernel 6.18 does;
                            prints how many (file or pipe mode)
  pdtool.py badsize IN OUT  the size of a record in the middle of the data
                            set to 4 (impossible)
  pdtool.py decompress IN OUT
                            IN's compressed records inflated by the zstd
                            tool (one stream, as perf writes it), rounds
                            dropped, the COMPRESSED feature cleared, the
                            other features kept: what perf reads when the
                            records inside need perfdata-fix-mmap2.py
  pdtool.py idcpus IN       samples per cpu as IN's PERF_RECORD_ID_INDEX
                            places their ids (file mode, uncompressed):
                            one "CPU COUNT" line per cpu
  pdtool.py make [--pipe] [--zstd] [--id-index [--late]] OUT
                            a small perf.data of our own: one cpu-clock
                            event (ids 1, 2), a COMM of 'hostile' and 3
                            samples, the hostname feature; --pipe in pipe
                            mode, --zstd with the records in a
                            PERF_RECORD_COMPRESSED (made by the zstd tool);
                            --id-index: samples carry ids 1, 2, 1 and no
                            CPU, a PERF_RECORD_ID_INDEX puts id 1 on cpu 0
                            and id 2 on cpu 1, the nr_cpus feature says 2
                            (--late: another index after the samples,
                            both ids on cpu 1)
"""
import struct
import subprocess
import sys

MISC_BUILD_ID = 1 << 14


def records(d):
    if struct.unpack_from('<Q', d, 8)[0] == 16:  # pipe mode
        off, size = 16, 0
    else:
        off, size = struct.unpack_from('<QQ', d, 40)
    end = off + size if size else len(d)
    o = off
    while o + 8 <= end:
        typ, misc, sz = struct.unpack_from('<IHH', d, o)
        if sz < 8 or o + sz > end:
            break
        yield o, typ, misc, sz
        o += sz


def hdr_string(text):
    b = text.encode() + b'\0'
    b += b'\0' * (-len(b) % 64)
    return struct.pack('<I', len(b)) + b


def make(args):
    out = args[-1]
    pipe, zst = '--pipe' in args, '--zstd' in args
    index, late = '--id-index' in args, '--late' in args
    # attr: cpu-clock, sample IP|TID|TIME|CPU|PERIOD (--id-index:
    # IP|TID|TIME|ID|PERIOD), sample_id_all
    attr = bytearray(136)
    struct.pack_into('<IIQQQ', attr, 0, 1, 136, 0, 4000,
                     0x147 if index else 0x187)
    struct.pack_into('<Q', attr, 40, 1 << 18 | 1 << 10)  # sample_id_all, freq
    ids = struct.pack('<QQ', 1, 2)
    comm = b'hostile\0'
    body = struct.pack('<II', 100, 100) + comm
    if index:
        trailer = struct.pack('<IIQQ', 100, 100, 1000, 1)
    else:
        trailer = struct.pack('<IIQII', 100, 100, 1000, 0, 0)
    recs = b''
    if index:  # id, idx, cpu, tid: as perf record writes it, first
        recs += struct.pack('<IHHQ', 69, 0, 16 + 64, 2)
        recs += struct.pack('<QQQQ', 1, 0, 0, 100)
        recs += struct.pack('<QQQQ', 2, 1, 1, 100)
    recs += struct.pack('<IHH', 3, 0, 8 + len(body) + len(trailer)) + body + trailer
    for i in range(3):
        if index:
            s = struct.pack('<QIIQQQ', 0x401000 + i, 100, 100, 2000 + i,
                            i % 2 + 1, 250000)
        else:
            s = struct.pack('<QIIQIIQ', 0x401000 + i, 100, 100, 2000 + i,
                            i % 2, 0, 250000)
        recs += struct.pack('<IHH', 9, 2, 8 + len(s)) + s
    if late:
        recs += struct.pack('<IHHQ', 69, 0, 16 + 64, 2)
        recs += struct.pack('<QQQQ', 1, 0, 1, 100)
        recs += struct.pack('<QQQQ', 2, 1, 1, 100)
    if zst:
        z = subprocess.run(['zstd', '-q', '-c', '-3'], input=recs,
                           stdout=subprocess.PIPE, check=True).stdout
        recs = struct.pack('<IHH', 81, 0, 8 + len(z)) + z
    feats = [(3, hdr_string('hostile-host'))]
    if index:
        feats.append((7, struct.pack('<II', 2, 2)))  # nr_cpus avail, online
    if pipe:
        a = struct.pack('<IHH', 64, 0, 8 + len(attr) + len(ids)) + attr + ids
        f = b''.join(struct.pack('<IHH', 80, 0, 16 + len(b)) +
                     struct.pack('<Q', n) + b for n, b in feats)
        d = b'PERFILE2' + struct.pack('<Q', 16) + a + f + recs
    else:
        attrs_off = 104
        ids_off = attrs_off + len(attr) + 16
        data_off = ids_off + len(ids)
        feat_tab = data_off + len(recs)
        feat_off = feat_tab + 16 * len(feats)
        bits = sum(1 << n for n, _ in feats)
        h = b'PERFILE2' + struct.pack('<QQ', 104, len(attr) + 16)
        h += struct.pack('<QQQQQQ', attrs_off, len(attr) + 16, data_off,
                         len(recs), 0, 0)
        h += struct.pack('<QQQQ', bits, 0, 0, 0)
        d = h + attr + struct.pack('<QQ', ids_off, len(ids)) + ids + recs
        for n, b in feats:
            d += struct.pack('<QQ', feat_off, len(b))
            feat_off += len(b)
        d += b''.join(b for _, b in feats)
    open(out, 'wb').write(d)


def decompress(src, dst):
    d = open(src, 'rb').read()
    off, size = struct.unpack_from('<QQ', d, 40)
    plain, z = bytearray(), bytearray()
    for o, typ, misc, sz in records(d):
        if typ == 81:
            z += d[o + 8:o + sz]
        elif typ == 83:
            n = struct.unpack_from('<Q', d, o + 8)[0]
            z += d[o + 16:o + 16 + n]
        elif typ != 68:
            plain += d[o:o + sz]
    # perf never ends its zstd frame (it flushes, block by block): an empty
    # last block ends it.  Without one the tool stops with "premature
    # end" and drops what it had not yet written out, everything past
    # the first 256 KiB of records.
    out = subprocess.run(['zstd', '-dcq'], input=bytes(z) + b'\x01\x00\x00',
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    o = 0
    while o + 8 <= len(out):
        sz = struct.unpack_from('<H', out, o + 6)[0]
        if sz < 8 or o + sz > len(out):
            break
        o += sz
    data = bytes(plain) + out[:o]
    bits = list(struct.unpack_from('<4Q', d, 72))
    at, feats = off + size, []
    for f in range(256):
        if bits[f // 64] >> (f % 64) & 1:
            fo, fs = struct.unpack_from('<QQ', d, at)
            at += 16
            if f != 27:
                feats.append((f, d[fo:fo + fs]))
    bits[27 // 64] &= ~(1 << (27 % 64))
    head = bytearray(d[:off])
    struct.pack_into('<Q', head, 48, len(data))
    struct.pack_into('<4Q', head, 72, *bits)
    table = off + len(data)
    pay = table + 16 * len(feats)
    tab, body = bytearray(), bytearray()
    for f, b in feats:
        tab += struct.pack('<QQ', pay + len(body), len(b))
        body += b
    open(dst, 'wb').write(bytes(head) + data + bytes(tab) + bytes(body))


def idcpus(src):
    d = open(src, 'rb').read()
    attrs_off = struct.unpack_from('<Q', d, 24)[0]
    st = struct.unpack_from('<Q', d, attrs_off + 24)[0]
    if st & (1 << 16):  # IDENTIFIER: first
        at = 8
    elif st & (1 << 6):  # ID: after IP, TID, TIME, ADDR
        at = 8 + 8 * sum(1 for b in (0, 1, 2, 3) if st >> b & 1)
    else:
        sys.exit("%s: samples carry no id" % src)
    where, count = {}, {}
    for o, typ, misc, sz in records(d):
        if typ == 69:
            nr = struct.unpack_from('<Q', d, o + 8)[0]
            for i in range(nr):
                sid, idx, cpu, tid = struct.unpack_from('<QQQQ', d, o + 16 + 32 * i)
                where[sid] = cpu
        elif typ == 9:
            cpu = where[struct.unpack_from('<Q', d, o + at)[0]]
            count[cpu] = count.get(cpu, 0) + 1
    for cpu in sorted(count):
        print(cpu, count[cpu])


def main():
    if sys.argv[1] == 'idcpus':
        return idcpus(sys.argv[2])
    if sys.argv[1] == 'make':
        return make(sys.argv[2:])
    if sys.argv[1] == 'decompress':
        return decompress(sys.argv[2], sys.argv[3])
    cmd, src, dst = sys.argv[1:4]
    d = bytearray(open(src, 'rb').read())
    mode = struct.unpack_from('<Q', d, 8)[0] if d[:8] == b'PERFILE2' else 0
    if mode != 104 and not (mode == 16 and cmd == 'buildid'):
        sys.exit("%s: not a perf.data file in file mode" % src)
    off = struct.unpack_from('<Q', d, 40)[0]
    recs = list(records(d))
    if cmd == 'seal':
        last = recs[-1]
        struct.pack_into('<Q', d, 48, last[0] + last[3] - off)
        struct.pack_into('<QQQQ', d, 72, 0, 0, 0, 0)
        d = d[:last[0] + last[3]]
    elif cmd == 'cut':
        last = recs[-1]
        d = d[:last[0] + last[3] // 2]
    elif cmd == 'buildid':
        n = 0
        for o, typ, misc, sz in recs:
            if typ == 10 and d[o + 40] > 20 and d[o + 72] == ord('/'):
                struct.pack_into('<H', d, o + 4, misc | MISC_BUILD_ID)
                n += 1
        print(n)
    elif cmd == 'badsize':
        o = recs[len(recs) // 2][0]
        struct.pack_into('<H', d, o + 6, 4)
        print(o)
    else:
        sys.exit(__doc__)
    open(dst, 'wb').write(d)


if __name__ == '__main__':
    main()
