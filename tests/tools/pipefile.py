#!/usr/bin/env python3
"""pipefile.py - an independent reader of pipe files, written from
docs/format.md alone: the test oracle for the C reader.

  pipefile.py list FILE      one line per block (offset, type, stream,
                             codec, transform, lengths, records, times,
                             horizon, status)
  pipefile.py summary FILE   key: value totals, named as `pipe info` names
                             them (records, samples, lost, blocks,
                             damaged_blocks, damaged_records, torn_bytes,
                             recovered), plus undecoded_blocks
  pipefile.py index FILE     the INDEX chain, walked back from END
  pipefile.py window FILE START_NS STOP_NS [CPU,CPU..|-] [PID,PID..]
                             records a window/subset read returns (times
                             from the first record; STOP_NS 0: no end)

Tools that make damaged files for tests (they never read the C code):
  pipefile.py bump-version IN OUT N   set the version, fix the checksum
  pipefile.py flip IN OUT OFFSET      xor the byte at OFFSET with 0x10

Payloads of codec 0 (none), 1 (zlib) and 2 (lzma) are decoded with the
standard library; zstd (3) and transformed blocks are checked (checksums)
but reported as not decoded, and their records are not counted.
Exit status: 0 readable, 1 unreadable (the reason on stderr).
"""
import ctypes
import ctypes.util
import lzma
import struct
import sys
import zlib

MAGIC = b"\x89PIP\r\n\x1a\n"
BLOCK_MAGIC = 0x4B4C4250
LEN_MAX = 64 << 20
SIDEBAND = 0xFFFFFFFF
TYPES = {1: "META", 2: "DATA", 3: "DICT", 4: "LOST", 5: "INDEX", 6: "END"}
CODECS = {0: "none", 1: "zlib", 2: "lzma", 3: "zstd"}
PERF_RECORD_LOST = 2
PERF_RECORD_SAMPLE = 9


