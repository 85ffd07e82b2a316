/*
 * pipe_plugin.h - the whole plugin ABI of pipe, version 2.
 *
 * A plugin is a shared object that exports one data symbol, `pipe_plugin`,
 * a `struct pipe_plugin` defined with one of the PIPE_PLUGIN_SOURCE,
 * PIPE_PLUGIN_CODEC or PIPE_PLUGIN_SINK macros.  Plugins never link
 * against pipe: everything they need from the host comes through the
 * `struct pipe_host` table handed to `open`.  If it is not in this header,
 * it is not API.
 *
 * Versioning.  `abi` is (major << 16 | minor).  The host refuses another
 * major, and a minor newer than its own.  A minor only ever appends:
 *  - fields at the end of the structs that carry a `size`;
 *  - functions at the end of `struct pipe_host` and `struct pipe_plugin`;
 *  - values to the enums.
 * So a plugin built against 2.0 runs unchanged on every 2.x host, and a
 * plugin that wants a 2.x addition checks `host->size` (PIPE_HOST_HAS).
 * Who sets `size`:
 *  - structs the plugin hands over (the descriptor, parameter tables):
 *    the macros below set the plugin's sizeof, and the host reads only
 *    what that size covers;
 *  - structs the host fills in plugin memory (pipe_sample, pipe_sample_id,
 *    pipe_symbol): the plugin sets `size = sizeof(...)` before the call
 *    (PIPE_INIT does it) and the host writes only what both sides know;
 *  - structs the host hands out (pipe_host, pipe_meta, pipe_batch): the
 *    host's sizeof; a plugin reads a field added later only when `size`
 *    covers it (PIPE_HAS).  Tables the host hands out carry their element
 *    size (pipe_meta.event_size): index them with the helpers below.
 *  - `struct pipe_record` is frozen: it never grows (per-record additions
 *    come as parallel arrays in `struct pipe_batch`).
 *
 * Threading.  The host calls every function of one instance from one
 * thread at a time, never two at once.  Sources and sinks are called from
 * the main thread.  Codec instances may be called from decoding worker
 * threads: the host opens one instance per thread and never shares it, so
 * a codec keeps per-instance state without locks but must not keep
 * mutable state in globals.  Host calls take the instance's ctx and are
 * safe from the thread that is running that instance's call; a plugin
 * never calls the host from threads of its own.
 */
#ifndef PIPE_PLUGIN_H
#define PIPE_PLUGIN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PIPE_ABI_MAJOR 2
#ifndef PIPE_TEST_ABI_GROW
#define PIPE_ABI_MINOR 2
#define PIPE_TEST_GROWN
#else
/* pipe's test suite only: a host as a later minor would build it, its
 * structs grown at the end, to show that plugins of this minor still run
 * on it.  Never define it elsewhere. */
#define PIPE_ABI_MINOR 3
#define PIPE_TEST_GROWN uint64_t test_grown[3];
#endif
#define PIPE_ABI ((PIPE_ABI_MAJOR << 16) | PIPE_ABI_MINOR)

#if defined(__GNUC__)
#define PIPE_EXPORT __attribute__((visibility("default")))
#define PIPE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PIPE_EXPORT
#define PIPE_PRINTF(a, b)
#endif

/* Set `size` of a struct the host fills: struct pipe_sample s = PIPE_INIT(s); */
#define PIPE_INIT(var) { .size = sizeof(var) }
/* Whether a host-handed struct `p` (with a `size`) has member `field`. */
#define PIPE_HAS(p, field)                                            \
	((p)->size >= offsetof(__typeof__(*(p)), field) + sizeof((p)->field))
/* Whether the host table has function `fn` (a later minor added it). */
#define PIPE_HOST_HAS(host, fn) (PIPE_HAS(host, fn) && (host)->fn)

/* Return codes besides 0 and negative errno. */
#define PIPE_EOF 1 /* read: the source has no more records */

/* Stream ids: CPU streams are 0..nr_streams-1; the sideband is this. */
#define PIPE_STREAM_SIDEBAND UINT32_C(0xffffffff)
/* Event index of a record that belongs to no recorded event. */
#define PIPE_EVENT_NONE UINT32_C(0xffffffff)

