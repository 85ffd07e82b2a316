/*
 * symbolizer.c - address -> map -> binary -> symbol (see symbolizer.h).
 * Process state lives in threads.c; ELF reading in elfsyms.c; this file
 * keeps the binaries (dsos), finds their symbol tables lazily (the file
 * itself, a debug file by build-id or debuglink, kallsyms, perf-PID.map)
 * and checks build-ids against the recording.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbgfetch.h"
#include "decode.h"
#include "elfplt.h"
#include "elfsyms.h"
#include "err.h"
#include "kcache.h"
#include "meta.h"
#include "minidebug.h"
#include "srcline.h"
#include "symbolizer.h"
#include "symtab.h"
#include "threads.h"
#include "trust.h"
#include "unwind.h"

#define DSO_BUCKETS 1024
#define DELETED_SUFFIX " (deleted)"
#define KERNEL_DSO "[kernel.kallsyms]"
#define KERNEL_MIN_ADDR UINT64_C(0xffff800000000000)
#define SYSTEM_DEBUG_ROOT "/usr/lib/debug"
#define MAX_MODULES 1024
/* Kernel entries kept ahead of unwound user frames in a joined chain. */
#define CHAIN_KERNEL_MAX 512
#define CHAIN_MAX (CHAIN_KERNEL_MAX + 1 + UNWIND_MAX_FRAMES)

enum dso_kind {
	DSO_ELF = 0,      /* a file with ELF symbols */
	DSO_ANON = 1,     /* anonymous memory: JIT code via perf-PID.map */
	DSO_SPECIAL = 2,  /* [vdso], [stack], ...: no symbols */
	DSO_KERNEL = 3,   /* kallsyms */
	DSO_PERFMAP = 4,  /* /tmp/perf-PID.map itself */
};

struct dso {
	struct dso *next;                /* hash chain */
	char *name;                      /* as recorded, maybe "(deleted)" */
	const char *short_name;          /* basename of name */
	char *path;                      /* file to open ("(deleted)" cut) */
	uint8_t build_id[ELFSYMS_BUILD_ID_MAX]; /* recorded, if any */
	uint32_t build_id_len;           /* 0: none recorded */
	uint32_t kind;                   /* enum dso_kind */
	uint32_t flags;                  /* PIPE_SYM_DELETED, _MISMATCH */
	bool loaded;                     /* symbols looked for (once) */
	bool debug_only;                 /* info from a debug file */
	uint32_t map_pid;                /* first map of it: process, */
	uint64_t map_start, map_end;     /* and range (for map_files) */
	struct elfsyms_info info;        /* PT_LOADs of the file used */
	struct symtab *syms;             /* NULL: none found */
	struct symtab *plt;              /* NAME@plt stubs, or NULL */
	struct symtab *mini;             /* .gnu_debugdata's, or NULL */
	char *debug_path;                /* the debug file found, or NULL */
	struct srcline *src;             /* its DWARF lines, or NULL */
	bool src_tried;                  /* src looked for (once) */
};

/* A kernel module's text, from the kallsyms lines tagged [NAME]. */
struct kmod {
	struct dso *dso; /* "[NAME]" */
	uint64_t lo;     /* first symbol start (kallsyms addresses) */
	uint64_t hi;     /* last symbol start */
};

struct symbolizer {
	struct symbolizer_opts opts;     /* strings copied below */
	char *debug_dir;                 /* owned copy of opts.debug_dir */
	char *kallsyms;                  /* owned copy of opts.kallsyms */
	const struct meta *meta;         /* borrowed */
	struct threads *threads;         /* process state */
	struct dso *dsos[DSO_BUCKETS];   /* every binary seen */
	struct dso kernel;               /* [kernel.kallsyms] */
	struct kmod *mods;               /* kernel modules, by first seen */
	uint32_t nr_mods;
	uint64_t kernel_shift;           /* recorded _text - current _text */
	uint64_t nr_malformed;           /* sideband records ignored */
	bool kernel_checked;             /* kernel_differs is known */
	bool kernel_differs;             /* recorded kernel is another */
	char kernel_id[2 * ELFSYMS_BUILD_ID_MAX + 1]; /* running kernel's */
	struct unwind *unwind;           /* NULL until a stack is unwound */
	char found_debug[PATH_MAX];      /* the last debug file try_debug took */
	struct dbgfetch *fetch;          /* debuginfod client, or NULL */
	bool fetch_tried;                /* fetch made (or not) once */
	uint64_t chain[CHAIN_MAX];       /* the last joined call chain */
};