def _load_xxh3():
    for name in ("libxxhash.so.0", ctypes.util.find_library("xxhash")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        fn = lib.XXH3_64bits_withSeed
        fn.restype = ctypes.c_uint64
        fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
        return fn
    sys.exit("pipefile.py: libxxhash not found")


_XXH3 = _load_xxh3()


def xxh3(data, seed):
    return _XXH3(bytes(data), len(data), seed)


class Unreadable(Exception):
    pass


def pad8(n):
    return (8 - n % 8) % 8


def parse_block_header(buf, off, salt):
    """The header at off as a dict, or None when it is not a good one."""
    if off + 96 > len(buf):
        return None
    if struct.unpack_from("<I", buf, off)[0] != BLOCK_MAGIC:
        return None
    hsize = struct.unpack_from("<H", buf, off + 4)[0]
    if hsize < 96 or hsize % 8 or hsize > 4096 or off + hsize > len(buf):
        return None
    if struct.unpack_from("<Q", buf, off + hsize - 8)[0] != \
            xxh3(buf[off:off + hsize - 8], salt):
        return None
    (typ, flags, codec, transform, stream, dict_id, seq, stored, raw,
     records, samples, t_min, t_max, horizon, psum, coded) = \
        struct.unpack_from("<BBIIIIQIIIIQQQQI", buf, off + 6)
    if stored > LEN_MAX or raw > LEN_MAX or coded > LEN_MAX:
        return None
    return dict(off=off, hsize=hsize, type=typ, flags=flags, codec=codec,
                transform=transform, stream=stream, dict=dict_id, seq=seq,
                stored=stored, raw=raw, records=records, samples=samples,
                t_min=t_min, t_max=t_max, horizon=horizon, psum=psum,
                coded=coded,
                total=hsize + stored + pad8(stored) + 16)


def decode_payload(b, payload):
    """Raw bytes, or (None, why); NotImplemented when we cannot decode."""
    if b["transform"] == 0 and b["coded"] != b["raw"]:
        return None, "coded length differs from raw length"
    if b["transform"] not in (0, 1):
        return None, "unknown transform"
    codec = b["codec"]
    try:
        if codec == 0:
            if b["stored"] != b["coded"]:
                return None, "stored length differs from coded length"
            coded = bytes(payload)
        elif codec == 1:
            coded = zlib.decompress(bytes(payload))
        elif codec == 2:
            dsize = 4096
            while dsize < b["coded"]:
                dsize *= 2
            coded = lzma.decompress(bytes(payload), format=lzma.FORMAT_RAW,
                                    filters=[{"id": lzma.FILTER_LZMA2,
                                              "dict_size": dsize}])
        else:
            return NotImplemented, "codec %s" % CODECS.get(codec, codec)
    except (zlib.error, lzma.LZMAError) as e:
        return None, "codec: %s" % e
    if len(coded) != b["coded"]:
        return None, "decoded length differs from coded length"
    if b["transform"] != 0:
        return NotImplemented, "transform %d" % b["transform"]
    return coded, None


def walk_records(b, raw):
    """(records, samples, lost) or raise ValueError."""
    off = n = samples = lost = 0
    while off < len(raw):
        if len(raw) - off < 8:
            raise ValueError("short record header")
        rtype, _misc, size = struct.unpack_from("<IHH", raw, off)
        if size < 8 or size % 8 or size > len(raw) - off:
            raise ValueError("bad record length at byte %d" % off)
        n += 1
        if n > b["records"]:
            raise ValueError("more records than the header says")
        if rtype == PERF_RECORD_SAMPLE:
            samples += 1
        if rtype == PERF_RECORD_LOST and size >= 24:
            lost += struct.unpack_from("<Q", raw, off + 16)[0]
        off += size
    if n != b["records"] or samples != b["samples"]:
        raise ValueError("record or sample count mismatch")
    return n, samples, lost


class PipeFile:
    def __init__(self, data, name="x.dat"):
        self.buf = memoryview(data)
        self.name = name
        self.blocks = []      # (header dict or region dict, status)
        self.tot = dict(records=0, samples=0, lost=0, blocks=0,
                        damaged_blocks=0, damaged_records=0, torn_bytes=0,
                        recovered="no", undecoded_blocks=0,
                        undecoded_records=0)
        self.end = None
        self._header()
        self._walk()

    def _header(self):
        buf = self.buf
        if len(buf) < 8 or bytes(buf[:8]) != MAGIC:
            raise Unreadable("cannot read '%s': not a pipe file" % self.name)
        if len(buf) < 64:
            raise Unreadable("cannot read '%s': file header is cut short"
                             % self.name)
        version, hsize = struct.unpack_from("<HH", buf, 8)
        if version > 1:
            raise Unreadable("cannot read '%s': written by a newer pipe "
                             "(format version %d)" % (self.name, version))
        if version == 0 or hsize < 64 or hsize % 8 or hsize > 4096 or \
                hsize > len(buf):
            raise Unreadable("cannot read '%s': damaged file header"
                             % self.name)
        if struct.unpack_from("<Q", buf, hsize - 8)[0] != \
                xxh3(buf[:hsize - 8], 0):
            raise Unreadable("cannot read '%s': damaged file header "
                             "(checksum mismatch)" % self.name)
        if struct.unpack_from("<Q", buf, 16)[0]:
            raise Unreadable("cannot read '%s': written by a newer pipe "
                             "(features)" % self.name)
        self.clock = struct.unpack_from("<I", buf, 12)[0]
        self.file_id = bytes(buf[32:48])
        self.ctime = struct.unpack_from("<Q", buf, 48)[0]
        self.salt = struct.unpack_from("<Q", buf, 32)[0]
        self.hsize = hsize
        b = parse_block_header(buf, hsize, self.salt)
        if b is None or b["type"] != 1:
            raise Unreadable("cannot read '%s': damaged metadata block "
                             "header" % self.name)
        if hsize + b["total"] > len(buf):
            raise Unreadable("cannot read '%s': metadata block is cut "
                             "short" % self.name)
        p = buf[hsize + b["hsize"]:hsize + b["hsize"] + b["stored"]]
        if xxh3(p, self.salt) != b["psum"]:
            raise Unreadable("cannot read '%s': damaged metadata block "
                             "(checksum mismatch)" % self.name)
        self.meta = bytes(p)
        self.nr_streams = len(parse_meta(self.meta)[1]) or 4096
        self.blocks.append((b, "ok"))

    def _resync(self, off):
        at = (off + 8) & ~7
        while at + 96 <= len(self.buf):
            if struct.unpack_from("<I", self.buf, at)[0] == BLOCK_MAGIC and \
                    parse_block_header(self.buf, at, self.salt):
                return at
            at += 8
        return None

    def _good_block(self, off, typ, limit):
        """(header, payload) of a good codec-0 block of type typ ending by
        limit, else None (as docs/format.md's window reads check them)."""
        b = parse_block_header(self.buf, off, self.salt)
        if b is None or b["type"] != typ or b["codec"] != 0 or \
                off + b["total"] > limit:
            return None
        p = self.buf[off + b["hsize"]:off + b["hsize"] + b["stored"]]
        if xxh3(p, self.salt) != b["psum"]:
            return None
        return b, p

    def _index(self):
        """Entries of the END block's INDEX chain, in file order, or []
        when END or a link is not good (read from the end of the file,
        as a seekable reader does)."""
        buf, size = self.buf, len(self.buf)
        if size < 16:
            return []
        tlen, tsalt = struct.unpack_from("<QQ", buf, size - 16)
        if tsalt != self.salt or tlen > size:
            return []
        end = size - tlen
        got = self._good_block(end, 6, size)
        if got is None or got[0]["stored"] < 64:
            return []
        idx, limit, chain = struct.unpack_from("<Q", got[1], 0)[0], end, []
        while idx:
            if idx >= limit:
                return []
            got = self._good_block(idx, 5, limit)
            if got is None or got[0]["stored"] < 16:
                return []
            chain.append((idx, got[1]))
            limit = idx
            idx = struct.unpack_from("<Q", got[1], 0)[0]
        ents, total = [], 0
        for at, p in reversed(chain):
            _prev, n, esize = struct.unpack_from("<QII", p, 0)
            if esize < 48 or n * esize > len(p) - 16:
                return []
            for i in range(n):
                e = 16 + i * esize
                o = struct.unpack_from("<Q", p, e)[0]
                if o >= at or o < total:
                    return []
                total = o + 1
                ents.append((o, p[e + 40],
                             struct.unpack_from("<I", p, e + 28)[0]))
        return ents

    def _indexed_records(self, lo, hi):
        """Records of the DATA blocks the index places in [lo, hi)."""
        if not hasattr(self, "_ents"):
            self._ents = self._index()
        return sum(r for o, t, r in self._ents if lo <= o < hi and t == 2)

    def _damaged(self, b, why):
        self.tot["damaged_blocks"] += 1
        if b["type"] == 2:
            self.tot["damaged_records"] += b["records"]
        self.blocks.append((b, "damaged: " + why))

    def _walk(self):
        buf, tot = self.buf, self.tot
        off = self.hsize + self.blocks[0][0]["total"]
        while True:
            if off >= len(buf):
                tot["recovered"] = "yes"
                return
            b = parse_block_header(buf, off, self.salt)
            if b is None:
                nxt = self._resync(off)
                if nxt is None:
                    tot["recovered"] = "yes"
                    tot["torn_bytes"] += len(buf) - off
                    self.blocks.append((dict(off=off, type=-1),
                                        "torn tail: %d bytes"
                                        % (len(buf) - off)))
                    return
                tot["damaged_blocks"] += 1
                lost = self._indexed_records(off, nxt)
                tot["damaged_records"] += lost
                self.blocks.append((dict(off=off, type=-1),
                                    "damaged: %d bytes skipped, %d records "
                                    "by the index: bad block header"
                                    % (nxt - off, lost)))
                off = nxt
                continue
            if off + b["total"] > len(buf):
                tot["recovered"] = "yes"
                tot["torn_bytes"] += len(buf) - off
                if b["type"] == 2:
                    tot["damaged_records"] += b["records"]
                self.blocks.append((b, "torn tail"))
                return
            if b["type"] == 2:
                tot["blocks"] += 1
            end = off + b["total"]
            tlen, tsalt = struct.unpack_from("<QQ", buf, end - 16)
            if tlen != b["total"] or tsalt != self.salt:
                tot["damaged_blocks"] += 1
            payload = buf[off + b["hsize"]:off + b["hsize"] + b["stored"]]
            off = end
            if xxh3(payload, self.salt) != b["psum"]:
                self._damaged(b, "payload checksum mismatch")
                if b["type"] == 6:
                    return
                continue
            typ = b["type"]
            if typ == 2 and b["stream"] != 0xffffffff and \
                    b["stream"] >= self.nr_streams:
                self._damaged(b, "stream id %d is not one of the %d of the "
                              "metadata" % (b["stream"], self.nr_streams))
                continue
            if typ == 2:
                raw, why = decode_payload(b, payload)
                if raw is NotImplemented:
                    tot["undecoded_blocks"] += 1
                    tot["undecoded_records"] += b["records"]
                    self.blocks.append((b, "not decoded: " + why))
                    continue
                if raw is None:
                    self._damaged(b, why)
                    continue
                try:
                    n, s, lost = walk_records(b, raw)
                except ValueError as e:
                    self._damaged(b, str(e))
                    continue
                tot["records"] += n
                tot["samples"] += s
                tot["lost"] += lost
                b["raw_bytes"] = raw
                self.blocks.append((b, "ok"))
            elif typ == 4:
                for i in range(0, len(payload) - 15, 16):
                    tot["lost"] += struct.unpack_from("<Q", payload,
                                                      i + 8)[0]
                self.blocks.append((b, "ok"))
            elif typ == 6:
                self.end = b
                self.end_payload = bytes(payload)
                self.blocks.append((b, "ok"))
                return
            elif typ in (1, 3, 5) or typ & 0x80:
                self.blocks.append((b, "ok"))
            else:
                raise Unreadable("cannot read '%s': block type %d at offset"
                                 " %d is from a newer pipe"
                                 % (self.name, typ, b["off"]))

    def index_chain(self):
        """Entries of every INDEX block, walked back from END."""
        if self.end is None:
            return None
        last = struct.unpack_from("<Q", self.end_payload, 0)[0]
        chain = []
        while last:
            b = parse_block_header(self.buf, last, self.salt)
            if b is None or b["type"] != 5:
                raise Unreadable("bad index at %d" % last)
            p = self.buf[last + b["hsize"]:last + b["hsize"] + b["stored"]]
            prev, nr, esize = struct.unpack_from("<QII", p, 0)
            ents = []
            for i in range(nr):
                e = 16 + i * esize
                o, t0, t1, st, rec, d, raw = struct.unpack_from(
                    "<QQQIIII", p, e)
                ents.append(dict(off=o, t_min=t0, t_max=t1, stream=st,
                                 records=rec, dict=d, raw=raw,
                                 type=p[e + 40]))
            chain.append((last, ents))
            last = prev
        return chain


PERF_SAMPLE_IP = 1 << 0
PERF_SAMPLE_TID = 1 << 1
PERF_SAMPLE_TIME = 1 << 2
PERF_SAMPLE_ID = 1 << 6
PERF_SAMPLE_CPU = 1 << 7
PERF_SAMPLE_STREAM_ID = 1 << 9
PERF_SAMPLE_IDENTIFIER = 1 << 16


def parse_meta(meta):
    """(events, stream cpus): events as (sample_type, sample_id_all, ids)."""
    events, cpus, off = [], [], 0
    while off + 8 <= len(meta):
        tag, _res, ilen = struct.unpack_from("<HHI", meta, off)
        item = meta[off + 8:off + 8 + ilen]
        off += 8 + ilen + pad8(ilen)
        if tag == 1:
            asize, nids, _nlen, _z = struct.unpack_from("<IIII", item, 0)
            attr = item[16:16 + asize]
            st = struct.unpack_from("<Q", attr, 24)[0]
            flags = struct.unpack_from("<Q", attr, 40)[0]
            at = 16 + asize + pad8(asize)
            ids = struct.unpack_from("<%dQ" % nids, item, at)
            events.append((st, bool(flags & (1 << 18)), ids))
        elif tag == 2:
            n = struct.unpack_from("<I", item, 0)[0]
            cpus = list(struct.unpack_from("<%di" % n, item, 8))
    return events, cpus


def record_ids(events, rec):
    """(time or None, pid or None) of one record, from perf's ABI."""
    if not events:
        return None, None
    rtype = struct.unpack_from("<I", rec, 0)[0]
    ev = events[0]
    if ev[0] & PERF_SAMPLE_IDENTIFIER and len(rec) >= 16:
        ident = struct.unpack_from("<Q", rec, 8 if rtype == 9
                                   else len(rec) - 8)[0]
        for e in events:
            if ident in e[2]:
                ev = e
                break
    st = ev[0]
    fields = []
    if rtype == PERF_RECORD_SAMPLE:
        off = 8
        for bit in (PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID,
                    PERF_SAMPLE_TIME):
            if st & bit:
                fields.append((bit, off))
                off += 8
    else:
        if not ev[1]:
            return None, None
        order = (PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
                 PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
                 PERF_SAMPLE_IDENTIFIER)
        n = sum(1 for bit in order if st & bit)
        off = len(rec) - 8 * n
        if off < 8:
            return None, None
        for bit in order:
            if st & bit:
                fields.append((bit, off))
                off += 8
    time = pid = None
    for bit, at in fields:
        if at + 8 > len(rec):
            return None, None
        if bit == PERF_SAMPLE_TIME:
            time = struct.unpack_from("<Q", rec, at)[0]
        if bit == PERF_SAMPLE_TID:
            pid = struct.unpack_from("<I", rec, at)[0]
    return time, pid


def cmd_window(pf, start, stop, cpus, pids):
    """Count what a window read returns, by docs/format.md's rules."""
    events, stream_cpu = parse_meta(pf.meta)
    # time 0: the first DATA block with a time, in file order
    ts = [b["t_min"] for b, st in pf.blocks if b["type"] == 2 and b["t_min"]]
    first = ts[0] if ts else 0
    lo = first + start if start else 0
    hi = first + stop if stop else 1 << 64
    n = samples = 0
    for b, status in pf.blocks:
        if b["type"] != 2 or status != "ok":
            continue
        side = b["stream"] == SIDEBAND
        if not side and cpus is not None:
            if b["stream"] >= len(stream_cpu) or \
                    stream_cpu[b["stream"]] not in cpus:
                continue
        raw = b["raw_bytes"]
        off, last = 0, b["t_min"]
        while off < len(raw):
            rtype, _misc, size = struct.unpack_from("<IHH", raw, off)
            rec = raw[off:off + size]
            off += size
            t, pid = record_ids(events, rec)
            if t:
                last = t
            t = last
            if side:
                keep = t < hi
            else:
                keep = lo <= t < hi
                if keep and pids is not None and \
                        rtype == PERF_RECORD_SAMPLE and pid is not None:
                    keep = pid in pids
            if keep:
                n += 1
                samples += rtype == PERF_RECORD_SAMPLE
    print("records: %d" % n)
    print("samples: %d" % samples)


def stream_name(s):
    return "sideband" if s == SIDEBAND else str(s)


def cmd_list(pf):
    for b, status in pf.blocks:
        if b["type"] == -1:
            print("%d - %s" % (b["off"], status))
            continue
        print("%d %s stream=%s codec=%s transform=%d stored=%d raw=%d "
              "records=%d samples=%d t=%d-%d horizon=%d %s"
              % (b["off"], TYPES.get(b["type"], "type%d" % b["type"]),
                 stream_name(b["stream"]),
                 CODECS.get(b["codec"], str(b["codec"])), b["transform"],
                 b["stored"], b["raw"], b["records"], b["samples"],
                 b["t_min"], b["t_max"], b["horizon"], status))


def cmd_summary(pf):
    for k in ("records", "samples", "lost", "blocks", "damaged_blocks",
              "damaged_records", "torn_bytes", "recovered",
              "undecoded_blocks", "undecoded_records"):
        print("%s: %s" % (k, pf.tot[k]))


def cmd_index(pf):
    chain = pf.index_chain()
    if chain is None:
        print("no END block")
        return
    for off, ents in chain:
        print("index at %d: %d entries" % (off, len(ents)))
        for e in ents:
            print("  %d %s stream=%s records=%d t=%d-%d"
                  % (e["off"], TYPES.get(e["type"], e["type"]),
                     stream_name(e["stream"]), e["records"], e["t_min"],
                     e["t_max"]))


def tool(argv):
    with open(argv[2], "rb") as f:
        data = bytearray(f.read())
    if argv[1] == "bump-version":
        struct.pack_into("<H", data, 8, int(argv[4]))
        hsize = struct.unpack_from("<H", data, 10)[0]
        struct.pack_into("<Q", data, hsize - 8,
                         xxh3(data[:hsize - 8], 0))
    else:
        data[int(argv[4])] ^= 0x10
    with open(argv[3], "wb") as f:
        f.write(data)
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] in ("bump-version", "flip"):
        return tool(argv)
    if len(argv) in (5, 6, 7) and argv[1] == "window":
        try:
            with open(argv[2], "rb") as f:
                pf = PipeFile(f.read(), argv[2])
        except (OSError, Unreadable) as e:
            sys.stderr.write("pipefile.py: %s\n" % e)
            return 1
        cpus = pids = None
        if len(argv) > 5 and argv[5] != "-":
            cpus = [int(x) for x in argv[5].split(",")]
        if len(argv) > 6:
            pids = [int(x) for x in argv[6].split(",")]
        cmd_window(pf, int(argv[3]), int(argv[4]), cpus, pids)
        return 0
    if len(argv) != 3 or argv[1] not in ("list", "summary", "index"):
        sys.stderr.write(__doc__)
        return 2
    try:
        with open(argv[2], "rb") as f:
            data = f.read()
        pf = PipeFile(data, argv[2])
    except OSError as e:
        sys.stderr.write("pipefile.py: %s\n" % e)
        return 1
    except Unreadable as e:
        sys.stderr.write("pipefile.py: %s\n" % e)
        return 1
    {"list": cmd_list, "summary": cmd_summary, "index": cmd_index}[argv[1]](pf)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
