#!/usr/bin/env python3
"""hostile.py - builds hostile pipe files for the bounds tests, from
docs/format.md (every checksum right, so only the reader's limits stand
between the file and the machine).

  hostile.py KIND BASE OUT [N]

BASE is a clean pipe file: its file header and META block are kept, then
KIND decides what follows:

  dict-bomb N     N DICT blocks, each a zlib stream of a few KiB that
                  inflates to a 64 MiB zstd dictionary
  dicts N         N DICT blocks of 1 MiB zstd dictionaries (the most a file
                  may have), then a zstd DATA block using each
  streams N       N one-record DATA blocks, each on its own stream id
  no-end S        about S bytes of INDEX headers without END, each
                  claiming the rest of the file as its payload (a look
                  back that checks each one reads the file again and again)
  slots N [MIB]   N DATA blocks whose zstd frames of a few KiB inflate to
                  MIB (64) MiB of 8-byte records
  nest N          N INDEX blocks, each inside the payload of the one before
                  and naming it as the previous index, then END
  side-first      BASE's DATA blocks with the sideband's first, as a
                  whole-system recording starts (records from /proc, time 0),
                  the payload of the third CPU block damaged
  shift BLOCK     BASE with 8 zero bytes inserted before its BLOCK-th block
                  (counted from the META block, 0)
  reverse N       BASE's DATA blocks in reverse order, each horizon claiming
                  that everything was written, and after every Nth one a
                  LOST block with a bad checksum (a point where a reader
                  finishes what is in flight)
"""
import os
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pipefile as pf  # noqa: E402

SIDE = 0xFFFFFFFF


def header(salt, typ, stored, raw, coded, payload_sum, stream=SIDE, codec=0,
           transform=0, dict_id=0, seq=0, records=0, samples=0, t_min=0,
           t_max=0, horizon=0):
    h = bytearray(96)
    struct.pack_into("<IHBBIIIIQIIIIQQQQII", h, 0, pf.BLOCK_MAGIC, 96, typ,
                     0, codec, transform, stream, dict_id, seq, stored, raw,
                     records, samples, t_min, t_max, horizon, payload_sum,
                     coded, 0)
    struct.pack_into("<Q", h, 88, pf.xxh3(bytes(h[:88]), salt))
    return bytes(h)


def block(salt, typ, payload, raw=None, coded=None, **kw):
    stored = len(payload)
    raw = stored if raw is None else raw
    coded = raw if coded is None else coded
    h = header(salt, typ, stored, raw, coded, pf.xxh3(payload, salt), **kw)
    body = h + payload + b"\0" * pf.pad8(stored)
    total = len(body) + 16
    return body + struct.pack("<QQ", total, salt)


def base_prefix(path):
    """(file header + META block bytes, salt)."""
    data = open(path, "rb").read()
    f = pf.PipeFile(data)
    meta_total = f.blocks[0][0]["total"]
    return data[:f.hsize + meta_total], f.salt


def zstd_frame(data):
    return subprocess.run(["zstd", "-q", "-19", "-c"], input=data,
                          stdout=subprocess.PIPE, check=True).stdout


def dict_bomb(prefix, salt, n):
    payload = struct.pack("<II", 3, 0)
    z = zlib.compress(payload + b"\0" * ((64 << 20) - 8), 9)
    out = [prefix]
    for i in range(n):
        out.append(block(salt, 3, z, raw=64 << 20, codec=1, dict_id=i + 1,
                         seq=i + 1))
    return b"".join(out)


def dicts(prefix, salt, n):
    out = [prefix]
    rec = struct.pack("<IHH", 12, 0, 8)
    frame = zstd_frame(rec * 64)
    for i in range(n):
        d = struct.pack("<II", 3, 0) + bytes((k * 7 + i) & 0xff
                                             for k in range(1 << 20))
        out.append(block(salt, 3, zlib.compress(d), raw=len(d), codec=1,
                         dict_id=i + 1, seq=2 * i + 1))
        out.append(block(salt, 2, frame, raw=64 * 8, codec=3, dict_id=i + 1,
                         stream=0, seq=2 * i + 2, records=64, t_min=1000,
                         t_max=1000, horizon=1000))
    return b"".join(out)


def streams(prefix, salt, n):
    rec = struct.pack("<IHH", 12, 0, 8)  # FINISHED_ROUND: no body
    out = [prefix]
    for i in range(n):
        t = 1000 + i
        out.append(block(salt, 2, rec, stream=i, seq=i + 1, records=1,
                         t_min=t, t_max=t, horizon=t))
    return b"".join(out)


