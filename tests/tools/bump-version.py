#!/usr/bin/env python3
"""bump-version.py IN OUT VERSION - copy a pipe file with its header's
version field set to VERSION and the header checksum made valid again, to
test how readers meet files of a newer format (docs/format.md)."""
import ctypes
import ctypes.util
import struct
import sys

lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
lib.XXH3_64bits_withSeed.restype = ctypes.c_uint64
lib.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                     ctypes.c_uint64]
d = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<H", d, 8, int(sys.argv[3]))
hsize = struct.unpack_from("<H", d, 10)[0]
struct.pack_into("<Q", d, hsize - 8,
                 lib.XXH3_64bits_withSeed(bytes(d[:hsize - 8]), hsize - 8, 0))
open(sys.argv[2], "wb").write(d)