enum pipe_kind {
	PIPE_KIND_SOURCE = 1,
	PIPE_KIND_CODEC = 2,
	PIPE_KIND_SINK = 3,
};

enum pipe_plugin_flags {
	PIPE_PLUGIN_BYTES = 1 << 0,   /* byte source or byte sink */
	PIPE_PLUGIN_SYMBOLS = 1 << 1, /* sink: host keeps process state */
	PIPE_PLUGIN_LIVE = 1 << 2,    /* source: records live, takes -- CMD */
	PIPE_PLUGIN_OUTPUT = 1 << 3,  /* sink: calls open_output (implied by
					 a PIPE_PARAM_OUTPUT parameter) */
};

/*
 * Codec ids, written in every block header: a file names its codec by id,
 * and the reader picks the plugin whose `codec_id` matches.  Ids below
 * PIPE_CODEC_USER_MIN are pipe's own (the unassigned ones are refused);
 * a third-party codec picks an id in [PIPE_CODEC_USER_MIN,
 * PIPE_CODEC_USER_MAX] at random, keeps it forever, and publishes it with
 * the codec, since files written with it carry it.
 */
enum pipe_codec_id {
	PIPE_CODEC_NONE = 0,
	PIPE_CODEC_ZLIB = 1,
	PIPE_CODEC_LZMA = 2,
	PIPE_CODEC_ZSTD = 3,
	PIPE_CODEC_BUNDLED_MAX = 3,          /* the highest id pipe assigned */
};
#define PIPE_CODEC_USER_MIN UINT32_C(0x80000000)
#define PIPE_CODEC_USER_MAX UINT32_C(0xfffffffe)

/*
 * Parameters.  A plugin declares a table; the host parses
 * `NAME:ITEM,key=value,...` against it (and against the host's own option
 * tables of the plugin's kind, see `pipe help`), rejects unknown keys
 * listing the valid ones, and prints `pipe help NAME` from it.
 */
enum pipe_param_type {
	PIPE_PARAM_STR = 1,      /* any text */
	PIPE_PARAM_INT = 2,      /* integer in [min, max] */
	PIPE_PARAM_BOOL = 3,     /* on|off; arg_int gives 1 or 0 */
	PIPE_PARAM_SIZE = 4,     /* bytes, K/M/G suffixes; in [min, max] */
	PIPE_PARAM_DURATION = 5, /* s/ms/us/ns suffixes (bare: s); in ns */
	PIPE_PARAM_ENUM = 6,     /* one of `choices` "a|b|c"; arg_int: index */
	PIPE_PARAM_LIST = 7,     /* items joined by '+'; see arg_list */
	PIPE_PARAM_OUTPUT = 8,   /* an output file the host opens: arg_file */
};

enum pipe_param_flags {
	PIPE_PARAM_POSITIONAL = 1 << 0, /* may be given as the bare first item */
	PIPE_PARAM_REQUIRED = 1 << 1,   /* must be given */
};

/* One parameter.  The table ends with an entry whose name is NULL; the
 * descriptor's `param_size` gives the element size it was built with. */
struct pipe_param {
	const char *name;    /* key, [a-z0-9_]+ */
	uint32_t type;       /* enum pipe_param_type */
	uint32_t flags;      /* enum pipe_param_flags */
	const char *def;     /* default as text, NULL for none */
	const char *help;    /* one line, no final period */
	const char *choices; /* ENUM: "a|b|c"; else NULL */
	int64_t min;         /* INT/SIZE/DURATION lower bound (both 0: none) */
	int64_t max;         /* INT/SIZE/DURATION upper bound */
	PIPE_TEST_GROWN
};

/*
 * Table entries, so a table reads as a list of typed parameters:
 *
 *   static const struct pipe_param params[] = {
 *	PIPE_P_STR("path", PIPE_PARAM_POSITIONAL, "-", "output file"),
 *	PIPE_P_BOOL("header", "on", "print a header line"),
 *	PIPE_P_END,
 *   };
 */
#define PIPE_P_STR(name, flags, def, help) \
	{ (name), PIPE_PARAM_STR, (flags), (def), (help), NULL, 0, 0 }