static void sym_warn(struct symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sym_warn(struct symbolizer *s, const char *fmt, ...)
{
	char line[768];
	va_list ap;

	if (!s->opts.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->opts.warn(s->opts.opaque, line);
}

static char *dup_or_null(const char *str, bool *failed)
{
	char *d;

	if (!str)
		return NULL;
	d = strdup(str);
	if (!d)
		*failed = true;
	return d;
}

int symbolizer_new(struct symbolizer **out, const struct symbolizer_opts *o,
		   const struct meta *meta, struct pipe_err *err)
{
	struct symbolizer *s;
	bool failed = false;

	s = calloc(1, sizeof(*s));
	if (!s)
		return pipe_err_set(err, -ENOMEM, "cannot allocate symbolizer");
	s->opts = *o;
	s->meta = meta;
	s->debug_dir = dup_or_null(o->debug_dir, &failed);
	s->kallsyms = dup_or_null(o->kallsyms, &failed);
	s->kernel.name = dup_or_null(KERNEL_DSO, &failed);
	if (failed || threads_new(&s->threads) < 0) {
		symbolizer_free(s);
		return pipe_err_set(err, -ENOMEM, "cannot allocate symbolizer");
	}
	s->kernel.short_name = s->kernel.name;
	s->kernel.kind = DSO_KERNEL;
	s->kernel.flags = PIPE_SYM_KERNEL;
	*out = s;
	return 0;
}

static void dso_free(struct dso *d)
{
	free(d->name);
	free(d->path);
	symtab_free(d->syms);
	symtab_free(d->plt);
	symtab_free(d->mini);
	srcline_free(d->src);
	free(d->debug_path);
	free(d);
}

void symbolizer_free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < DSO_BUCKETS; i++) {
		struct dso *d = s->dsos[i], *next;

		for (; d; d = next) {
			next = d->next;
			dso_free(d);
		}
	}
	threads_free(s->threads);
	unwind_free(s->unwind);
	dbgfetch_free(s->fetch);
	symtab_free(s->kernel.syms);
	free(s->kernel.name);
	free(s->mods);
	free(s->debug_dir);
	free(s->kallsyms);
	free(s);
}

