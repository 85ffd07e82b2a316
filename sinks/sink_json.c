/*
 * sink_json.c - the `json` record sink: samples as JSON in the layout of
 * `perf data convert --to-json` (format=perf, the default) or one object
 * per line (format=lines), symbolized by the host.  Output streams through
 * one fixed buffer, so memory does not grow with the samples; strings are
 * escaped and bytes that are not UTF-8 become U+FFFD.  See docs/json.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jsonw.h"
#include "pipe_plugin.h"

#define JSON_BUF_SIZE (256 * 1024) /* output buffer, flushed when full */
#define JSON_SYM_CACHE 4096        /* symbolized addresses kept, a power of 2 */
#define JSON_CMDLINE_MAX 4096      /* longest cmdline property we split */
#define JSON_ESC_SLOTS 65536       /* escaped names kept, a power of 2 */
#define JSON_ESC_BYTES (16 << 20)  /* their bytes at most */
#define JSON_STREAM_NS 200000000   /* pipe or tty: flush at least this often */

enum json_format {
	JSON_FORMAT_PERF = 0,  /* perf data convert --to-json */
	JSON_FORMAT_LINES = 1, /* one object per line */
};

enum json_events {
	JSON_EVENTS_SAMPLES = 0, /* samples only */
	JSON_EVENTS_ALL = 1,     /* plus mmap, comm, fork and exit records */
};

/* A buffered output file. */
struct jout {
	int fd;          /* output, or -1 */
	char *buf;       /* cap bytes */
	size_t len;      /* bytes pending in buf */
	size_t cap;      /* JSON_BUF_SIZE, or a literal's size */
	int err;         /* first write error (positive errno), 0: none */
	uint64_t bytes;  /* bytes written so far */
};

/* A precomputed run of layout: delimiters, indentation and a key. */
struct lit {
	char s[56];
	size_t n;
};

/* The layout of a sample, built once for the format (see lits_build). */
struct lits {
	struct lit open[2];    /* [first?]: up to the timestamp value */
	struct lit pid, tid, cpu, comm, event, period;
	struct lit chain;      /* "callchain": [ */
	struct lit frame[2];   /* [first?]: a frame up to its ip value */
	struct lit symbol, dso;
	struct lit frame_end;
	struct lit chain_end;
	struct lit close;      /* the end of the sample */
};

/* A symbol or dso name (stable for the run) already escaped and quoted. */
struct esc_slot {
	const char *name; /* the host's string; NULL: empty slot */
	char *json;       /* "escaped", malloc'd */
	size_t len;
};

/* One remembered symbolization. */
struct sym_slot {
	uint64_t ip;
	uint32_t pid;
	uint16_t misc;      /* cpumode the ip was resolved in */
	uint16_t reserved;
	uint64_t gen;       /* valid while equal to json.sym_gen */
	struct pipe_symbol sym;
};

struct json {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	const char *path;             /* output path, "-" for stdout */
	struct jout out;              /* the output */
	struct jout side;             /* format=perf, events=all: the
				       * sideband, in an unlinked temporary
				       * file until the end */
	const struct pipe_meta *meta; /* borrowed, from start_sink */
	uint32_t format;              /* enum json_format */
	uint32_t events;              /* enum json_events */
	bool symbols;                 /* resolve callchain addresses */
	bool srcline;                 /* frames' source lines (DWARF) */
	bool seconds;                 /* time=s: timestamps in seconds */
	bool pretty;                  /* format=perf with perf's whitespace */
	bool streaming;               /* output is a pipe, tty or socket */
	uint64_t flushed_ns;          /* CLOCK_MONOTONIC of the last flush */
	uint64_t samples;             /* samples written */
	uint64_t sideband;            /* sideband records written */
	uint64_t lost;                /* sum of LOST and LOST_SAMPLES counts */
	uint64_t throttle;            /* THROTTLE records */
	uint64_t bad;                 /* records too malformed to write */
	uint64_t sym_gen;             /* bumped by every sideband record */
	struct sym_slot *cache;       /* JSON_SYM_CACHE slots */
	struct esc_slot *esc;         /* JSON_ESC_SLOTS slots */
	uint32_t nr_esc;              /* slots in use */
	size_t esc_bytes;             /* bytes of their json */
	struct lits lit;              /* the sample layout */
};

