/*
 * perfdata.h - the layout of perf's perf.data files, shared by the reader
 * (pdread.c) and the writer (pdwrite.c): magic words, header sizes,
 * feature numbers and perf's own record types.  Facts only, no code.
 *
 * Every number is little-endian (the only byte order we read or write).
 */
#ifndef PIPE_PERFDATA_H
#define PIPE_PERFDATA_H

#include <stdint.h>

/* "PERFILE2" read as a little-endian u64 */
#define PD_MAGIC UINT64_C(0x32454c4946524550)
/* the same bytes from a big-endian machine */
#define PD_MAGIC_SWAPPED UINT64_C(0x50455246494c4532)

#define PD_FILE_HEADER 104 /* magic size attr_size attrs data types feats */
#define PD_PIPE_HEADER 16  /* magic size */
#define PD_FEAT_BITS 256   /* the feature bitmap of the file header */
#define PD_NAME_ALIGN 64   /* strings in features are padded to this */

/* Feature numbers: bits of the file header's bitmap, and the id of a
 * PERF_RECORD_HEADER_FEATURE in pipe mode. */
enum pd_feature {
	PD_FEAT_TRACING_DATA = 1,
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_VERSION = 5,
	PD_FEAT_ARCH = 6,
	PD_FEAT_NRCPUS = 7,
	PD_FEAT_CPUDESC = 8,
	PD_FEAT_CPUID = 9,
	PD_FEAT_TOTAL_MEM = 10,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_CPU_TOPOLOGY = 13,
	PD_FEAT_SAMPLE_TIME = 21,
	PD_FEAT_CLOCKID = 23,
	PD_FEAT_COMPRESSED = 27,
	PD_FEAT_CLOCK_DATA = 29,
};

/* Record types perf adds to the kernel's (user types start at 64). */
enum pd_user_type {
	PD_REC_USER_START = 64,
	PD_REC_HEADER_ATTR = 64,
	PD_REC_HEADER_EVENT_TYPE = 65,
	PD_REC_HEADER_TRACING_DATA = 66, /* followed by u32-sized data */
	PD_REC_HEADER_BUILD_ID = 67,
	PD_REC_FINISHED_ROUND = 68,
	PD_REC_ID_INDEX = 69,
	PD_REC_AUXTRACE_INFO = 70,
	PD_REC_AUXTRACE = 71,            /* followed by u64-sized data */
	PD_REC_AUXTRACE_ERROR = 72,
	PD_REC_EVENT_UPDATE = 78,
	PD_REC_TIME_CONV = 79,
	PD_REC_HEADER_FEATURE = 80,
	PD_REC_COMPRESSED = 81,          /* zstd bytes, size not 8-aligned */
	PD_REC_FINISHED_INIT = 82,
	PD_REC_COMPRESSED2 = 83,         /* u64 data size, zstd bytes, pad */
};

/* PERF_RECORD_EVENT_UPDATE kinds we read */
#define PD_EVENT_UPDATE_NAME 2

/* Build-id entries (feature and PERF_RECORD_HEADER_BUILD_ID): header,
 * s32 pid, 24 bytes of id (20 used, byte 20 the length when the misc bit
 * says so), then the NUL-padded file name. */
#define PD_BUILD_ID_NAME_OFF 36
#define PD_BUILD_ID_MAX 20
#define PD_MISC_BUILD_ID_SIZE (1u << 15)

/* The VERSION feature of the files pipe writes.  perf places the kernel
 * by the map record it writes first ("[kernel.kallsyms]_text", pgoff =
 * _text), pipe keeps _text in its metadata: the writer adds that record
 * and the reader, seeing this version, takes it back out, so that a round
 * trip gives the same records. */
#define PD_PIPE_VERSION "pipe perfdata 1.0"
#define PD_KERNEL_MAP "[kernel.kallsyms]_text"

/* PERF_RECORD_COMPRESSED's zstd type in the COMPRESSED feature */
#define PD_COMP_ZSTD 1

#endif
