#!/usr/bin/env python3
"""perfdata-fix-mmap2.py IN OUT - make a perf.data file readable by perf 6.1
on newer kernels.

Kernel 6.18 (seen on this VM) sets PERF_RECORD_MISC_MMAP_BUILD_ID (bit 14
of misc) on MMAP2 records whose body still holds maj/min/ino, so perf 6.1
reads a build-id size of e.g. 254, overruns a stack buffer and aborts in
perf report, perf script and perf data convert ("assertion failed at
util/build-id.c:1010", "stack smashing detected").  This clears the bit
where the claimed build-id size is impossible (> 20), in a copy.  Used only
by benchmarks and tests that compare with perf; the count of fixed records
is printed.  Both layouts: file mode (records between the header's data
offset and size) and pipe mode (a 16-byte header, then records to the end;
perf inject cannot help there, it aborts on the same records).
"""
import struct
import sys

PERF_RECORD_MMAP2 = 10
MISC_BUILD_ID = 1 << 14


def main():
    src, dst = sys.argv[1], sys.argv[2]
    d = bytearray(open(src, 'rb').read())
    if d[:8] != b'PERFILE2':
        sys.exit("%s: not a perf.data file (PERFILE2)" % src)
    if struct.unpack_from('<Q', d, 8)[0] == 16:
        o, end = 16, len(d)
    else:
        data_off, data_size = struct.unpack_from('<QQ', d, 40)
        o, end = data_off, data_off + data_size
    fixed = 0
    while o + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', d, o)
        if size < 8:
            break
        if o + size > end:
            break
        if typ == PERF_RECORD_MMAP2 and misc & MISC_BUILD_ID and d[o + 40] > 20:
            struct.pack_into('<H', d, o + 4, misc & ~MISC_BUILD_ID)
            fixed += 1
        o += size
    open(dst, 'wb').write(d)
    print("fixed %d MMAP2 records" % fixed, file=sys.stderr)


if __name__ == '__main__':
    main()