#define PIPE_P_INT(name, flags, def, min, max, help) \
	{ (name), PIPE_PARAM_INT, (flags), (def), (help), NULL, (min), (max) }
#define PIPE_P_BOOL(name, def, help) \
	{ (name), PIPE_PARAM_BOOL, 0, (def), (help), NULL, 0, 0 }
#define PIPE_P_SIZE(name, def, min, max, help) \
	{ (name), PIPE_PARAM_SIZE, 0, (def), (help), NULL, (min), (max) }
#define PIPE_P_DURATION(name, def, min, max, help) \
	{ (name), PIPE_PARAM_DURATION, 0, (def), (help), NULL, (min), (max) }
#define PIPE_P_ENUM(name, def, choices, help) \
	{ (name), PIPE_PARAM_ENUM, 0, (def), (help), (choices), 0, 0 }
#define PIPE_P_LIST(name, help) \
	{ (name), PIPE_PARAM_LIST, 0, NULL, (help), NULL, 0, 0 }
/* positional: `-k csv:out.csv`; the host opens it (see arg_file) */
#define PIPE_P_OUTPUT(name, def, help) \
	{ (name), PIPE_PARAM_OUTPUT, PIPE_PARAM_POSITIONAL, (def), (help), \
	  NULL, 0, 0 }
#define PIPE_P_END { NULL, 0, 0, NULL, NULL, NULL, 0, 0 }

/* Opaque per-instance handle the host passes to every host call. */
struct pipe_ctx;

/*
 * A record: one perf record exactly as the kernel writes it, borrowed.
 * The view lives until the call it was handed to returns (for a source's
 * own batch: until its next read).  This layout is frozen.
 */
struct pipe_record {
	const struct perf_event_header *hdr; /* hdr->size bytes, 8-aligned */
	uint64_t time;                       /* ns, perf clock; 0: unknown */
	uint32_t stream;                     /* CPU stream or SIDEBAND */
	uint32_t event;                      /* index in meta events, or NONE */
};

enum pipe_batch_flags {
	/* source: a full pass over every stream ended with this batch */
	PIPE_BATCH_ROUND_END = 1 << 0,
};

/*
 * A batch of records.  Sinks get the host's (size: the host's sizeof);
 * a source's `read` fills the one the host hands it, whose `size` the
 * host set and whose fields are zero.
 */
struct pipe_batch {
	uint32_t size;                  /* sizeof at the host's build */
	uint32_t flags;                 /* enum pipe_batch_flags */
	const struct pipe_record *recs; /* borrowed array */
	size_t nr;                      /* number of records */
	PIPE_TEST_GROWN
};

/* One recorded event, as the metadata describes it to sinks. */
struct pipe_meta_event {
	const struct perf_event_attr *attr; /* attr.size bytes meaningful */
	const char *name;                   /* "cpu-clock", "cycles", ... */
	const uint64_t *ids;                /* kernel sample ids */
	uint32_t nr_ids;
	uint32_t reserved;
	PIPE_TEST_GROWN
};

/* The metadata of a recording, read-only for sinks. */
struct pipe_meta {
	uint32_t size;                        /* sizeof at the host's build */
	uint32_t nr_events;
	const struct pipe_meta_event *events; /* use pipe_meta_event() */
	uint32_t event_size;                  /* element size of events */
	uint32_t nr_streams;                  /* CPU streams; sideband apart */
	const int32_t *stream_cpu;            /* CPU number of each stream */
	uint32_t nr_props;
	uint32_t reserved;
	const char *const *prop_keys;         /* "hostname", "release", ... */
	const char *const *prop_values;
	PIPE_TEST_GROWN
};

/* Event i of m (i < m->nr_events), whatever the host's element size. */
static inline const struct pipe_meta_event *
pipe_meta_event(const struct pipe_meta *m, uint32_t i)
{
	return (const struct pipe_meta_event *)(const void *)
		((const char *)m->events + (size_t)i * m->event_size);
}

/* A decoded PERF_RECORD_SAMPLE; fields absent from sample_type are 0.
 * Set `size` before decode_sample (PIPE_INIT). */