static uint32_t dso_hash(const char *name, const uint8_t *id, uint32_t len)
{
	uint32_t h = 2166136261u;
	uint32_t i;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	for (i = 0; i < len; i++)
		h = (h ^ id[i]) * 16777619u;
	return h & (DSO_BUCKETS - 1);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static enum dso_kind kind_of(const char *name)
{
	if (starts_with(name, "//anon") || starts_with(name, "[anon") ||
	    starts_with(name, "/anon_hugepage"))
		return DSO_ANON;
	if (name[0] == '[' || name[0] == '\0')
		return DSO_SPECIAL;
	return DSO_ELF;
}

/* The dso of (name, build-id), created on first sight; NULL on ENOMEM. */
static struct dso *dso_get(struct symbolizer *s, const char *name,
			   const uint8_t *id, uint32_t id_len)
{
	uint32_t h = dso_hash(name, id, id_len);
	struct dso *d;
	const char *slash;

	for (d = s->dsos[h]; d; d = d->next)
		if (d->build_id_len == id_len &&
		    (id_len == 0 || memcmp(d->build_id, id, id_len) == 0) &&
		    strcmp(d->name, name) == 0)
			return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->name = strdup(name);
	d->path = strdup(name);
	if (!d->name || !d->path) {
		dso_free(d);
		return NULL;
	}
	if (ends_with(d->path, DELETED_SUFFIX)) {
		d->path[strlen(d->path) - strlen(DELETED_SUFFIX)] = '\0';
		d->flags |= PIPE_SYM_DELETED;
	}
	slash = strrchr(d->path, '/');
	d->short_name = d->name + (slash ? slash - d->path + 1 : 0);
	if (id_len)
		memcpy(d->build_id, id, id_len);
	d->build_id_len = id_len;
	d->kind = kind_of(name);
	d->next = s->dsos[h];
	s->dsos[h] = d;
	return d;
}

/* ---- sideband --------------------------------------------------------- */

/* The NUL-terminated string at off in a record, or NULL if it runs out. */
static const char *rec_string(const struct perf_event_header *h, size_t off)
{
	const char *p = (const char *)h + off;

	if (h->size <= off || strnlen(p, h->size - off) == h->size - off)
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

static void apply_mmap(struct symbolizer *s, const struct perf_event_header *h,
		       bool v2)
{
	size_t name_off = v2 ? 72 : 40;
	uint64_t start, len;
	const uint8_t *id = NULL;
	uint32_t pid, id_len = 0;
	const char *name;
	struct dso *d;

	name = rec_string(h, name_off);
	if (!name) {
		s->nr_malformed++;
		return;
	}
	pid = rd32(h, 8);
	if (pid == UINT32_MAX || (h->misc & PERF_RECORD_MISC_MMAP_DATA) ||
	    starts_with(name, KERNEL_DSO))
		return; /* kernel maps (kallsyms serves them), data maps */
	if (v2 && (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		id_len = *((const uint8_t *)h + 40);
		id = (const uint8_t *)h + 44;
		/* kernels have set the bit over maj/min/ino (docs/report.md) */
		if (id_len == 0 || id_len > ELFSYMS_BUILD_ID_MAX) {
			id_len = 0;
			id = NULL;
		}
	}
	d = dso_get(s, name, id, id_len);
	if (!d)
		return;
	start = rd64(h, 16);
	len = rd64(h, 24);
	if (!d->map_pid && len && start + len > start) {
		d->map_pid = pid;
		d->map_start = start;
		d->map_end = start + len;
	}
	if (threads_add_map(s->threads, pid, start, len, rd64(h, 32), d) ==
	    -EINVAL)
		s->nr_malformed++;
}

void symbolizer_apply(struct symbolizer *s, const struct perf_event_header *h)
{
	const char *comm;

	if (h->size < sizeof(*h))
		goto malformed;
	switch (h->type) {
	case PERF_RECORD_MMAP:
		if (h->size < 48)
			goto malformed;
		apply_mmap(s, h, false);
		break;
	case PERF_RECORD_MMAP2:
		if (h->size < 80)
			goto malformed;
		apply_mmap(s, h, true);
		break;
	case PERF_RECORD_COMM:
		comm = rec_string(h, 16);
		if (!comm)
			goto malformed;
		threads_set_comm(s->threads, rd32(h, 8), rd32(h, 12), comm,
				 h->misc & PERF_RECORD_MISC_COMM_EXEC);
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			unwind_drop(s->unwind, rd32(h, 8));
		break;
	case PERF_RECORD_FORK:
		if (h->size < 24)
			goto malformed;
		threads_fork(s->threads, rd32(h, 8), rd32(h, 12), rd32(h, 16),
			     rd32(h, 20));
		break;
	case PERF_RECORD_EXIT:
		if (h->size < 24)
			goto malformed;
		threads_exit(s->threads, rd32(h, 8), rd32(h, 16));
		if (rd32(h, 8) == rd32(h, 16))
			unwind_drop(s->unwind, rd32(h, 8));
		break;
	default:
		break;
	}
	return;
malformed:
	s->nr_malformed++;
}

const char *symbolizer_comm(struct symbolizer *s, uint32_t tid)
{
	const char *c = threads_comm(s->threads, tid);

	if (c)
		return c;
	/* the idle task never gets a COMM record; perf names it so too */
	return tid == 0 ? "swapper" : "[unknown]";
}

/* ---- text files: kallsyms and perf maps ------------------------------- */

/*
 * Read a whole (possibly /proc, size-less) regular file: *buf owned,
 * NUL-ended; *owner (may be NULL) is its owner.  A FIFO or device is
 * -EINVAL, never waited on.
 */
static int read_text(const char *path, char **buf, size_t *len,
		     uid_t *owner)
{
	struct pipe_err err;
	struct stat st;
	int fd, ret;

	fd = trust_open(path, "cannot read", &st, &err);
	if (fd < 0)
		return fd;
	if (owner)
		*owner = st.st_uid;
	ret = kcache_read_fd(fd, buf, len);
	close(fd);
	return ret;
}

/* Hex digits at p (no prefix) into *v; returns the end. */
static char *scan_hex(char *p, uint64_t *v)
{
	uint64_t x = 0;
	int n = 0;

	*v = 0;
	for (;; p++, n++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (*p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		if (n == 16)
			return p - n; /* too long: no number */
		x = x << 4 | d;
	}
	*v = x;
	return p;
}

static bool is_text_type(char c)
{
	return c == 't' || c == 'T' || c == 'w' || c == 'W';
}

/*
 * Parse kallsyms ("ADDR TYPE NAME [\t[MODULE]]" lines) in place into a
 * builder; *text gets the address of _text (0 if absent).
 */
/* Note that module `name` (len bytes) has a symbol at addr. */
static void add_module_sym(struct symbolizer *s, const char *name,
			   size_t len, uint64_t addr)
{
	char tag[80];
	struct kmod *k;
	uint32_t i;

	if (len == 0 || len > sizeof(tag) - 3)
		return;
	snprintf(tag, sizeof(tag), "[%.*s]", (int)len, name);
	for (i = 0; i < s->nr_mods; i++) {
		k = &s->mods[i];
		if (strcmp(k->dso->name, tag) == 0) {
			if (addr < k->lo)
				k->lo = addr;
			if (addr > k->hi)
				k->hi = addr;
			return;
		}
	}
	if (!s->mods)
		s->mods = calloc(MAX_MODULES, sizeof(*s->mods));
	if (!s->mods || s->nr_mods == MAX_MODULES)
		return;
	k = &s->mods[s->nr_mods];
	k->dso = dso_get(s, tag, NULL, 0);
	if (!k->dso)
		return;
	k->dso->kind = DSO_KERNEL;
	k->dso->flags = PIPE_SYM_KERNEL;
	k->lo = addr;
	k->hi = addr;
	s->nr_mods++;
}

static int parse_kallsyms(struct symbolizer *s, char *buf, size_t len,
			  struct symtab_builder *b, uint64_t *text,
			  bool *all_zero)
{
	char *p = buf, *end = buf + len;
	int ret = 0;

	*text = 0;
	*all_zero = true;
	while (p < end && ret == 0) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *line = p, *q, *name, *mod;
		uint64_t addr;
		char type;

		if (!nl)
			nl = end;
		*nl = '\0';
		p = nl + 1;
		q = scan_hex(line, &addr);
		if (q == line || *q != ' ')
			continue;
		type = q[1];
		if (type == '\0' || q[2] != ' ')
			continue;
		name = q + 3;
		mod = strchr(name, '\t');
		name[strcspn(name, "\t ")] = '\0';
		if (addr != 0)
			*all_zero = false;
		if (*text == 0 && strcmp(name, "_text") == 0)
			*text = addr;
		if (!is_text_type(type) || addr == 0 || name[0] == '\0')
			continue;
		if (mod && mod[1] == '[')
			add_module_sym(s, mod + 2, strcspn(mod + 2, "]"),
				       addr);
		ret = symtab_builder_add(b, addr, 0, (uint32_t)(name - buf),
					 type >= 'a' ? SYMTAB_LOCAL
						     : SYMTAB_GLOBAL);
	}
	return ret;
}

static uint64_t parse_hex(const char *v)
{
	if (!v)
		return 0;
	return strtoull(v, NULL, 16);
}

/*
 * Is this the recorded kernel build?  Compares the recorded
 * kernel_build_id with /sys/kernel/notes once; true when either is
 * unknown.  *rec and *now are set for messages.
 */
static bool kernel_same(struct symbolizer *s)
{
	const char *rec = s->meta ? meta_prop(s->meta, "kernel_build_id")
				  : NULL;
	uint8_t id[ELFSYMS_BUILD_ID_MAX];
	uint32_t n = 0;
	char *buf;
	size_t len;

	if (s->kernel_checked)
		return !s->kernel_differs;
	s->kernel_checked = true;
	if (!rec || !rec[0])
		return true;
	if (read_text("/sys/kernel/notes", &buf, &len, NULL) == 0) {
		n = elfsyms_notes_build_id(buf, len, id);
		free(buf);
	}
	if (n == 0)
		return true;
	elfsyms_hex(id, n, s->kernel_id);
	s->kernel_differs = strcasecmp(s->kernel_id, rec) != 0;
	return !s->kernel_differs;
}

static void check_kernel_build_id(struct symbolizer *s)
{
	if (!kernel_same(s))
		sym_warn(s, "kernel build-id %s differs from the recorded %s: "
			 "kernel symbols may be wrong", s->kernel_id,
			 meta_prop(s->meta, "kernel_build_id"));
}

/*
 * [vdso]: the kernel maps the same image into every process, so this
 * process's copy names the recorded one when the kernel is the same.
 */
static void load_vdso(struct symbolizer *s, struct dso *d)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct pipe_err err;
	uint64_t size;
	void *copy;

	d->loaded = true;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || !kernel_same(s))
		return;
	size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (1u << 20))
		return;
	copy = malloc(size);
	if (!copy)
		return;
	memcpy(copy, eh, size);
	if (elfsyms_read_mem(copy, size, d->name, ELFSYMS_ANY, &d->info,
			     &d->syms, &err) < 0)
		d->syms = NULL;
	free(copy);
}

