/*
 * symload.c - the symbols of one binary, found once, when an address in
 * it is first resolved: kallsyms and kernel modules, perf-PID.map files
 * of JIT code, the vDSO, and ELF files with their debug files (by
 * build-id, debuglink, a copy in the debug directory, debuginfod),
 * checking build-ids against the recording.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbgfetch.h"
#include "elfplt.h"
#include "err.h"
#include "kcache.h"
#include "meta.h"
#include "minidebug.h"
#include "symstate.h"
#include "symtab.h"
#include "trust.h"

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
	k->dso = sym_dso_get(s, tag, NULL, 0);
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

void sym_load_vdso(struct symbolizer *s, struct dso *d)
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
	if (!copy) {
		sym_oom(s, UNKNOWN_LATER, "load the symbols of the vdso");
		return;
	}
	memcpy(copy, eh, size);
	if (elfsyms_read_mem(copy, size, d->name, ELFSYMS_ANY, &d->info,
			     &d->syms, &err) < 0)
		d->syms = NULL;
	free(copy);
}

/*
 * The kernel's table as a cached image (kcache_image_*): a header, the
 * modules' ranges, the table's entries and names, each part a multiple
 * of 8 bytes but the names, so the entries are used where they lie.
 */
struct kimg_head {
	uint64_t text;     /* address of _text */
	uint32_t nr_mods;
	uint32_t nr_ents;
	uint64_t pool_len; /* the names: the rest of the payload */
};

struct kimg_mod {
	uint64_t lo, hi;
	char name[80];     /* "[NAME]", NUL-ended */
};

/* The kernel table and modules from the image: true when it was used. */
static bool kernel_from_image(struct symbolizer *s, uint64_t *text)
{
	const struct kimg_head *h;
	const struct kimg_mod *m;
	struct kcache_image img;
	const char *ents;
	size_t need, n;
	uint32_t i;

	if (kcache_image_load(&img) < 0)
		return false;
	h = img.data;
	if (img.len < sizeof(*h) || h->nr_mods > MAX_MODULES)
		goto bad;
	need = sizeof(*h) + (size_t)h->nr_mods * sizeof(*m) +
	       (size_t)h->nr_ents * SYMTAB_ENT_BYTES;
	if (need > img.len || h->pool_len != img.len - need)
		goto bad;
	m = (const struct kimg_mod *)(h + 1);
	for (i = 0; i < h->nr_mods; i++) {
		n = strnlen(m[i].name, sizeof(m[i].name));
		if (n < 3 || n == sizeof(m[i].name) || m[i].name[0] != '[' ||
		    m[i].name[n - 1] != ']')
			goto bad;
	}
	ents = (const char *)(m + h->nr_mods);
	if (symtab_from_parts(img.map, img.map_len, ents, h->nr_ents,
			      ents + (size_t)h->nr_ents * SYMTAB_ENT_BYTES,
			      h->pool_len, &s->kernel.syms) < 0)
		goto bad;
	/* the table owns the mapping now */
	for (i = 0; i < h->nr_mods; i++) {
		n = strlen(m[i].name);
		add_module_sym(s, m[i].name + 1, n - 2, m[i].lo);
		add_module_sym(s, m[i].name + 1, n - 2, m[i].hi);
	}
	*text = h->text;
	return true;
bad:
	munmap(img.map, img.map_len);
	return false;
}

/* Save the kernel table just made from kallsyms as the image. */
static void kernel_save_image(const struct symbolizer *s, uint64_t text)
{
	struct kimg_head h = { .text = text, .nr_mods = s->nr_mods };
	struct kimg_mod *mods;
	struct iovec v[4];
	const char *pool;
	const void *ents;
	size_t pool_len;
	uint32_t i;

	symtab_parts(s->kernel.syms, &ents, &h.nr_ents, &pool, &pool_len);
	h.pool_len = pool_len;
	mods = calloc(s->nr_mods ? s->nr_mods : 1, sizeof(*mods));
	if (!mods)
		return;
	for (i = 0; i < s->nr_mods; i++) {
		mods[i].lo = s->mods[i].lo;
		mods[i].hi = s->mods[i].hi;
		snprintf(mods[i].name, sizeof(mods[i].name), "%s",
			 s->mods[i].dso->name);
	}
	v[0] = (struct iovec){ .iov_base = &h, .iov_len = sizeof(h) };
	v[1] = (struct iovec){ .iov_base = mods,
			       .iov_len = s->nr_mods * sizeof(*mods) };
	v[2] = (struct iovec){ .iov_base = (void *)ents,
			       .iov_len = (size_t)h.nr_ents * SYMTAB_ENT_BYTES };
	v[3] = (struct iovec){ .iov_base = (void *)pool, .iov_len = pool_len };
	kcache_image_save(v, 4);
	free(mods);
}