struct pipe_sample {
	uint32_t size;             /* caller: sizeof(struct pipe_sample) */
	uint32_t event;            /* index in meta events, or NONE */
	uint64_t sample_type;      /* which fields below are present */
	uint16_t misc;             /* header misc (cpumode bits) */
	uint16_t reserved;
	uint32_t pid, tid;
	uint32_t cpu, cpu_res;
	uint64_t id;               /* IDENTIFIER or ID */
	uint64_t ip;
	uint64_t time;             /* ns */
	uint64_t addr;
	uint64_t stream_id;
	uint64_t period;
	const uint64_t *callchain; /* borrowed, nr_callchain entries */
	uint64_t nr_callchain;
	const void *raw;           /* borrowed PERF_SAMPLE_RAW bytes */
	uint32_t raw_size;
	uint32_t reserved2;
	uint64_t weight;
	uint64_t data_src;
	uint64_t transaction;
	uint64_t phys_addr;
	uint64_t cgroup;
	PIPE_TEST_GROWN
};

/* The sample_id_all trailer of a non-sample record, or a sample's ids.
 * Set `size` before decode_sample_id (PIPE_INIT). */
struct pipe_sample_id {
	uint32_t size;             /* caller: sizeof(struct pipe_sample_id) */
	uint32_t event;            /* index in meta events, or NONE */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint32_t cpu;
	uint32_t reserved;
	PIPE_TEST_GROWN
};

enum pipe_symbol_flags {
	PIPE_SYM_KERNEL = 1 << 0,   /* kernel address */
	PIPE_SYM_RESOLVED = 1 << 1, /* name is a symbol */
	PIPE_SYM_DELETED = 1 << 2,  /* binary was deleted; dso ends "(deleted)" */
	PIPE_SYM_BUILDID_MISMATCH = 1 << 3,
};

/* An address resolved by the host's symbolizer; strings are borrowed for
 * the whole run.  Set `size` before symbolize (PIPE_INIT). */
struct pipe_symbol {
	uint32_t size;       /* caller: sizeof(struct pipe_symbol) */
	uint32_t flags;      /* enum pipe_symbol_flags */
	const char *name;    /* symbol (demangled per demangle=), NULL unresolved */
	const char *dso;     /* binary path, "[kernel.kallsyms]", NULL: no map */
	const char *dso_short; /* basename of dso */
	uint64_t sym_start;  /* symbol start in dso addresses */
	uint64_t offset;     /* ip - symbol start; or ip's offset in the dso */
	PIPE_TEST_GROWN
};

/*
 * Source lines (2.1).  One level of an address's source position: the
 * innermost level is the function holding the address (an inlined one,
 * maybe) and the line of the address; each next level is the function
 * the previous one was inlined into, with the line of that inlined call.
 * The last level is the function the binary's symbol names.  Strings
 * live for the whole run; file paths are as the debug info gives them.
 */
struct pipe_src_frame {
	const char *function;  /* demangled per demangle=; NULL: unknown */
	const char *file;      /* source file of `line`; NULL: unknown */
	uint32_t line;         /* 1-based; 0: unknown */
	uint32_t column;       /* 1-based; 0: unknown */
	const char *decl_file; /* where `function` is defined, or NULL */
	uint32_t decl_line;    /* its first line; 0: unknown */
	uint32_t inlined;      /* 1: this level was inlined into the next */
	PIPE_TEST_GROWN
};

/* An address's source position (host->srcline): `nr` levels, innermost
 * first; nr is 0 when the binary has no line information for it.  The
 * host's struct: index frames with pipe_src_frame(). */
struct pipe_srcline {
	uint32_t size;                       /* sizeof at the host's build */
	uint32_t nr;                         /* levels, 0: unknown */
	const struct pipe_src_frame *frames; /* use pipe_src_frame() */
	uint32_t frame_size;                 /* element size of frames */
	uint32_t reserved;
	PIPE_TEST_GROWN
};

/* Level i of sl (i < sl->nr), whatever the host's element size. */
static inline const struct pipe_src_frame *
pipe_src_frame(const struct pipe_srcline *sl, uint32_t i)
{
	return (const struct pipe_src_frame *)(const void *)
		((const char *)sl->frames + (size_t)i * sl->frame_size);
}