static void load_kernel(struct symbolizer *s)
{
	const char *path = s->kallsyms ? s->kallsyms : "/proc/kallsyms";
	struct symtab_builder *b = NULL;
	struct pipe_err err;
	uint64_t text = 0, rec_text;
	bool all_zero = false, cached;
	char *buf = NULL;
	size_t len;
	int ret;

	s->kernel.loaded = true;
	check_kernel_build_id(s);
	ret = s->kallsyms ? read_text(path, &buf, &len, NULL)
			  : kcache_kallsyms(&buf, &len, &cached);
	if (ret < 0) {
		sym_warn(s, "cannot read '%s': %s: kernel symbols unresolved",
			 path, strerror(-ret));
		return;
	}
	ret = symtab_builder_new(&b, buf, len, len / 40, &err);
	if (ret == 0)
		ret = parse_kallsyms(s, buf, len, b, &text, &all_zero);
	if (ret == 0 && all_zero)
		sym_warn(s, "'%s' shows no addresses: kernel symbols "
			 "unresolved (hint: run as root or lower "
			 "kernel.kptr_restrict)", path);
	else if (ret == 0)
		ret = symtab_builder_finish(b, &s->kernel.syms, &err);
	symtab_builder_free(b);
	free(buf);
	if (ret < 0) {
		sym_warn(s, "cannot load kernel symbols from '%s': %s", path,
			 strerror(-ret));
		return;
	}
	rec_text = s->meta ? parse_hex(meta_prop(s->meta, "kernel_text")) : 0;
	s->kernel_shift = rec_text && text ? rec_text - text : 0;
}

/* Parse a perf map ("START SIZE NAME" hex lines) in place. */
static int parse_perfmap(char *buf, size_t len, struct symtab_builder *b)
{
	char *p = buf, *end = buf + len;
	int ret = 0;

	while (p < end && ret == 0) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *line = p, *q, *r;
		uint64_t start, size;

		if (!nl)
			nl = end;
		*nl = '\0';
		p = nl + 1;
		start = strtoull(line, &q, 16);
		if (q == line || *q != ' ')
			continue;
		size = strtoull(q, &r, 16);
		if (r == q || *r != ' ' || r[1] == '\0')
			continue;
		ret = symtab_builder_add(b, start, size,
					 (uint32_t)(r + 1 - buf),
					 SYMTAB_GLOBAL);
	}
	return ret;
}

