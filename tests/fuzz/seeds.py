#!/usr/bin/env python3
"""seeds.py OUT - cut the recordings in OUT/container into the inputs of
the other harnesses (see seeds.sh): META payloads, transformed blocks,
one codec's payloads, single records with their event, sideband runs."""
import glob
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import pipefile as pf  # noqa: E402


def put(out, kind, name, data):
    d = os.path.join(out, kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main(out):
    n = decoded = 0
    for path in sorted(glob.glob(os.path.join(out, "container", "s*.dat"))):
        data = open(path, "rb").read()
        f = pf.PipeFile(data)
        base = os.path.basename(path)[:-4]
        put(out, "meta", base, f.meta)
        events, _ = pf.parse_meta(f.meta)
        st = events[0][0] if events else 0
        side = []
        for b, status in f.blocks:
            if b.get("type") != 2 or n > 400:
                continue
            n += 1
            payload = bytes(data[b["off"] + b["hsize"]:
                                 b["off"] + b["hsize"] + b["stored"]])
            codec = pf.CODECS.get(b["codec"], "x")
            if b["transform"] == 0:
                put(out, "codec_" + codec, "%s-%d" % (base, n),
                    struct.pack("<IBH", b["coded"], 0, 0) + payload)
            if b["codec"] == 0 and b["transform"] == 1:
                put(out, "transform", "%s-%d" % (base, n),
                    struct.pack("<QIBxxx", st, b["raw"], 1) + payload)
            raw = b.get("raw_bytes")
            if raw is None:
                continue
            raw = bytes(raw)
            if b["stream"] == pf.SIDEBAND:
                side.append(raw)
            off = 0
            while off + 8 <= len(raw) and off < 2048 and decoded < 80:
                size = struct.unpack_from("<H", raw, off + 6)[0]
                if size < 8:
                    break
                head = struct.pack("<5QB7x", st, 0, 0, 0, 0, 1)
                put(out, "decode", "%s-%d-%d" % (base, n, off),
                    head + raw[off:off + size])
                decoded += 1
                off += size
        if side:
            put(out, "symbolizer", base, b"".join(side)[:65536])


if __name__ == "__main__":
    main(sys.argv[1])
