/*
 * symbolizer.c - address -> map -> binary -> symbol (see symbolizer.h).
 * Process state lives in threads.c; ELF reading in elfsyms.c; this file
 * keeps the binaries (dsos), applies the state records, resolves
 * addresses, and hands out source lines and unwound stacks; symload.c
 * finds each binary's symbol table lazily (the file itself, a debug file
 * by build-id or debuglink, kallsyms, perf-PID.map) and checks build-ids
 * against the recording.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgfetch.h"
#include "decode.h"
#include "err.h"
#include "grow.h"
#include "sideband.h"
#include "srcline.h"
#include "symstate.h"
#include "symtab.h"
#include "threads.h"

void sym_warn(struct symbolizer *s, const char *fmt, ...)
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

void sym_oom(struct symbolizer *s, const char *then, const char *what_fmt,
	     ...)
{
	char what[512];
	va_list ap;

	if (s->oom_said)
		return;
	s->oom_said = true;
	va_start(ap, what_fmt);
	vsnprintf(what, sizeof(what), what_fmt, ap);
	va_end(ap);
	sym_warn(s, "cannot %s: %s: %s", what, strerror(ENOMEM), then);
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
	for (i = 0; i < s->nr_dsos; i++)
		dso_free(s->dsos[i]);
	free(s->dsos);
	itab_free(&s->dso_tab);
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

static uint64_t dso_hash(const char *name, const uint8_t *id, uint32_t len)
{
	uint64_t h = itab_hash_str(name);
	uint32_t i;

	for (i = 0; i < len; i++)
		h = itab_mix(h, id[i]);
	return h;
}

/* A binary being looked up. */
struct dso_key {
	const char *name;
	const uint8_t *id;
	uint32_t id_len;
};

static bool dso_eq(const void *items, uint32_t item, const void *key)
{
	const struct dso *d = ((struct dso *const *)items)[item];
	const struct dso_key *k = key;

	return d->build_id_len == k->id_len &&
	       (k->id_len == 0 || memcmp(d->build_id, k->id, k->id_len) == 0) &&
	       strcmp(d->name, k->name) == 0;
}

