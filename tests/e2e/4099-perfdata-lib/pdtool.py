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
  pdtool.py make [--pipe] [--zstd] OUT
                            a small perf.data of our own: one cpu-clock
                            event (ids 1, 2), a COMM of 'hostile' and 3
                            samples, the hostname feature; --pipe in pipe
                            mode, --zstd with the records in a
                            PERF_RECORD_COMPRESSED (made by the zstd tool)
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
    # attr: cpu-clock, sample IP|TID|TIME|CPU|PERIOD, sample_id_all
    attr = bytearray(136)
    struct.pack_into('<IIQQQ', attr, 0, 1, 136, 0, 4000, 0x187)
    struct.pack_into('<Q', attr, 40, 1 << 18 | 1 << 10)  # sample_id_all, freq
    ids = struct.pack('<QQ', 1, 2)
    comm = b'hostile\0'
    body = struct.pack('<II', 100, 100) + comm
    trailer = struct.pack('<IIQII', 100, 100, 1000, 0, 0)
    recs = struct.pack('<IHH', 3, 0, 8 + len(body) + len(trailer)) + body + trailer
    for i in range(3):
        s = struct.pack('<QIIQIIQ', 0x401000 + i, 100, 100, 2000 + i, i % 2, 0, 250000)
        recs += struct.pack('<IHH', 9, 2, 8 + len(s)) + s
    if zst:
        z = subprocess.run(['zstd', '-q', '-c', '-3'], input=recs,
                           stdout=subprocess.PIPE, check=True).stdout
        recs = struct.pack('<IHH', 81, 0, 8 + len(z)) + z
    feat = hdr_string('hostile-host')
    if pipe:
        a = struct.pack('<IHH', 64, 0, 8 + len(attr) + len(ids)) + attr + ids
        f = struct.pack('<IHH', 80, 0, 16 + len(feat)) + struct.pack('<Q', 3) + feat
        d = b'PERFILE2' + struct.pack('<Q', 16) + a + f + recs
    else:
        attrs_off = 104
        ids_off = attrs_off + len(attr) + 16
        data_off = ids_off + len(ids)
        feat_tab = data_off + len(recs)
        feat_off = feat_tab + 16
        h = b'PERFILE2' + struct.pack('<QQ', 104, len(attr) + 16)
        h += struct.pack('<QQQQQQ', attrs_off, len(attr) + 16, data_off,
                         len(recs), 0, 0)
        h += struct.pack('<QQQQ', 1 << 3, 0, 0, 0)
        d = h + attr + struct.pack('<QQ', ids_off, len(ids)) + ids + recs
        d += struct.pack('<QQ', feat_off, len(feat)) + feat
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
    # perf never ends its zstd frame: the tool says so and gives the data
    out = subprocess.run(['zstd', '-dcq'], input=bytes(z), stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
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


def main():
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