struct pipe_host;

/*
 * One sample as a per-sample sink sees it (its `sample` function): the
 * decoded fields, the thread's command, and the frames, symbolized only
 * when asked (host->frame_symbol).  Everything is borrowed until the call
 * returns.  The host's struct: read fields added later with PIPE_HAS.
 */
struct pipe_sample_view {
	uint32_t size;                    /* sizeof at the host's build */
	uint32_t event;                   /* index in meta events */
	const struct pipe_host *host;     /* for host calls from `sample` */
	struct pipe_ctx *ctx;             /* the instance, for host calls */
	const struct pipe_record *rec;    /* the record itself */
	const struct pipe_sample *sample; /* its decoded fields */
	const char *event_name;           /* "cpu-clock", never NULL */
	const char *comm;                 /* the thread's command, never NULL */
	const uint64_t *frames;           /* leaf first: the callchain, or ip */
	const uint16_t *frame_misc;       /* cpumode of each frame */
	uint32_t nr_frames;               /* at least 1 */
	uint32_t reserved;
	PIPE_TEST_GROWN
};

/* Sideband records, decoded by the host (`sideband` function). */
enum pipe_sideband_type {
	PIPE_SB_COMM = 1,       /* a thread's command name changed */
	PIPE_SB_MMAP = 2,       /* an executable or file mapping (MMAP, MMAP2) */
	PIPE_SB_FORK = 3,       /* a process or thread was created */
	PIPE_SB_EXIT = 4,       /* a process or thread ended */
	PIPE_SB_LOST = 5,       /* the kernel dropped records (LOST, LOST_SAMPLES) */
	PIPE_SB_THROTTLE = 6,   /* sampling throttled */
	PIPE_SB_UNTHROTTLE = 7, /* sampling resumed */
};

/* One decoded sideband record; fields not of its type are 0 or NULL.
 * Strings are NUL-terminated, borrowed until the call returns. */
struct pipe_sideband {
	uint32_t size;                 /* sizeof at the host's build */
	uint32_t type;                 /* enum pipe_sideband_type */
	const struct pipe_host *host;  /* for host calls from `sideband` */
	struct pipe_ctx *ctx;          /* the instance, for host calls */
	const struct pipe_record *rec; /* the record itself */
	uint64_t time;                 /* ns; 0: unknown */
	uint32_t pid, tid;             /* COMM, MMAP; FORK, EXIT: the child */
	uint32_t ppid, ptid;           /* FORK, EXIT: the parent */
	const char *comm;              /* COMM: the new name */
	uint32_t exec;                 /* COMM: 1 when set by exec */
	uint32_t prot;                 /* MMAP: PROT_* (MMAP2 only; else 0) */
	uint64_t addr, len, pgoff;     /* MMAP: the mapping */
	const char *filename;          /* MMAP: the mapped file */
	const uint8_t *build_id;       /* MMAP2 with a build-id, else NULL */
	uint32_t build_id_size;        /* its bytes */
	uint32_t reserved;
	uint64_t lost;                 /* LOST: how many records */
	uint64_t id;                   /* LOST, THROTTLE: the sample id */
	PIPE_TEST_GROWN
};

enum pipe_log_level {
	PIPE_LOG_ERROR = 0, /* printed always */
	PIPE_LOG_WARN = 1,  /* printed always, "warning: " */
	PIPE_LOG_NOTE = 2,  /* printed unless -q, "note: " */
	PIPE_LOG_DEBUG = 3, /* printed with -v */
};

/*
 * The host table.  Every function takes the instance's ctx.  Strings and
 * arrays returned are borrowed and live as long as the instance unless
 * said otherwise.  A function called where it does not belong (wrong
 * kind, wrong stage, say meta_set_prop from open) returns -EINVAL (or
 * NULL / NONE / 0) and prints one line naming the plugin and the call.
 */
struct pipe_host {
	uint32_t abi;  /* PIPE_ABI of the host */
	uint32_t size; /* sizeof(struct pipe_host) at the host's build */