def no_end(prefix, salt, size):
    size &= ~7
    out = [prefix]
    at = len(prefix)
    while at + 96 + 16 <= size:
        # the header is good; its payload runs to the end of the file,
        # and its checksum never matches
        stored = size - at - 96 - 16
        h = header(salt, 5, stored, stored, stored, 1, seq=1)
        out.append(h)
        at += len(h)
    out.append(b"\0" * (size - at))
    return b"".join(out)


def slots(prefix, salt, n, mib=64):
    raw = mib << 20
    rec = struct.pack("<IHH", 12, 0, 8)
    z = zstd_frame(rec * (raw // 8))
    out = [prefix]
    for i in range(n):
        out.append(block(salt, 2, z, raw=raw, codec=3, stream=0, seq=i + 1,
                         records=raw // 8, t_min=1000 + i, t_max=1000 + i,
                         horizon=1000 + i))
    return b"".join(out)


def nest(prefix, salt, n):
    # INDEX k starts 112 bytes after INDEX k-1, inside its payload, and
    # names it as the previous index: a valid chain whose links overlap
    offs = [len(prefix) + 112 * k for k in range(n)]
    inner = b""
    for k in range(n - 1, -1, -1):
        head = struct.pack("<QII", offs[k - 1] if k else 0, 0, 48)
        inner = block(salt, 5, head + inner, seq=k + 1)
    end = struct.pack("<8Q", offs[-1], 0, 0, 0, 0, 0, 0, 0)
    return prefix + inner + block(salt, 6, end, seq=n + 1)


def reverse(path, n):
    data = open(path, "rb").read()
    f = pf.PipeFile(data)
    prefix, salt = base_prefix(path)
    blocks = [b for b, _ in f.blocks[1:] if b.get("type") == 2]
    out = [prefix]
    for i, b in enumerate(reversed(blocks)):
        payload = bytes(data[b["off"] + b["hsize"]:
                             b["off"] + b["hsize"] + b["stored"]])
        out.append(block(salt, 2, payload, raw=b["raw"], coded=b["coded"],
                         stream=b["stream"], codec=b["codec"],
                         transform=b["transform"], seq=i + 1,
                         records=b["records"], samples=b["samples"],
                         t_min=b["t_min"], t_max=b["t_max"],
                         horizon=(1 << 63)))
        if n and i % n == n - 1:
            bad = bytearray(block(salt, 4, b"\0" * 16, seq=i + 1))
            bad[96] ^= 1
            out.append(bytes(bad))
    return b"".join(out)


def side_first(path, _n):
    data = open(path, "rb").read()
    f = pf.PipeFile(data)
    prefix, salt = base_prefix(path)
    blocks = [b for b, _ in f.blocks[1:] if b.get("type") == 2]
    blocks.sort(key=lambda b: b["stream"] != SIDE)
    out, cpu = [prefix], 0
    for i, b in enumerate(blocks):
        payload = bytearray(data[b["off"] + b["hsize"]:
                                 b["off"] + b["hsize"] + b["stored"]])
        psum = pf.xxh3(bytes(payload), salt)
        if b["stream"] != SIDE:
            cpu += 1
            if cpu == 3:
                payload[40] ^= 0x10
        h = header(salt, 2, b["stored"], b["raw"], b["coded"], psum,
                   stream=b["stream"], codec=b["codec"],
                   transform=b["transform"], seq=i + 1,
                   records=b["records"], samples=b["samples"],
                   t_min=0 if b["stream"] == SIDE else b["t_min"],
                   t_max=b["t_max"], horizon=b["horizon"])
        body = h + bytes(payload) + b"\0" * pf.pad8(b["stored"])
        out.append(body + struct.pack("<QQ", len(body) + 16, salt))
    return b"".join(out)


def shift(path, k):
    data = open(path, "rb").read()
    f = pf.PipeFile(data)
    off = [b["off"] for b, _ in f.blocks if "off" in b][k]
    return data[:off] + b"\0" * 8 + data[off:]


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    kind, base, out = argv[1], argv[2], argv[3]
    n = int(argv[4]) if len(argv) > 4 else 1
    if kind == "shift":
        data = shift(base, n)
    elif kind == "reverse":
        data = reverse(base, n)
    elif kind == "side-first":
        data = side_first(base, n)
    else:
        prefix, salt = base_prefix(base)
        fn = {"dict-bomb": dict_bomb, "dicts": dicts, "streams": streams,
              "no-end": no_end,
              "slots": slots, "nest": nest}[kind]
        data = fn(prefix, salt, n, *[int(a) for a in argv[5:]])
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main(sys.argv)