void sym_load_kernel(struct symbolizer *s)
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
	if (!s->kallsyms && kernel_from_image(s, &text))
		goto shift;
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
	if (!s->kallsyms && s->kernel.syms)
		kernel_save_image(s, text);
shift:
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

void sym_load_perfmap(struct symbolizer *s, struct dso *d)
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

/* A binary's table that could not be read for want of memory is said
 * (once, sym_oom); a file gone or not ELF leaves its samples [unknown]
 * quietly, as perf does. */
static void said_if_oom(struct symbolizer *s, int ret, const char *path)
{
	if (ret == -ENOMEM)
		sym_oom(s, UNKNOWN_LATER, "load the symbols of '%s'", path);
}

/*
 * Try one candidate: it must have the table asked for and, when both are
 * known, the build-id `id`.  On success *info and *syms are set.
 */
static bool try_file(struct symbolizer *s, const char *path,
		     enum elfsyms_which which,
		     const uint8_t *id, uint32_t id_len,
		     struct elfsyms_info *info, struct symtab **syms)
{
	struct pipe_err err;
	int ret;

	if (access(path, R_OK) != 0)
		return false;
	ret = elfsyms_read(path, which, info, syms, &err);
	said_if_oom(s, ret, path);
	if (ret < 0)
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
	if (!try_file(s, path, ELFSYMS_SYMTAB, id, id_len, info, syms))
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
		if (try_file(s, cand, ELFSYMS_ANY, id, id_len, info, syms))
			return true;
	}
	if (!home || home[0] != '/')
		return false;
	snprintf(cand, sizeof(cand), "%s/.debug/.build-id/%.2s/%s/elf", home,
		 hex, hex + 2);
	return try_file(s, cand, ELFSYMS_ANY, id, id_len, info, syms);
}

bool sym_find_debug(struct symbolizer *s, const char *path,
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

bool sym_fetch_debug(struct symbolizer *s, const uint8_t *id,
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
		if (dbgfetch_new(&s->fetch, &fo) < 0) {
			sym_oom(s, UNKNOWN_LATER, "fetch debug files from "
				"debuginfod servers");
			s->fetch = NULL;
		}
	}
	if (dbgfetch_debuginfo(s->fetch, id, id_len, path, sizeof(path)) < 0)
		return false;
	return try_debug(s, path, id, id_len, info, syms);
}

void sym_load_elf(struct symbolizer *s, struct dso *d)
{
	struct elfsyms_info info, dinfo;
	struct symtab *syms = NULL, *dsyms = NULL;
	char have[2 * ELFSYMS_BUILD_ID_MAX + 1];
	char want[2 * ELFSYMS_BUILD_ID_MAX + 1];
	char live[96];
	const char *path = d->path;
	struct pipe_err err;
	bool have_file, mismatch = false;
	int ret;

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
	ret = elfsyms_read(path, ELFSYMS_SYMTAB, &info, &syms, &err);
	said_if_oom(s, ret, path);
	have_file = ret == 0;
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
		said_if_oom(s, elfplt_read(path, &d->plt, &err), path);
		if (!syms && (sym_find_debug(s, d->path, id, id_len,
					     info.debuglink, &dinfo, &dsyms) ||
			      sym_fetch_debug(s, id, id_len, &dinfo, &dsyms))) {
			syms = dsyms;
			d->debug_path = strdup(s->found_debug);
		} else if (!syms) {
			/* a stripped file: its MiniDebugInfo names the
			 * functions .dynsym lacks */
			said_if_oom(s, minidebug_read(path, &d->mini, &err),
				    path);
			said_if_oom(s, elfsyms_read(path, ELFSYMS_DYNSYM, &info,
						    &syms, &err), path);
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
	    (sym_find_debug(s, d->path, d->build_id, d->build_id_len, NULL,
			    &dinfo, &dsyms) ||
	     sym_fetch_debug(s, d->build_id, d->build_id_len, &dinfo, &dsyms))) {
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
		said_if_oom(s, elfsyms_read(path, ELFSYMS_ANY, &info, &syms,
					    &err), path);
	d->syms = syms;
}