	/* Parameters, already parsed and checked against the tables.
	 * Any stage.  A name the plugin's table does not declare is a
	 * warning and reads as unset. */
	const char *(*arg_str)(struct pipe_ctx *ctx, const char *name);
	int64_t (*arg_int)(struct pipe_ctx *ctx, const char *name);
	bool (*arg_is_set)(struct pipe_ctx *ctx, const char *name);
	/* LIST: number of items, *items set to a borrowed array */
	uint32_t (*arg_list)(struct pipe_ctx *ctx, const char *name,
			     const char *const **items);

	/*
	 * Errors: set the instance's one error message (what failed, the
	 * subject in quotes, the cause; lowercase, no final period), then
	 * return a negative errno.  `hint` adds the "hint:" line.  The host
	 * prints it, prefixed by nothing: name your subject yourself.
	 */
	void (*error)(struct pipe_ctx *ctx, const char *fmt, ...)
		PIPE_PRINTF(2, 3);
	void (*hint)(struct pipe_ctx *ctx, const char *fmt, ...)
		PIPE_PRINTF(2, 3);
	void (*log)(struct pipe_ctx *ctx, int level, const char *fmt, ...)
		PIPE_PRINTF(3, 4);
	bool (*interrupted)(struct pipe_ctx *ctx); /* SIGINT/SIGTERM seen */
	bool (*quiet)(struct pipe_ctx *ctx);       /* -q given */
	bool (*tty)(struct pipe_ctx *ctx);         /* stderr is a terminal */

	/* Metadata: record sources build it in `start`; sinks read it from
	 * `start_sink` on (NULL before). */
	const struct pipe_meta *(*meta)(struct pipe_ctx *ctx);
	const char *(*meta_prop)(struct pipe_ctx *ctx, const char *key);
	/* record source, in start: add an event; its index or -errno */
	int (*meta_add_event)(struct pipe_ctx *ctx,
			      const struct perf_event_attr *attr,
			      const char *name, const uint64_t *ids,
			      uint32_t nr_ids);
	int (*meta_set_streams)(struct pipe_ctx *ctx, uint32_t nr,
				const int32_t *cpus);
	int (*meta_set_prop)(struct pipe_ctx *ctx, const char *key,
			     const char *value);
	/* record source, after start: the event of a kernel sample id */
	uint32_t (*event_of_id)(struct pipe_ctx *ctx, uint64_t id);

	/* The sample decoder (once the metadata exists): no plugin parses
	 * sample_type bits.  out->size must be set. */
	int (*decode_sample)(struct pipe_ctx *ctx, const struct pipe_record *rec,
			     struct pipe_sample *out);
	int (*decode_sample_id)(struct pipe_ctx *ctx,
				const struct pipe_record *rec,
				struct pipe_sample_id *out);

	/* Live sources: the `-- CMD ARGS` (NULL-terminated, NULL if none). */
	char *const *(*command)(struct pipe_ctx *ctx);
	/* Live sources: the command ended with this wait status. */
	void (*command_exited)(struct pipe_ctx *ctx, int wait_status);

	/*
	 * The symbolizer (sinks with PIPE_PLUGIN_SYMBOLS, from start_sink
	 * on): resolves `ip` of thread `pid` in the process state as of the
	 * record being consumed (in finish: as of the end).  `misc` is the
	 * sample's header misc (cpumode).  Returns 0 with *out filled (name
	 * NULL when unresolved), or negative errno.  out->size must be set.
	 */
	int (*symbolize)(struct pipe_ctx *ctx, uint32_t pid, uint64_t ip,
			 uint16_t misc, struct pipe_symbol *out);
	/* The command name of thread tid ("[unknown]", never NULL). */
	const char *(*thread_comm)(struct pipe_ctx *ctx, uint32_t tid);

	/*
	 * Per-sample sinks, in `sample`: frame i of the view, resolved as
	 * symbolize does with the frame's cpumode (a return address is
	 * looked up one byte back, inside its call).  Never NULL; the
	 * struct is the host's (read later fields with PIPE_HAS) and lives
	 * until `sample` returns; name, dso and dso_short are "[unknown]"
	 * rather than NULL, and flags say whether it was resolved.
	 */
	const struct pipe_symbol *(*frame_symbol)(struct pipe_ctx *ctx,
			const struct pipe_sample_view *v, uint32_t i);