static const struct pipe_param json_params[] = {
	{ "path", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL, "-",
	  "output file; - writes standard output", NULL, 0, 0 },
	{ "format", PIPE_PARAM_ENUM, 0, "perf",
	  "perf: the layout of perf data convert --to-json; lines: one "
	  "object per line", "perf|lines", 0, 0 },
	{ "compact", PIPE_PARAM_BOOL, 0, "off",
	  "format=perf without whitespace", NULL, 0, 0 },
	{ "symbols", PIPE_PARAM_BOOL, 0, "on",
	  "resolve addresses to symbol and dso (off: raw addresses)",
	  NULL, 0, 0 },
	{ "srcline", PIPE_PARAM_BOOL, 0, "off",
	  "add each frame's source line and inlined functions (DWARF)",
	  NULL, 0, 0 },
	{ "time", PIPE_PARAM_ENUM, 0, "ns",
	  "timestamps in nanoseconds or in seconds with 9 decimals", "ns|s",
	  0, 0 },
	{ "events", PIPE_PARAM_ENUM, 0, "samples",
	  "samples, or all: also the mmap, comm, fork and exit records",
	  "samples|all", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

/* ---- buffered output ---------------------------------------------------- */

static void jout_write_all(struct jout *o, const char *p, size_t n)
{
	while (n > 0 && !o->err) {
		ssize_t w = write(o->fd, p, n);

		if (w < 0) {
			if (errno != EINTR)
				o->err = errno;
			continue;
		}
		p += w;
		n -= (size_t)w;
		o->bytes += (uint64_t)w;
	}
}

static void jout_flush(struct jout *o)
{
	assert(o->fd >= 0 || o->len == 0);
	jout_write_all(o, o->buf, o->len);
	o->len = 0;
}

/* Room for n more bytes (n <= cap) at the returned pointer; the caller
 * writes them and adds what it used to o->len. */
static inline char *jout_reserve(struct jout *o, size_t n)
{
	if (o->len + n > o->cap)
		jout_flush(o);
	return o->buf + o->len;
}

static void jout_put(struct jout *o, const char *p, size_t n)
{
	if (o->len + n > o->cap) {
		jout_flush(o);
		if (n > o->cap) {
			jout_write_all(o, p, n);
			return;
		}
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

/* A literal: always copies the whole array (a fixed-size copy the
 * compiler inlines), then keeps l->n bytes of it. */
static inline void jout_lit_put(struct jout *o, const struct lit *l)
{
	memcpy(jout_reserve(o, sizeof(l->s)), l->s, sizeof(l->s));
	o->len += l->n;
}

static void jout_lit(struct jout *o, const char *s)
{
	jout_put(o, s, strlen(s));
}

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

static int u64_digits(uint64_t v)
{
	int n = 1;

	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Decimal digits written straight into the buffer, two at a time. */
static void jout_u64(struct jout *o, uint64_t v)
{
	int n = u64_digits(v);
	char *end = jout_reserve(o, 20) + n;

	o->len += (size_t)n;
	while (v >= 100) {
		end -= 2;
		memcpy(end, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(end - 2, digit_pairs + 2 * v, 2);
	else
		end[-1] = (char)('0' + v);
}

static void jout_i64(struct jout *o, int64_t v)
{
	if (v < 0) {
		jout_put(o, "-", 1);
		jout_u64(o, (uint64_t)0 - (uint64_t)v);
		return;
	}
	jout_u64(o, (uint64_t)v);
}

/* "0x1f" with the quotes, as perf writes addresses */
static void jout_hex(struct jout *o, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char *p = jout_reserve(o, 20);
	int nd = (64 - __builtin_clzll(v | 1) + 3) / 4;
	char *end = p + 3 + nd;

	memcpy(p, "\"0x", 3);
	*end = '"';
	o->len += (size_t)nd + 4;
	while (end - p > 4) {
		end -= 2;
		end[0] = digits[v >> 4 & 15];
		end[1] = digits[v & 15];
		v >>= 8;
	}
	if (end - p > 3)
		end[-1] = digits[v & 15];
}

/* A JSON string with quotes (see jsonw.h).  NULL writes "". */
static void jout_str(struct jout *o, const char *str)
{
	const char *s = str ? str : "";
	size_t left = strlen(s);
	char *p;

	p = jout_reserve(o, 1);
	*p = '"';
	o->len++;
	while (left > 0) {
		size_t n = left < JSONW_CHUNK ? left : JSONW_CHUNK, used;

		p = jout_reserve(o, JSONW_OUT_MAX(n));
		o->len += jsonw_chunk(p, s, left, &used);
		s += used;
		left -= used;
	}
	p = jout_reserve(o, 1);
	*p = '"';
	o->len++;
}

/* ---- layout ------------------------------------------------------------- */

/* Before a value in an object or array: the comma, then (pretty) a newline
 * and `depth` tabs, as perf does. */
static void delim(struct json *j, struct jout *o, bool comma, int depth)
{
	static const char tabs[] = "\n\t\t\t\t\t\t\t\t";

	if (comma)
		jout_put(o, ",", 1);
	if (j->pretty)
		jout_put(o, tabs, (size_t)depth + 1);
}

/* `"name": ` after its delimiter */
static void key(struct json *j, struct jout *o, bool comma, int depth,
		const char *name)
{
	delim(j, o, comma, depth);
	jout_put(o, "\"", 1);
	jout_lit(o, name);
	if (j->pretty)
		jout_put(o, "\": ", 3);
	else
		jout_put(o, "\":", 2);
}

static void time_put(struct json *j, struct jout *o, uint64_t ns)
{
	char frac[10];
	int i;

	if (!j->seconds) {
		jout_i64(o, (int64_t)ns);
		return;
	}
	jout_u64(o, ns / 1000000000u);
	ns %= 1000000000u;
	frac[0] = '.';
	for (i = 9; i >= 1; i--) {
		frac[i] = (char)('0' + ns % 10);
		ns /= 10;
	}
	jout_put(o, frac, 10);
}

/* ---- headers ------------------------------------------------------------ */

static const char *prop(struct json *j, const char *k)
{
	return j->host->meta_prop(j->ctx, k);
}

/* A property that holds a decimal number, as a JSON number. */
static void key_number_prop(struct json *j, struct jout *o, int depth,
			    const char *name, const char *k)
{
	const char *v = prop(j, k);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || *v == '-')
		return;
	key(j, o, true, depth, name);
	jout_u64(o, n);
}

static void key_string_prop(struct json *j, struct jout *o, int depth,
			    const char *name, const char *k)
{
	const char *v = prop(j, k);

	if (!v)
		return;
	key(j, o, true, depth, name);
	jout_str(o, v);
}

/* "captured-on" from the recording's start, as perf's "%FT%TZ" */
static void key_captured_on(struct json *j, struct jout *o, int depth)
{
	const char *v = prop(j, "start_realtime_ns");
	char buf[64], *end;
	unsigned long long ns;
	struct tm tm;
	time_t t;

	if (!v)
		return;
	errno = 0;
	ns = strtoull(v, &end, 10);
	if (errno || *end)
		return;
	t = (time_t)(ns / 1000000000u);
	if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%FT%TZ", &tm))
		return;
	key(j, o, true, depth, "captured-on");
	jout_str(o, buf);
}

/* "cmdline" as perf's array: the property split at spaces. */
static void key_cmdline(struct json *j, struct jout *o, int depth)
{
	const char *v = prop(j, "cmdline");
	bool first = true;
	char word[JSON_CMDLINE_MAX];

	if (!v)
		return;
	key(j, o, true, depth, "cmdline");
	jout_put(o, "[", 1);
	while (*v) {
		size_t n = strcspn(v, " ");

		if (n > 0) {
			if (n >= sizeof(word))
				n = sizeof(word) - 1;
			memcpy(word, v, n);
			word[n] = '\0';
			delim(j, o, !first, depth + 1);
			jout_str(o, word);
			first = false;
		}
		v += strcspn(v, " ");
		v += strspn(v, " ");
	}
	delim(j, o, false, depth);
	jout_put(o, "]", 1);
}

/* "events": the recorded events, which perf's layout leaves out. */
static void key_events(struct json *j, struct jout *o, int depth)
{
	uint32_t i;

	key(j, o, true, depth, "events");
	jout_put(o, "[", 1);
	for (i = 0; i < j->meta->nr_events; i++) {
		const struct pipe_meta_event *e = pipe_meta_event(j->meta, i);

		delim(j, o, i > 0, depth + 1);
		jout_put(o, "{", 1);
		key(j, o, false, depth + 2, "name");
		jout_str(o, e->name);
		if (e->attr) {
			key(j, o, true, depth + 2, "type");
			jout_u64(o, e->attr->type);
			key(j, o, true, depth + 2, "config");
			jout_u64(o, e->attr->config);
			key(j, o, true, depth + 2, e->attr->freq ?
			    "sample_freq" : "sample_period");
			jout_u64(o, e->attr->sample_period);
		}
		delim(j, o, false, depth + 1);
		jout_put(o, "}", 1);
	}
	if (j->meta->nr_events)
		delim(j, o, false, depth);
	jout_put(o, "]", 1);
}

/* "properties": every metadata property, as text. */
static void key_properties(struct json *j, struct jout *o, int depth)
{
	uint32_t i;

	key(j, o, true, depth, "properties");
	jout_put(o, "{", 1);
	for (i = 0; i < j->meta->nr_props; i++) {
		/* keys come from the recording: escaped like any string */
		delim(j, o, i > 0, depth + 1);
		jout_str(o, j->meta->prop_keys[i]);
		jout_put(o, ": ", j->pretty ? 2 : 1);
		jout_str(o, j->meta->prop_values[i]);
	}
	if (j->meta->nr_props)
		delim(j, o, false, depth);
	jout_put(o, "}", 1);
}

/* The keys of perf's "headers" object that a pipe recording knows, then
 * the events and properties. */
static void headers_put(struct json *j, struct jout *o, int depth)
{
	jout_put(o, "{", 1);
	key(j, o, false, depth + 1, "header-version");
	jout_put(o, "1", 1);
	key_captured_on(j, o, depth + 1);
	key_string_prop(j, o, depth + 1, "hostname", "hostname");
	key_string_prop(j, o, depth + 1, "os-release", "release");
	key_string_prop(j, o, depth + 1, "arch", "arch");
	key_string_prop(j, o, depth + 1, "cpu-desc", "cpu_desc");
	key_string_prop(j, o, depth + 1, "cpuid", "cpuid");
	key_number_prop(j, o, depth + 1, "nrcpus-online", "nr_cpus_online");
	key_number_prop(j, o, depth + 1, "nrcpus-avail", "nr_cpus_avail");
	key_cmdline(j, o, depth + 1);
	key_events(j, o, depth + 1);
	key_properties(j, o, depth + 1);
	delim(j, o, false, depth);
	jout_put(o, "}", 1);
}

/* ---- samples ------------------------------------------------------------ */

static bool sym_resolve(struct json *j, uint32_t pid, uint64_t ip,
			uint16_t misc, struct pipe_symbol *out)
{
	uint64_t h = (ip ^ ((uint64_t)pid << 32) ^ misc) *
		     UINT64_C(0x9e3779b97f4a7c15);
	struct sym_slot *slot = &j->cache[h >> 52 & (JSON_SYM_CACHE - 1)];

	if (slot->gen == j->sym_gen && slot->ip == ip && slot->pid == pid &&
	    slot->misc == misc) {
		*out = slot->sym;
		return out->name != NULL;
	}
	if (j->host->symbolize(j->ctx, pid, ip, misc, out) < 0)
		memset(out, 0, sizeof(*out));
	slot->gen = j->sym_gen;
	slot->ip = ip;
	slot->pid = pid;
	slot->misc = misc;
	slot->sym = *out;
	return out->name != NULL;
}

/* Write a symbol or dso name, escaping it once: the symbolizer's strings
 * live for the whole run, so their address identifies them.  The table
 * stops growing at JSON_ESC_SLOTS / 2 names or JSON_ESC_BYTES. */
static void name_put(struct json *j, struct jout *o, const char *name)
{
	uint64_t h = (uint64_t)(uintptr_t)name * UINT64_C(0x9e3779b97f4a7c15);
	uint32_t i = (uint32_t)(h >> 40) & (JSON_ESC_SLOTS - 1);
	struct esc_slot *e;
	struct jout tmp;
	size_t cap;

	for (;; i = (i + 1) & (JSON_ESC_SLOTS - 1)) {
		e = &j->esc[i];
		if (e->name == name) {
			jout_put(o, e->json, e->len);
			return;
		}
		if (!e->name)
			break;
	}
	cap = 6 * strlen(name) + 3;
	if (j->nr_esc >= JSON_ESC_SLOTS / 2 ||
	    j->esc_bytes + cap > JSON_ESC_BYTES || cap > JSON_BUF_SIZE) {
		jout_str(o, name);
		return;
	}
	tmp = (struct jout){ .fd = -1, .cap = cap };
	tmp.buf = malloc(cap);
	if (!tmp.buf) {
		jout_str(o, name);
		return;
	}
	jout_str(&tmp, name);
	e->name = name;
	e->json = tmp.buf;
	e->len = tmp.len;
	j->nr_esc++;
	j->esc_bytes += cap;
	jout_put(o, e->json, e->len);
}

/* `"srcline": "FILE:LINE"` of one level, when it has a line. */
static void srcline_key(struct json *j, struct jout *o, int depth,
			const struct pipe_src_frame *f)
{
	char buf[4200];

	if (!f->file || !f->line)
		return;
	snprintf(buf, sizeof(buf), "%s:%" PRIu32, f->file, f->line);
	key(j, o, true, depth, "srcline");
	jout_str(o, buf);
}

/*
 * A frame's source position: "srcline", the line in the frame's own
 * function, and "inlined", the functions inlined there (innermost first),
 * each with its line.  A return address is looked up `back` (1) byte
 * earlier, inside its call.
 */
static void frame_srcline_put(struct json *j, struct jout *o, uint32_t pid,
			      uint64_t ip, uint32_t back, uint16_t cpumode)
{
	int d = j->format == JSON_FORMAT_LINES ? 0 : 2;
	const struct pipe_srcline *sl;
	uint32_t i;

	sl = j->host->srcline(j->ctx, pid, ip - back, cpumode);
	if (sl->nr == 0)
		return;
	srcline_key(j, o, d + 3, pipe_src_frame(sl, sl->nr - 1));
	if (sl->nr < 2)
		return;
	key(j, o, true, d + 3, "inlined");
	jout_put(o, "[", 1);
	for (i = 0; i + 1 < sl->nr; i++) {
		const struct pipe_src_frame *f = pipe_src_frame(sl, i);

		delim(j, o, i > 0, d + 4);
		jout_put(o, "{", 1);
		key(j, o, false, d + 5, "symbol");
		jout_str(o, f->function ? f->function : "[unknown]");
		srcline_key(j, o, d + 5, f);
		delim(j, o, false, d + 4);
		jout_put(o, "}", 1);
	}
	delim(j, o, false, d + 3);
	jout_put(o, "]", 1);
}

/* One callchain entry: ip, and symbol and dso only when resolved. */
static void frame_put(struct json *j, struct jout *o, bool first,
		      uint32_t pid, uint64_t ip, uint32_t back,
		      uint16_t cpumode)
{
	struct pipe_symbol sym = PIPE_INIT(sym);

	jout_lit_put(o, &j->lit.frame[first]);
	jout_hex(o, ip);
	if (j->symbols && sym_resolve(j, pid, ip, cpumode, &sym)) {
		jout_lit_put(o, &j->lit.symbol);
		name_put(j, o, sym.name);
		if (sym.dso_short && *sym.dso_short) {
			jout_lit_put(o, &j->lit.dso);
			name_put(j, o, sym.dso_short);
		}
		if (j->srcline)
			frame_srcline_put(j, o, pid, ip, back, cpumode);
	}
	jout_lit_put(o, &j->lit.frame_end);
}

/* The callchain without its context markers; a sample without one gets
 * one entry for its ip. */
static void callchain_put(struct json *j, struct jout *o,
			  const struct pipe_sample *s)
{
	uint16_t cpumode = s->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool first = true;
	uint32_t back = 0;
	uint64_t i;

	jout_lit_put(o, &j->lit.chain);
	if (!(s->sample_type & PERF_SAMPLE_CALLCHAIN)) {
		frame_put(j, o, true, s->pid, s->ip, 0, cpumode);
		first = false;
	}
	for (i = 0; i < s->nr_callchain; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= PERF_CONTEXT_MAX) {
			if (ip == PERF_CONTEXT_KERNEL)
				cpumode = PERF_RECORD_MISC_KERNEL;
			else if (ip == PERF_CONTEXT_USER)
				cpumode = PERF_RECORD_MISC_USER;
			else if (ip == PERF_CONTEXT_HV)
				cpumode = PERF_RECORD_MISC_HYPERVISOR;
			/* a context starts where it was interrupted; the
			 * entries after it are return addresses */
			back = 0;
			continue;
		}
		frame_put(j, o, first, s->pid, ip, back, cpumode);
		first = false;
		back = 1;
	}
	jout_lit_put(o, &j->lit.chain_end);
}

static void sample_put(struct json *j, const struct pipe_record *r)
{
	struct jout *o = &j->out;
	struct pipe_sample s = PIPE_INIT(s);

	if (j->host->decode_sample(j->ctx, r, &s) < 0) {
		j->bad++;
		return;
	}
	jout_lit_put(o, &j->lit.open[j->samples == 0]);
	time_put(j, o, s.time);
	jout_lit_put(o, &j->lit.pid);
	jout_i64(o, (int32_t)s.pid);
	jout_lit_put(o, &j->lit.tid);
	jout_i64(o, (int32_t)s.tid);
	if (s.sample_type & PERF_SAMPLE_CPU) {
		jout_lit_put(o, &j->lit.cpu);
		jout_i64(o, (int32_t)s.cpu);
	}
	jout_lit_put(o, &j->lit.comm);
	jout_str(o, j->host->thread_comm(j->ctx, s.tid));
	callchain_put(j, o, &s);
	jout_lit_put(o, &j->lit.event);
	if (s.event < j->meta->nr_events)
		jout_str(o, pipe_meta_event(j->meta, s.event)->name);
	else
		jout_lit(o, "null");
	if (s.sample_type & PERF_SAMPLE_PERIOD) {
		jout_lit_put(o, &j->lit.period);
		jout_u64(o, s.period);
	}
	jout_lit_put(o, &j->lit.close);
	j->samples++;
}

/* Build one literal with the layout functions. */
static struct jout *lit_begin(struct jout *tmp, struct lit *l)
{
	*tmp = (struct jout){ .fd = -1, .buf = l->s, .cap = sizeof(l->s) };
	return tmp;
}

static void lit_end(struct jout *tmp, struct lit *l)
{
	assert(tmp->len < sizeof(l->s));
	l->n = tmp->len;
}

static void lit_key(struct json *j, struct lit *l, bool comma, int depth,
		    const char *name)
{
	struct jout tmp;

	key(j, lit_begin(&tmp, l), comma, depth, name);
	lit_end(&tmp, l);
}

/* The sample layout: perf's (depth 2 in "samples"), or a line's. */
static void lits_build(struct json *j)
{
	bool lines = j->format == JSON_FORMAT_LINES;
	int d = lines ? 0 : 2;
	struct lits *L = &j->lit;
	struct jout tmp;
	int first;

	for (first = 0; first <= 1; first++) {
		lit_begin(&tmp, &L->open[first]);
		if (!lines)
			delim(j, &tmp, !first, d);
		jout_put(&tmp, "{", 1);
		if (lines)
			jout_lit(&tmp, "\"type\":\"sample\"");
		key(j, &tmp, lines, d + 1, "timestamp");
		lit_end(&tmp, &L->open[first]);

		lit_begin(&tmp, &L->frame[first]);
		delim(j, &tmp, !first, d + 2);
		jout_put(&tmp, "{", 1);
		key(j, &tmp, false, d + 3, "ip");
		lit_end(&tmp, &L->frame[first]);
	}
	lit_key(j, &L->pid, true, d + 1, "pid");
	lit_key(j, &L->tid, true, d + 1, "tid");
	lit_key(j, &L->cpu, true, d + 1, "cpu");
	lit_key(j, &L->comm, true, d + 1, "comm");
	lit_key(j, &L->event, true, d + 1, "event");
	lit_key(j, &L->period, true, d + 1, "period");
	lit_key(j, &L->symbol, true, d + 3, "symbol");
	lit_key(j, &L->dso, true, d + 3, "dso");
	lit_key(j, &L->chain, true, d + 1, "callchain");
	L->chain.s[L->chain.n++] = '[';

	lit_begin(&tmp, &L->frame_end);
	delim(j, &tmp, false, d + 2);
	jout_put(&tmp, "}", 1);
	lit_end(&tmp, &L->frame_end);

	lit_begin(&tmp, &L->chain_end);
	delim(j, &tmp, false, d + 1);
	jout_put(&tmp, "]", 1);
	lit_end(&tmp, &L->chain_end);

	lit_begin(&tmp, &L->close);
	delim(j, &tmp, false, d);
	jout_put(&tmp, "}", 1);
	if (lines)
		jout_put(&tmp, "\n", 1);
	lit_end(&tmp, &L->close);
}

/* ---- sideband ----------------------------------------------------------- */

/* A NUL-terminated name at `off` of the record, or NULL if it does not
 * fit.  The kernel pads names to 8 bytes; a missing NUL is damage. */
static const char *record_name(const struct perf_event_header *h, size_t off)
{
	const char *p = (const char *)h + off;

	if (h->size <= off || !memchr(p, '\0', h->size - off))
		return NULL;
	return p;
}

static uint32_t rd32(const struct perf_event_header *h, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)h + off, sizeof(v));
	return v;
}

static uint64_t rd64(const struct perf_event_header *h, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)h + off, sizeof(v));
	return v;
}

/* The start of a sideband object: where it goes, and its "type". */
static struct jout *side_begin(struct json *j, const char *type,
			       const struct pipe_record *r, int *depth)
{
	bool lines = j->format == JSON_FORMAT_LINES;
	struct jout *o = lines ? &j->out : &j->side;

	*depth = lines ? 0 : 2;
	if (!lines)
		delim(j, o, j->sideband > 0, *depth);
	jout_put(o, "{", 1);
	key(j, o, false, *depth + 1, "type");
	jout_str(o, type);
	key(j, o, true, *depth + 1, "timestamp");
	time_put(j, o, r->time);
	return o;
}

static void side_end(struct json *j, struct jout *o, int depth)
{
	delim(j, o, false, depth);
	jout_put(o, "}", 1);
	if (j->format == JSON_FORMAT_LINES)
		jout_put(o, "\n", 1);
	j->sideband++;
}

static void key_i32(struct json *j, struct jout *o, int depth,
		    const char *name, uint32_t v)
{
	key(j, o, true, depth, name);
	jout_i64(o, (int32_t)v);
}

static int mmap_put(struct json *j, const struct pipe_record *r)
{
	const struct perf_event_header *h = r->hdr;
	size_t name_off = h->type == PERF_RECORD_MMAP2 ? 72 : 40;
	const char *name = record_name(h, name_off);
	struct jout *o;
	int depth;

	if (!name)
		return -EINVAL;
	o = side_begin(j, "mmap", r, &depth);
	key_i32(j, o, depth + 1, "pid", rd32(h, 8));
	key_i32(j, o, depth + 1, "tid", rd32(h, 12));
	key(j, o, true, depth + 1, "start");
	jout_hex(o, rd64(h, 16));
	key(j, o, true, depth + 1, "len");
	jout_hex(o, rd64(h, 24));
	key(j, o, true, depth + 1, "pgoff");
	jout_hex(o, rd64(h, 32));
	key(j, o, true, depth + 1, "filename");
	jout_str(o, name);
	side_end(j, o, depth);
	return 0;
}

static int comm_put(struct json *j, const struct pipe_record *r)
{
	const struct perf_event_header *h = r->hdr;
	const char *name = record_name(h, 16);
	struct jout *o;
	int depth;

	if (!name)
		return -EINVAL;
	o = side_begin(j, "comm", r, &depth);
	key_i32(j, o, depth + 1, "pid", rd32(h, 8));
	key_i32(j, o, depth + 1, "tid", rd32(h, 12));
	key(j, o, true, depth + 1, "comm");
	jout_str(o, name);
	key(j, o, true, depth + 1, "exec");
	jout_lit(o, h->misc & PERF_RECORD_MISC_COMM_EXEC ? "true" : "false");
	side_end(j, o, depth);
	return 0;
}

static int task_put(struct json *j, const struct pipe_record *r)
{
	const struct perf_event_header *h = r->hdr;
	struct jout *o;
	int depth;

	if (h->size < 24)
		return -EINVAL;
	o = side_begin(j, h->type == PERF_RECORD_FORK ? "fork" : "exit", r,
		       &depth);
	key_i32(j, o, depth + 1, "pid", rd32(h, 8));
	key_i32(j, o, depth + 1, "ppid", rd32(h, 12));
	key_i32(j, o, depth + 1, "tid", rd32(h, 16));
	key_i32(j, o, depth + 1, "ptid", rd32(h, 20));
	side_end(j, o, depth);
	return 0;
}

/* Count lost and throttled; write the sideband when asked. */
static void other_put(struct json *j, const struct pipe_record *r)
{
	const struct perf_event_header *h = r->hdr;
	int ret = 0;

	switch (h->type) {
	case PERF_RECORD_LOST:
		if (h->size >= 24)
			j->lost += rd64(h, 16);
		else
			j->bad++;
		return;
	case PERF_RECORD_LOST_SAMPLES:
		if (h->size >= 16)
			j->lost += rd64(h, 8);
		else
			j->bad++;
		return;
	case PERF_RECORD_THROTTLE:
		j->throttle++;
		return;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		break;
	default:
		return;
	}
	j->sym_gen++;
	if (j->events != JSON_EVENTS_ALL)
		return;
	if (h->type == PERF_RECORD_MMAP || h->type == PERF_RECORD_MMAP2)
		ret = mmap_put(j, r);
	else if (h->type == PERF_RECORD_COMM)
		ret = comm_put(j, r);
	else
		ret = task_put(j, r);
	if (ret < 0)
		j->bad++;
}

/* ---- the plugin --------------------------------------------------------- */

static int out_error(struct json *j, const char *path, int e)
{
	j->host->error(j->ctx, "cannot write '%s': %s", path, strerror(e));
	return -e;
}

static bool is_regular(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The host's output file; written through its fd with our own buffer. */
static int json_open_output(struct json *j)
{
	FILE *f;
	int ret = j->host->open_output(j->ctx, j->path, &f);

	if (ret < 0)
		return ret;
	j->out.fd = fileno(f);
	j->streaming = !is_regular(j->out.fd);
	return 0;
}

/* Where O_TMPFILE is not supported: a named file, unlinked at once. */
static int tmp_create(const char *dir)
{
	char path[4096];
	int fd, e;

	if (snprintf(path, sizeof(path), "%s/pipe-json.XXXXXX", dir) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (unlink(path) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The sideband waits in an unlinked temporary file (format=perf only). */
static int json_open_side(struct json *j)
{
	/* a set-id pipe or one with file capabilities takes no directory
	 * from its caller's environment (secure_getenv, as glibc's own
	 * temporary files do) */
	const char *dir = secure_getenv("TMPDIR");
	int e;

	j->side.buf = malloc(JSON_BUF_SIZE);
	j->side.cap = JSON_BUF_SIZE;
	if (!j->side.buf) {
		j->host->error(j->ctx, "cannot start sink 'json': out of "
			       "memory");
		return -ENOMEM;
	}
	if (!dir || !*dir)
		dir = "/tmp";
	j->side.fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (j->side.fd >= 0)
		return 0;
	j->side.fd = tmp_create(dir);
	if (j->side.fd >= 0)
		return 0;
	e = errno;
	j->host->error(j->ctx, "cannot create a temporary file in '%s': %s",
		       dir, strerror(e));
	j->host->hint(j->ctx, "set TMPDIR to a writable directory, or use "
		      "format=lines");
	return -e;
}

static void json_close(void *state)
{
	struct json *j = state;
	uint32_t i;

	if (!j)
		return;
	if (j->side.fd >= 0)
		close(j->side.fd);
	free(j->out.buf);
	free(j->side.buf);
	free(j->cache);
	for (i = 0; j->esc && i < JSON_ESC_SLOTS; i++)
		free(j->esc[i].json);
	free(j->esc);
	free(j);
}

static int json_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		     void **state)
{
	struct json *j = calloc(1, sizeof(*j));
	int ret;

	if (!j) {
		host->error(ctx, "cannot start sink 'json': out of memory");
		return -ENOMEM;
	}
	j->host = host;
	j->ctx = ctx;
	j->out.fd = -1;
	j->side.fd = -1;
	j->path = host->arg_str(ctx, "path");
	j->format = (uint32_t)host->arg_int(ctx, "format");
	j->events = (uint32_t)host->arg_int(ctx, "events");
	j->symbols = host->arg_int(ctx, "symbols");
	j->srcline = host->arg_int(ctx, "srcline") &&
		     PIPE_HOST_HAS(host, srcline);
	j->seconds = host->arg_int(ctx, "time") == 1;
	j->pretty = j->format == JSON_FORMAT_PERF &&
		    !host->arg_int(ctx, "compact");
	j->sym_gen = 1;
	j->out.buf = malloc(JSON_BUF_SIZE);
	j->out.cap = JSON_BUF_SIZE;
	j->cache = calloc(JSON_SYM_CACHE, sizeof(*j->cache));
	j->esc = calloc(JSON_ESC_SLOTS, sizeof(*j->esc));
	if (!j->out.buf || !j->cache || !j->esc) {
		host->error(ctx, "cannot start sink 'json': out of memory");
		ret = -ENOMEM;
		goto out_free;
	}
	if (j->format == JSON_FORMAT_PERF && j->events == JSON_EVENTS_ALL) {
		ret = json_open_side(j);
		if (ret < 0)
			goto out_free;
	}
	ret = json_open_output(j);
	if (ret < 0)
		goto out_free;
	*state = j;
	return 0;

out_free:
	json_close(j);
	return ret;
}

static int json_start(void *state)
{
	struct json *j = state;
	struct jout *o = &j->out;

	j->meta = j->host->meta(j->ctx);
	lits_build(j);
	if (j->format == JSON_FORMAT_LINES) {
		jout_lit(o, "{\"type\":\"header\","
			 "\"linux-perf-json-version\":1,\"headers\":");
		headers_put(j, o, 0);
		jout_lit(o, "}\n");
	} else {
		jout_put(o, "{", 1);
		key(j, o, false, 1, "linux-perf-json-version");
		jout_put(o, "1", 1);
		key(j, o, true, 1, "headers");
		headers_put(j, o, 1);
		key(j, o, true, 1, "samples");
		jout_put(o, "[", 1);
	}
	return o->err ? out_error(j, j->path, o->err) : 0;
}

static int json_consume(void *state, const struct pipe_batch *b)
{
	struct json *j = state;
	size_t i;

	for (i = 0; i < b->nr; i++) {
		const struct pipe_record *r = &b->recs[i];

		if (r->hdr->type == PERF_RECORD_SAMPLE)
			sample_put(j, r);
		else
			other_put(j, r);
	}
	/* a reader at the other end of a pipe sees the samples as they come */
	if (j->streaming && j->out.len) {
		uint64_t now = now_ns();

		if (now - j->flushed_ns >= JSON_STREAM_NS) {
			jout_flush(&j->out);
			j->flushed_ns = now;
		}
	}
	if (j->out.err)
		return out_error(j, j->path, j->out.err);
	if (j->side.err)
		return out_error(j, "(temporary file)", j->side.err);
	return 0;
}

static int json_flush(void *state)
{
	struct json *j = state;

	jout_flush(&j->out);
	return j->out.err ? out_error(j, j->path, j->out.err) : 0;
}

/* Append the waiting sideband array to the output. */
static int side_copy(struct json *j)
{
	struct jout *o = &j->out;
	off_t off = 0;

	jout_flush(&j->side);
	if (j->side.err)
		return out_error(j, "(temporary file)", j->side.err);
	key(j, o, true, 1, "sideband");
	jout_put(o, "[", 1);
	for (;;) {
		ssize_t n = pread(j->side.fd, j->side.buf, JSON_BUF_SIZE, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return out_error(j, "(temporary file)", errno);
		if (n == 0)
			break;
		jout_put(o, j->side.buf, (size_t)n);
		off += n;
	}
	if (j->sideband)
		delim(j, o, false, 1);
	jout_put(o, "]", 1);
	return 0;
}

static int json_finish(void *state)
{
	struct json *j = state;
	struct jout *o = &j->out;
	int ret;

	if (j->format == JSON_FORMAT_LINES) {
		jout_lit(o, "{\"type\":\"summary\",\"samples\":");
		jout_u64(o, j->samples);
		jout_lit(o, ",\"lost\":");
		jout_u64(o, j->lost);
		jout_lit(o, ",\"throttle\":");
		jout_u64(o, j->throttle);
		jout_lit(o, "}\n");
	} else {
		delim(j, o, false, 1);
		jout_put(o, "]", 1);
		key(j, o, true, 1, "lost");
		jout_u64(o, j->lost);
		key(j, o, true, 1, "throttle");
		jout_u64(o, j->throttle);
		if (j->events == JSON_EVENTS_ALL) {
			ret = side_copy(j);
			if (ret < 0)
				return ret;
		}
		delim(j, o, false, 0);
		jout_lit(o, "}\n");
	}
	jout_flush(o);
	if (o->err)
		return out_error(j, j->path, o->err);
	if (j->bad)
		j->host->log(j->ctx, PIPE_LOG_WARN, "json: %" PRIu64
			     " malformed records left out of '%s'", j->bad,
			     j->path);
	return 0;
}

PIPE_PLUGIN_SINK(
	.flags = PIPE_PLUGIN_SYMBOLS | PIPE_PLUGIN_OUTPUT,
	.name = "json",
	.summary = "samples as JSON: perf data convert --to-json's layout, "
		   "or JSON lines",
	.version = "1.0",
	.params = json_params,
	.open = json_open,
	.close = json_close,
	.start_sink = json_start,
	.consume = json_consume,
	.flush = json_flush,
	.finish = json_finish
);