static void load_perfmap(struct symbolizer *s, struct dso *d)
{
	struct symtab_builder *b = NULL;
	struct pipe_err err;
	char *buf = NULL;
	size_t len;
	uid_t owner;
	int ret;

	d->loaded = true;
	if (read_text(d->path, &buf, &len, &owner) < 0)
		return;
	/* any user can write /tmp/perf-PID.map: perf ignores it too */
	if (owner != 0 && owner != geteuid()) {
		sym_warn(s, "'%s' is owned by uid %u, not by you or root: "
			 "ignored", d->path, (unsigned)owner);
		free(buf);
		return;
	}
	ret = symtab_builder_new(&b, buf, len, len / 32, &err);
	if (ret == 0)
		ret = parse_perfmap(buf, len, b);
	if (ret == 0)
		ret = symtab_builder_finish(b, &d->syms, &err);
	if (ret < 0)
		sym_warn(s, "cannot load '%s': %s", d->path, strerror(-ret));
	symtab_builder_free(b);
	free(buf);
}

/* ---- ELF binaries and their debug files ------------------------------- */

static bool same_id(const uint8_t *a, uint32_t alen, const uint8_t *b,
		    uint32_t blen)
{
	return alen == blen && memcmp(a, b, alen) == 0;
}

/*
 * Try one candidate: it must have the table asked for and, when both are
 * known, the build-id `id`.  On success *info and *syms are set.
 */
static bool try_file(const char *path, enum elfsyms_which which,
		     const uint8_t *id, uint32_t id_len,
		     struct elfsyms_info *info, struct symtab **syms)
{
	struct pipe_err err;

	if (access(path, R_OK) != 0)
		return false;
	if (elfsyms_read(path, which, info, syms, &err) < 0)
		return false;
	if (*syms && (id_len == 0 || info->build_id_len == 0 ||
		      same_id(id, id_len, info->build_id,
			      info->build_id_len)))
		return true;
	symtab_free(*syms);
	*syms = NULL;
	return false;
}

/*
 * Find a debug file for `path` with build-id `id` and/or debuglink `link`:
 * ROOT/.build-id/xx/rest.debug for each root (debug_dir=, /usr/lib/debug),
 * then DIR/link, DIR/.debug/link, ROOT/DIR/link.
 */
static bool try_debug(struct symbolizer *s, const char *path,
		      const uint8_t *id, uint32_t id_len,
		      struct elfsyms_info *info, struct symtab **syms)
{
	if (!try_file(path, ELFSYMS_SYMTAB, id, id_len, info, syms))
		return false;
	snprintf(s->found_debug, sizeof(s->found_debug), "%s", path);
	return true;
}

/*
 * A copy of the binary itself by build-id: ROOT/.build-id/xx/rest for each
 * root, and perf's cache ~/.debug/.build-id/xx/rest/elf.
 */
static bool find_copy(struct symbolizer *s, const uint8_t *id,
		      uint32_t id_len, struct elfsyms_info *info,
		      struct symtab **syms)
{
	const char *roots[2] = { s->debug_dir, SYSTEM_DEBUG_ROOT };
	char hex[2 * ELFSYMS_BUILD_ID_MAX + 1], cand[PATH_MAX];
	const char *home = secure_getenv("HOME");
	size_t r;

	if (id_len < 2)
		return false;
	elfsyms_hex(id, id_len, hex);
	for (r = 0; r < 2; r++) {
		if (!roots[r])
			continue;
		snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s", roots[r],
			 hex, hex + 2);
		if (try_file(cand, ELFSYMS_ANY, id, id_len, info, syms))
			return true;
	}
	if (!home || home[0] != '/')
		return false;
	snprintf(cand, sizeof(cand), "%s/.debug/.build-id/%.2s/%s/elf", home,
		 hex, hex + 2);
	return try_file(cand, ELFSYMS_ANY, id, id_len, info, syms);
}

static bool find_debug(struct symbolizer *s, const char *path,
		       const uint8_t *id, uint32_t id_len, const char *link,
		       struct elfsyms_info *info, struct symtab **syms)
{
	const char *roots[2] = { s->debug_dir, SYSTEM_DEBUG_ROOT };
	char hex[2 * ELFSYMS_BUILD_ID_MAX + 1], cand[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path) : 0;
	size_t r;