	/* The output file of a PIPE_PARAM_OUTPUT parameter, opened by the
	 * host under the rules of open_output before `open`; the host's:
	 * never fclose it.  NULL for another name. */
	FILE *(*arg_file)(struct pipe_ctx *ctx, const char *name);

	/*
	 * Sinks with PIPE_PLUGIN_OUTPUT, in open: the output file `path`
	 * under pipe's rule: "-" is standard output; an existing file is
	 * refused unless the user gave force=on (a host option of these
	 * sinks), and then replaced only when the run succeeds; the file the
	 * run reads is refused.  *out is the host's: write to it (or to
	 * fileno(*out)), never fclose it; the host flushes and closes it
	 * after finish.  Returns 0 or a negative errno with the message set.
	 */
	int (*open_output)(struct pipe_ctx *ctx, const char *path, FILE **out);

	/* Live sources: the command runs as process `pid` (the host stops
	 * it, as Ctrl-C would, if a plugin crashes). */
	void (*command_started)(struct pipe_ctx *ctx, int pid);

	/*
	 * 2.1: source lines and inline frames from the binaries' DWARF (the
	 * file itself or its debug file), for the same callers and with the
	 * same arguments as symbolize and frame_symbol.  Never NULL: nr 0
	 * when unknown (kernel addresses, no debug info).  The struct lives
	 * until the next srcline or frame_srcline call, its strings for the
	 * run.  Check PIPE_HOST_HAS(host, srcline) first.
	 */
	const struct pipe_srcline *(*srcline)(struct pipe_ctx *ctx,
			uint32_t pid, uint64_t ip, uint16_t misc);
	const struct pipe_srcline *(*frame_srcline)(struct pipe_ctx *ctx,
			const struct pipe_sample_view *v, uint32_t i);
	PIPE_TEST_GROWN
};

/*
 * The plugin descriptor.  One flat struct for every kind: a plugin fills
 * the fields of its kind and leaves the rest NULL.  `void *state` is the
 * instance the plugin allocated in `open`; it frees it in `close`.
 * Define it with PIPE_PLUGIN_SOURCE/CODEC/SINK, never by hand.
 *
 * Every function returning int returns 0 or a negative errno (read also
 * PIPE_EOF); after a failure the host prints the message set with
 * host->error, or one naming the plugin and the call.
 */
struct pipe_plugin {
	uint32_t abi;                     /* PIPE_ABI, set by the macros */
	uint32_t size;                    /* sizeof(struct pipe_plugin), ditto */
	uint32_t kind;                    /* enum pipe_kind, ditto */
	uint32_t flags;                   /* enum pipe_plugin_flags */
	const char *name;                 /* "zstd", "file", ... */
	const char *summary;              /* one line for `pipe plugins` */
	const char *version;              /* plugin version text */
	const struct pipe_param *params;  /* ends with name == NULL, or NULL */
	uint32_t param_size;              /* sizeof(struct pipe_param), macros */
	uint32_t codec_id;                /* codec: enum pipe_codec_id */
	uint64_t state_size;              /* >0: the host allocates the state */

	/* Every kind, both optional.  With state_size, the host allocates
	 * that many zeroed bytes as the state before `open` (*state points
	 * to them) and frees them after `close`; else `open` sets *state.
	 * `open` keeps `host` and `ctx` for later calls; when it fails it
	 * frees whatever it allocated (close is not called).  After a
	 * successful open, close comes last, also after failures. */
	int (*open)(const struct pipe_host *host, struct pipe_ctx *ctx,
		    void **state);
	void (*close)(void *state);

	/* Record source.  `start` builds the metadata and starts recording;
	 * `read` fills *out with records borrowed until the next call and
	 * returns 0, PIPE_EOF at the end, -EAGAIN when the host should poll
	 * `fds`, or negative errno.  `stop` asks for a clean end (signo: the
	 * signal that asked, 0 for duration/end); reads then drain. */
	int (*start)(void *state);
	int (*read)(void *state, struct pipe_batch *out);
	int (*fds)(void *state, int *fds, uint32_t cap); /* returns count */
	int (*stop)(void *state, int signo);

