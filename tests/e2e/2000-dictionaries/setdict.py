#!/usr/bin/env python3
"""setdict.py IN OUT N ID - copy a pipe file with the dict id of its N-th
DATA block that uses a dictionary set to ID (0: no dictionary), the header
checksum made valid again (docs/format.md, "Block header").
setdict.py IN - print how many DATA blocks after the first DICT block use
a dictionary, and how many DATA blocks follow it."""
import ctypes
import ctypes.util
import struct
import sys

lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
lib.XXH3_64bits_withSeed.restype = ctypes.c_uint64
lib.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                     ctypes.c_uint64]
d = bytearray(open(sys.argv[1], "rb").read())
count = len(sys.argv) == 2
n, new = (-1, 0) if count else (int(sys.argv[3]), int(sys.argv[4]))
data = used = 0
after_dict = False
salt = struct.unpack_from("<Q", d, 32)[0]
off, seen = struct.unpack_from("<H", d, 10)[0], 0
while off + 96 <= len(d):
    magic, hsize, typ = struct.unpack_from("<IHB", d, off)
    if magic != 0x4B4C4250:
        sys.exit("no block at %d" % off)
    stored, dict_id = struct.unpack_from("<I", d, off + 32)[0], \
        struct.unpack_from("<I", d, off + 20)[0]
    after_dict = after_dict or typ == 3
    data += typ == 2 and after_dict
    used += typ == 2 and dict_id != 0
    if typ == 2 and dict_id and not count:
        if seen == n:
            struct.pack_into("<I", d, off + 20, new)
            struct.pack_into("<Q", d, off + hsize - 8, lib.XXH3_64bits_withSeed(
                bytes(d[off:off + hsize - 8]), hsize - 8, salt))
            open(sys.argv[2], "wb").write(d)
            print(off)
            sys.exit(0)
        seen += 1
    off += hsize + ((stored + 7) & ~7) + 16
if count:
    print(used, data)
    sys.exit(0)
sys.exit("fewer than %d DATA blocks use a dictionary" % (n + 1))