	if (id_len > 1) {
		elfsyms_hex(id, id_len, hex);
		for (r = 0; r < 2; r++) {
			if (!roots[r])
				continue;
			snprintf(cand, sizeof(cand),
				 "%s/.build-id/%.2s/%s.debug", roots[r], hex,
				 hex + 2);
			if (try_debug(s, cand, id, id_len, info, syms))
				return true;
		}
	}
	if (!link || !link[0] || !slash)
		return false;
	snprintf(cand, sizeof(cand), "%.*s/%s", dir_len, path, link);
	if (strcmp(cand, path) != 0 &&
	    try_debug(s, cand, id, id_len, info, syms))
		return true;
	snprintf(cand, sizeof(cand), "%.*s/.debug/%s", dir_len, path, link);
	if (try_debug(s, cand, id, id_len, info, syms))
		return true;
	for (r = 0; r < 2; r++) {
		if (!roots[r])
			continue;
		snprintf(cand, sizeof(cand), "%s%.*s/%s", roots[r], dir_len,
			 path, link);
		if (try_debug(s, cand, id, id_len, info, syms))
			return true;
	}
	return false;
}

/*
 * The debug file of build-id `id` from a debuginfod server (or the
 * client's cache), when debuginfod is on and DEBUGINFOD_URLS is set.
 */
static bool fetch_debug(struct symbolizer *s, const uint8_t *id,
			uint32_t id_len, struct elfsyms_info *info,
			struct symtab **syms)
{
	struct dbgfetch_opts fo = { 0 };
	char path[PATH_MAX];

	if (!s->opts.debuginfod || id_len < 2)
		return false;
	if (!s->fetch_tried) {
		s->fetch_tried = true;
		fo.timeout_ns = s->opts.debuginfod_timeout_ns;
		fo.interrupted = s->opts.interrupted;
		fo.warn = s->opts.warn;
		fo.opaque = s->opts.opaque;
		if (dbgfetch_new(&s->fetch, &fo) < 0)
			s->fetch = NULL;
	}
	if (dbgfetch_debuginfo(s->fetch, id, id_len, path, sizeof(path)) < 0)
		return false;
	return try_debug(s, path, id, id_len, info, syms);
}

static void load_elf(struct symbolizer *s, struct dso *d)
{
	struct elfsyms_info info, dinfo;
	struct symtab *syms = NULL, *dsyms = NULL;
	char have[2 * ELFSYMS_BUILD_ID_MAX + 1];
	char want[2 * ELFSYMS_BUILD_ID_MAX + 1];
	char live[96];
	const char *path = d->path;
	struct pipe_err err;
	bool have_file, mismatch = false;

	d->loaded = true;
	/*
	 * A deleted file is still readable through the mapping of a process
	 * that lives on (a live report): /proc/PID/map_files/START-END.
	 */
	snprintf(live, sizeof(live), "/proc/%" PRIu32 "/map_files/%" PRIx64
		 "-%" PRIx64, d->map_pid, d->map_start, d->map_end);
	if ((d->flags & PIPE_SYM_DELETED) && d->map_pid &&
	    access(d->path, R_OK) != 0 && access(live, R_OK) == 0)
		path = live;
	have_file = elfsyms_read(path, ELFSYMS_SYMTAB, &info, &syms,
				 &err) == 0;
	if (have_file && d->build_id_len && info.build_id_len &&
	    !same_id(d->build_id, d->build_id_len, info.build_id,
		     info.build_id_len))
		mismatch = true;
	if (have_file && !mismatch) {
		const uint8_t *id = info.build_id_len ? info.build_id
						      : d->build_id;
		uint32_t id_len = info.build_id_len ? info.build_id_len
						    : d->build_id_len;

		d->info = info;
		/* stubs come from the file itself: debug files keep no PLT */
		elfplt_read(path, &d->plt, &err);
		if (!syms && (find_debug(s, d->path, id, id_len,
					 info.debuglink, &dinfo, &dsyms) ||
			      fetch_debug(s, id, id_len, &dinfo, &dsyms))) {
			syms = dsyms;
			d->debug_path = strdup(s->found_debug);
		} else if (!syms) {
			/* a stripped file: its MiniDebugInfo names the
			 * functions .dynsym lacks */
			minidebug_read(path, &d->mini, &err);
			elfsyms_read(path, ELFSYMS_DYNSYM, &info, &syms,
				     &err);
		}
		d->syms = syms;
		if ((d->flags & PIPE_SYM_DELETED) && !d->build_id_len &&
		    path == d->path)
			sym_warn(s, "'%s' was deleted and no build-id was "
				 "recorded: using '%s' unverified", d->name,
				 d->path);
		return;
	}
	/* the file is gone or another build: look by the recorded id */
	if (d->build_id_len &&
	    (find_debug(s, d->path, d->build_id, d->build_id_len, NULL,
			&dinfo, &dsyms) ||
	     fetch_debug(s, d->build_id, d->build_id_len, &dinfo, &dsyms))) {
		symtab_free(syms);
		d->info = dinfo;
		d->syms = dsyms;
		d->debug_only = true;
		d->debug_path = strdup(s->found_debug);
		return;
	}
	if (d->build_id_len &&
	    find_copy(s, d->build_id, d->build_id_len, &dinfo, &dsyms)) {
		symtab_free(syms);
		d->info = dinfo;
		d->syms = dsyms;
		return;
	}
	if (!mismatch)
		return;
	elfsyms_hex(info.build_id, info.build_id_len, have);
	elfsyms_hex(d->build_id, d->build_id_len, want);
	sym_warn(s, "build-id of '%s' (%s) differs from the recorded %s: "
		 "its symbols may be wrong", d->path, have, want);
	d->flags |= PIPE_SYM_BUILDID_MISMATCH;
	d->info = info;
	if (!syms)
		elfsyms_read(path, ELFSYMS_ANY, &info, &syms, &err);
	d->syms = syms;
}