	/* Byte source.  `read_at` reads up to len bytes at off into buf and
	 * sets *got (0: end of file); a non-seekable source is read with
	 * increasing offsets only.  `byte_size` is optional: without it, or
	 * when it returns -ESPIPE, the source is read forward only. */
	int (*read_at)(void *state, uint64_t off, void *buf, size_t len,
		       size_t *got);
	int (*byte_size)(void *state, uint64_t *size);

	/* Codec: independent blocks.  dict_id 0 means no dictionary. */
	size_t (*bound)(void *state, size_t raw_len);
	int (*compress)(void *state, uint32_t dict_id, const void *src,
			size_t len, void *dst, size_t cap, size_t *out_len);
	/* raw_len is the exact decoded length from the block header */
	int (*decompress)(void *state, uint32_t dict_id, const void *src,
			  size_t len, void *dst, size_t raw_len);
	/* optional: make dictionary `id` usable by compress/decompress */
	int (*add_dict)(void *state, uint32_t id, const void *dict, size_t len);
	/* optional: train a dictionary of at most cap bytes from samples */
	int (*train)(void *state, const void *samples, const size_t *sizes,
		     uint32_t nr, void *dict, size_t cap, size_t *dict_len);

	/* Sink.  Record sinks `consume` batches in time order; byte sinks
	 * `write` finished pipe-file bytes.  `start_sink` sees the metadata;
	 * `flush` (optional) pushes buffered output to the file when the
	 * host asks (a byte sink: after each finished block); `finish` ends
	 * the output, once, after the last batch. */
	int (*start_sink)(void *state);
	int (*consume)(void *state, const struct pipe_batch *batch);
	int (*write)(void *state, const void *buf, size_t len);
	int (*flush)(void *state);
	int (*finish)(void *state);

	/*
	 * Per-record sinks (a record sink has `consume`, or these): `sample`
	 * gets every sample, `sideband` every comm, mmap, fork, exit, lost
	 * and throttle record, in time order.  The host keeps process state
	 * for them as for PIPE_PLUGIN_SYMBOLS (comm, frame_symbol).
	 */
	int (*sample)(void *state, const struct pipe_sample_view *v);
	int (*sideband)(void *state, const struct pipe_sideband *sb);

	/* Byte source, optional (ABI 2.2): the whole source mapped
	 * read-only, *len bytes at *base, valid until `close` (and the
	 * same bytes read_at gives).  The host then reads the file in
	 * place, without copying.  -ENOTSUP (or no `map`): it reads with
	 * read_at. */
	int (*map)(void *state, const void **base, uint64_t *len);
	PIPE_TEST_GROWN
};

/* The one symbol a plugin exports. */
#define PIPE_PLUGIN_SYMBOL "pipe_plugin"

/*
 * The descriptor, with `abi`, `size`, `kind` and `param_size` filled in:
 *
 *   PIPE_PLUGIN_SINK(
 *	.name = "count",
 *	.summary = "count records",
 *	.params = count_params,
 *	.open = count_open,
 *	...
 *   );
 */
#define PIPE_PLUGIN_DEFINE(kind_, ...)                                  \
	PIPE_EXPORT const struct pipe_plugin pipe_plugin = {            \
		.abi = PIPE_ABI,                                        \
		.size = sizeof(struct pipe_plugin),                     \
		.kind = (kind_),                                        \
		.param_size = sizeof(struct pipe_param),                \
		__VA_ARGS__                                             \
	}
#define PIPE_PLUGIN_SOURCE(...) PIPE_PLUGIN_DEFINE(PIPE_KIND_SOURCE, __VA_ARGS__)
#define PIPE_PLUGIN_CODEC(...) PIPE_PLUGIN_DEFINE(PIPE_KIND_CODEC, __VA_ARGS__)
#define PIPE_PLUGIN_SINK(...) PIPE_PLUGIN_DEFINE(PIPE_KIND_SINK, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* PIPE_PLUGIN_H */