static uint64_t dso_rehash(const void *items, uint32_t item)
{
	return ((struct dso *const *)items)[item]->hash;
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

struct dso *sym_dso_get(struct symbolizer *s, const char *name,
			const uint8_t *id, uint32_t id_len)
{
	struct dso_key k = { name, id, id_len };
	uint64_t h = dso_hash(name, id, id_len);
	uint32_t i = itab_find(&s->dso_tab, h, dso_eq, s->dsos, &k);
	struct dso *d;
	const char *slash;

	if (i != ITAB_NONE)
		return s->dsos[i];
	if (itab_reserve(&s->dso_tab, 256, UINT32_MAX / 2 + 1, dso_rehash,
			 s->dsos) < 0 ||
	    grow_array(&s->dsos, &s->cap_dsos, s->nr_dsos + 1,
		       sizeof(*s->dsos), 64, UINT32_MAX / 2) < 0)
		return NULL;
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
	d->hash = h;
	itab_put(&s->dso_tab, h, (uint32_t)s->nr_dsos);
	s->dsos[s->nr_dsos++] = d;
	return d;
}

/* ---- sideband --------------------------------------------------------- */

/* What applying one record of process state returned: a malformed one is
 * counted, running out of memory is said once (later samples of the
 * state not kept resolve to [unknown]). */
static void state_result(struct symbolizer *s, int ret)
{
	if (ret == -EINVAL) {
		s->nr_malformed++;
	} else if (ret == -ENOMEM) {
		sym_oom(s, UNKNOWN_LATER, "keep the process state");
	}
}

/* A decoded MMAP or MMAP2: the binary it maps and where, for its pid. */
static void apply_mmap(struct symbolizer *s, const struct sideband *sb)
{
	struct dso *d;

	if (sb->pid == UINT32_MAX || (sb->misc & PERF_RECORD_MISC_MMAP_DATA) ||
	    starts_with(sb->name, KERNEL_DSO))
		return; /* kernel maps (kallsyms serves them), data maps */
	d = sym_dso_get(s, sb->name, sb->build_id, sb->build_id_len);
	if (!d) {
		state_result(s, -ENOMEM);
		return;
	}
	if (!d->map_pid && sb->len && sb->start + sb->len > sb->start) {
		d->map_pid = sb->pid;
		d->map_start = sb->start;
		d->map_end = sb->start + sb->len;
	}
	state_result(s, threads_add_map(s->threads, sb->pid, sb->start,
					sb->len, sb->pgoff, d));
}

void symbolizer_apply(struct symbolizer *s, const struct perf_event_header *h)
{
	struct sideband sb;
	int ret = sideband_decode(h, &sb);

	if (ret < 0) {
		state_result(s, ret);
		return;
	}
	switch (sb.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		apply_mmap(s, &sb);
		break;
	case PERF_RECORD_COMM:
		state_result(s, threads_set_comm(s->threads, sb.pid, sb.tid,
						 sb.name, sb.exec));
		if (sb.exec)
			unwind_drop(s->unwind, sb.pid);
		break;
	case PERF_RECORD_FORK:
		state_result(s, threads_fork(s->threads, sb.pid, sb.ppid,
					     sb.tid, sb.ptid));
		break;
	case PERF_RECORD_EXIT:
		threads_exit(s->threads, sb.pid, sb.tid);
		if (sb.pid == sb.tid)
			unwind_drop(s->unwind, sb.pid);
		break;
	default:
		break;
	}
}

uint64_t symbolizer_nr_malformed(const struct symbolizer *s)
{
	return s->nr_malformed;
}

const char *symbolizer_comm(struct symbolizer *s, uint32_t tid)
{
	const char *c = threads_comm(s->threads, tid);

	if (c)
		return c;
	/* the idle task never gets a COMM record; perf names it so too */
	return tid == 0 ? "swapper" : "[unknown]";
}

/* ---- resolution -------------------------------------------------------- */

static struct dso *perfmap_dso(struct symbolizer *s, uint32_t pid)
{
	char name[64];
	struct dso *d;

	snprintf(name, sizeof(name), "/tmp/perf-%u.map", pid);
	d = sym_dso_get(s, name, NULL, 0);
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
			sym_load_kernel(s);
		fill(s, &s->kernel, ip - s->kernel_shift, s->kernel_shift,
		     out);
		if (out->name && s->nr_mods)
			name_module(s, out->sym_start - s->kernel_shift, out);
		return 0;
	}
	m = threads_find_map(s->threads, pid, ip);
	if (!m || m->dso->kind == DSO_ANON) {
		d = perfmap_dso(s, pid);
		if (!d) {
			sym_oom(s, UNKNOWN_LATER, "keep the process state");
			return -ENOMEM;
		}
		if (!d->loaded)
			sym_load_perfmap(s, d);
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
			sym_load_vdso(s, d);
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
		sym_load_elf(s, d);
	if (d->debug_only)
		vaddr = debug_vaddr(&d->info, m, ip);
	else if (!elfsyms_vaddr(&d->info, off, &vaddr))
		vaddr = off;
	fill(s, d, vaddr, 0, out);
	return 0;
}

/* ---- source lines ----------------------------------------------------- */

/* The source lines of d from the DWARF of path: whether it has them. */
static bool src_open(struct symbolizer *s, struct dso *d, const char *path)
{
	int ret = srcline_new(&d->src, path);

	if (ret == -ENOMEM)
		sym_oom(s, "its addresses show no source line",
			"read the source lines of '%s'", path);
	return ret == 0;
}

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
	if (d->debug_path && src_open(s, d, d->debug_path))
		return;
	if (!d->debug_only && !(d->flags & PIPE_SYM_BUILDID_MISMATCH) &&
	    src_open(s, d, d->path))
		return;
	if (d->debug_path ||
	    !(sym_find_debug(s, d->path, id, id_len, d->info.debuglink, &dinfo,
			     &dsyms) ||
	      sym_fetch_debug(s, id, id_len, &dinfo, &dsyms)))
		return;
	symtab_free(dsyms);
	d->debug_path = strdup(s->found_debug);
	if (d->debug_path && !src_open(s, d, d->debug_path))
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
		sym_load_elf(s, d);
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
	if (!s->unwind && unwind_new(&s->unwind, unwind_map_of, s) < 0) {
		sym_oom(s, "samples keep only their recorded frames",
			"unwind stacks from their DWARF");
		return 0;
	}
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