/* ---- resolution -------------------------------------------------------- */

static struct dso *perfmap_dso(struct symbolizer *s, uint32_t pid)
{
	char name[64];
	struct dso *d;

	snprintf(name, sizeof(name), "/tmp/perf-%u.map", pid);
	d = dso_get(s, name, NULL, 0);
	if (d)
		d->kind = DSO_PERFMAP;
	return d;
}

static void fill(struct symbolizer *s, struct dso *d, uint64_t addr,
		 uint64_t shift, struct pipe_symbol *out)
{
	struct symtab *t;
	uint32_t idx;

	out->dso = d->name;
	out->dso_short = d->short_name;
	out->flags = d->flags;
	out->offset = addr + shift;
	/* PLT stubs first: a zero-sized _init before .plt would reach over
	 * them */
	if (d->plt && symtab_find(d->plt, addr, &idx))
		t = d->plt;
	else if (d->mini && symtab_find(d->mini, addr, &idx))
		t = d->mini;
	else if (d->syms && symtab_find(d->syms, addr, &idx))
		t = d->syms;
	else
		return;
	out->name = symtab_display_name(t, idx, s->opts.demangle);
	out->sym_start = symtab_start(t, idx) + shift;
	out->offset = addr - symtab_start(t, idx);
	out->flags |= PIPE_SYM_RESOLVED;
}

/*
 * A debug file keeps p_vaddr but not p_offset (objcopy --only-keep-debug
 * zeroes the file sizes), so the PT_LOAD formula cannot run.  The kernel
 * maps each segment from its first page: with one executable segment (the
 * usual layout), an executable map starts at its page.  Otherwise assume
 * the common layout where offsets equal addresses from the first segment.
 */
static uint64_t debug_vaddr(const struct elfsyms_info *info,
			    const struct threads_map *m, uint64_t ip)
{
	const struct elfsyms_load *x = NULL;
	uint64_t page = 4096;
	uint32_t i, nr_x = 0;

	for (i = 0; i < info->nr_loads; i++) {
		if (info->loads[i].flags & PF_X) {
			x = &info->loads[i];
			nr_x++;
		}
	}
	if (nr_x == 1)
		return ip - m->start + (x->vaddr & ~(page - 1));
	if (info->nr_loads > 0)
		return ip - m->start + m->pgoff +
		       (info->loads[0].vaddr & ~(page - 1));
	return ip - m->start + m->pgoff;
}

/* A kernel symbol starting at start (kallsyms space) in a module? */
static void name_module(const struct symbolizer *s, uint64_t start,
			struct pipe_symbol *out)
{
	uint32_t i;

	for (i = 0; i < s->nr_mods; i++) {
		const struct kmod *k = &s->mods[i];

		if (start >= k->lo && start <= k->hi) {
			out->dso = k->dso->name;
			out->dso_short = k->dso->short_name;
			return;
		}
	}
}

static bool is_kernel(uint64_t ip, uint16_t misc)
{
	uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	if (mode == PERF_RECORD_MISC_KERNEL)
		return true;
	return mode == PERF_RECORD_MISC_CPUMODE_UNKNOWN &&
	       ip >= KERNEL_MIN_ADDR;
}

void symbolizer_set_demangle(struct symbolizer *s, bool on)
{
	s->opts.demangle = on;
}

int symbolizer_resolve(struct symbolizer *s, uint32_t pid, uint64_t ip,
		       uint16_t misc, struct pipe_symbol *out)
{
	const struct threads_map *m;
	struct dso *d;
	uint64_t off, vaddr;

	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->offset = ip;
	if (is_kernel(ip, misc)) {
		if (!s->kernel.loaded)
			load_kernel(s);
		fill(s, &s->kernel, ip - s->kernel_shift, s->kernel_shift,
		     out);
		if (out->name && s->nr_mods)
			name_module(s, out->sym_start - s->kernel_shift, out);
		return 0;
	}
	m = threads_find_map(s->threads, pid, ip);
	if (!m || m->dso->kind == DSO_ANON) {
		d = perfmap_dso(s, pid);
		if (!d)
			return -ENOMEM;
		if (!d->loaded)
			load_perfmap(s, d);
		fill(s, d, ip, 0, out);
		if (out->flags & PIPE_SYM_RESOLVED)
			return 0;
		/* unresolved: the anonymous map, or no map at all */
		out->dso = m ? m->dso->name : NULL;
		out->dso_short = m ? m->dso->short_name : NULL;
		out->offset = m ? ip - m->start + m->pgoff : ip;
		out->flags = 0;
		return 0;
	}
	d = m->dso;
	off = ip - m->start + m->pgoff;
	if (d->kind == DSO_SPECIAL && strcmp(d->name, "[vdso]") == 0) {
		if (!d->loaded)
			load_vdso(s, d);
		if (!elfsyms_vaddr(&d->info, off, &vaddr))
			vaddr = off;
		fill(s, d, vaddr, 0, out);
		out->offset = out->name ? out->offset : off;
		return 0;
	}
	if (d->kind != DSO_ELF) {
		out->dso = d->name;
		out->dso_short = d->short_name;
		out->offset = off;
		return 0;
	}
	if (!d->loaded)
		load_elf(s, d);
	if (d->debug_only)
		vaddr = debug_vaddr(&d->info, m, ip);
	else if (!elfsyms_vaddr(&d->info, off, &vaddr))
		vaddr = off;
	fill(s, d, vaddr, 0, out);
	return 0;
}

/* ---- source lines ----------------------------------------------------- */

/*
 * The DWARF of d: its debug file, the file itself, or a debug file looked
 * for now (a binary with its .symtab but without its DWARF).
 */
static void open_src(struct symbolizer *s, struct dso *d)
{
	struct elfsyms_info dinfo;
	struct symtab *dsyms = NULL;
	const uint8_t *id = d->info.build_id_len ? d->info.build_id
						 : d->build_id;
	uint32_t id_len = d->info.build_id_len ? d->info.build_id_len
					       : d->build_id_len;

	d->src_tried = true;
	if (d->debug_path && srcline_new(&d->src, d->debug_path) == 0)
		return;
	if (!d->debug_only && !(d->flags & PIPE_SYM_BUILDID_MISMATCH) &&
	    srcline_new(&d->src, d->path) == 0)
		return;
	if (d->debug_path ||
	    !(find_debug(s, d->path, id, id_len, d->info.debuglink, &dinfo,
			 &dsyms) ||
	      fetch_debug(s, id, id_len, &dinfo, &dsyms)))
		return;
	symtab_free(dsyms);
	d->debug_path = strdup(s->found_debug);
	if (d->debug_path && srcline_new(&d->src, d->debug_path) < 0)
		d->src = NULL;
}

const struct pipe_srcline *symbolizer_srcline_none(void)
{
	return srcline_none();
}

const struct pipe_srcline *symbolizer_srcline(struct symbolizer *s,
					      uint32_t pid, uint64_t ip,
					      uint16_t misc)
{
	const struct threads_map *m;
	struct dso *d;
	uint64_t vaddr;

	if (is_kernel(ip, misc))
		return srcline_none();
	m = threads_find_map(s->threads, pid, ip);
	if (!m || m->dso->kind != DSO_ELF)
		return srcline_none();
	d = m->dso;
	if (!d->loaded)
		load_elf(s, d);
	if (!d->src_tried)
		open_src(s, d);
	if (!d->src)
		return srcline_none();
	if (d->debug_only)
		vaddr = debug_vaddr(&d->info, m, ip);
	else if (!elfsyms_vaddr(&d->info, ip - m->start + m->pgoff, &vaddr))
		return srcline_none();
	return srcline_find(d->src, vaddr, s->opts.demangle);
}

/* ---- unwinding -------------------------------------------------------- */

/* The ELF file mapped at addr in pid, for the unwinder. */
static bool unwind_map_of(void *opaque, uint32_t pid, uint64_t addr,
			  struct unwind_map *out)
{
	struct symbolizer *s = opaque;
	const struct threads_map *m = threads_find_map(s->threads, pid, addr);

	if (!m || m->dso->kind != DSO_ELF)
		return false;
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	out->path = m->dso->path;
	return true;
}

int symbolizer_decode(struct symbolizer *s, const struct meta *m,
		      const struct pipe_record *rec, struct pipe_sample *out)
{
	struct decode_stack st;
	struct unwind_regs r;
	uint32_t nr = 0, got;
	uint64_t i;
	int ret;

	ret = decode_sample_stack(m, rec, out, &st);
	if (ret < 0 || st.abi != PERF_SAMPLE_REGS_ABI_64)
		return ret;
	if (!s->unwind && unwind_new(&s->unwind, unwind_map_of, s) < 0)
		return 0;
	/* the recorded (kernel) part, up to any user part */
	for (i = 0; i < out->nr_callchain && nr < CHAIN_KERNEL_MAX; i++) {
		if (out->callchain[i] == (uint64_t)PERF_CONTEXT_USER)
			break;
		s->chain[nr++] = out->callchain[i];
	}
	s->chain[nr++] = (uint64_t)PERF_CONTEXT_USER;
	r.mask = st.regs_mask;
	r.regs = st.regs;
	r.nr_regs = st.nr_regs;
	r.stack = st.stack;
	r.stack_len = st.dyn_size;
	got = unwind_stack(s->unwind, out->pid, out->tid, &r, s->chain + nr,
			   UNWIND_MAX_FRAMES);
	if (got == 0)
		nr--;
	out->callchain = s->chain;
	out->nr_callchain = nr + got;
	out->sample_type |= PERF_SAMPLE_CALLCHAIN;
	return 0;
}
