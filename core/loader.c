/*
 * loader.c - loading one plugin .so: a file check before dlopen (so a
 * missing file or a text file gets a clean one-line message), dlopen with
 * RTLD_NOW | RTLD_LOCAL, the `pipe_plugin` descriptor, and the checks of
 * its ABI version, sizes, kind, name, functions, codec id and parameter
 * table.  The host then works on its own zero-extended copies of the
 * descriptor and the table, so a plugin of an older minor, whose structs
 * are shorter, reads as one whose later fields are NULL.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "hostopts.h"
#include "loader.h"
#include "params.h"
#include "trust.h"

/* Every plugin of ABI 2.0 has at least this many descriptor bytes. */
#define LOADER_SIZE_V2_0                          \
	(offsetof(struct pipe_plugin, sideband) + \
	 sizeof(((struct pipe_plugin *)0)->sideband))
/* ... and parameter entries of at least this many bytes. */
#define LOADER_PARAM_V2_0 (offsetof(struct pipe_param, max) + sizeof(int64_t))
/* A host-allocated state larger than this is a mistake. */
#define LOADER_STATE_MAX (1u << 30)
/* Tables longer than this are not tables (a missing terminator). */
#define LOADER_PARAMS_MAX 256

const char *loader_kind_name(uint32_t kind)
{
	switch (kind) {
	case PIPE_KIND_SOURCE:
		return "source";
	case PIPE_KIND_CODEC:
		return "codec";
	case PIPE_KIND_SINK:
		return "sink";
	default:
		return "unknown kind";
	}
}

/* e_type of an ELF header in the file's own byte order. */
static unsigned elf_type(const unsigned char *ehdr)
{
	if (ehdr[EI_DATA] == ELFDATA2MSB)
		return (unsigned)ehdr[16] << 8 | ehdr[17];
	return (unsigned)ehdr[17] << 8 | ehdr[16];
}

/*
 * The file is a readable regular file (opened without blocking, so a FIFO
 * cannot hang pipe), an ELF shared object (ET_DYN), and when pipe is
 * privileged owned and writable by root or the user alone.  Returns the
 * open fd, which the caller closes after dlopen.
 */
static int file_check(const char *path, struct pipe_err *err)
{
	unsigned char ehdr[18]; /* e_ident and e_type */
	struct stat st;
	ssize_t n;
	int fd, ret = 0;

	fd = trust_open(path, "cannot load plugin", &st, err);
	if (fd < 0)
		return fd;
	if (trust_is_privileged()) {
		ret = trust_check_owner(&st, "plugin", path, err);
		if (ret < 0)
			goto out;
	}
	n = read(fd, ehdr, sizeof(ehdr));
	if (n < 0)
		ret = pipe_err_set(err, -errno, "cannot load plugin '%s': %s",
				   path, strerror(errno));
	else if (n != (ssize_t)sizeof(ehdr) ||
		 memcmp(ehdr, ELFMAG, SELFMAG) ||
		 elf_type(ehdr) != ET_DYN)
		ret = pipe_err_set(err, -ENOEXEC, "cannot load plugin '%s': "
				   "not a shared object", path);
out:
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

/* dlopen's message without its leading "PATH: ", on one line. */
static void dlerror_tail(char *buf, size_t cap, const char *dlpath)
{
	const char *msg = dlerror();
	size_t plen = strlen(dlpath);
	char *nl;

	if (!msg)
		msg = "unknown dlopen error";
	if (!strncmp(msg, dlpath, plen) && !strncmp(msg + plen, ": ", 2))
		msg += plen + 2;
	snprintf(buf, cap, "%s", msg);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
}

static int version_check(const struct pipe_plugin *p, const char *path,
			 struct pipe_err *err)
{
	uint32_t major = p->abi >> 16, minor = p->abi & 0xffff;

	if (major != PIPE_ABI_MAJOR) {
		pipe_err_set(err, -EPROTO, "plugin '%s' speaks ABI %u, this "
			     "pipe speaks ABI %u", path, major, PIPE_ABI_MAJOR);
		pipe_err_hint(err, "rebuild it against this pipe's "
			      "pipe_plugin.h");
		return -EPROTO;
	}
	if (minor > PIPE_ABI_MINOR) {
		pipe_err_set(err, -EPROTO, "plugin '%s' needs ABI %u.%u, this "
			     "pipe speaks ABI %u.%u", path, major, minor,
			     PIPE_ABI_MAJOR, PIPE_ABI_MINOR);
		pipe_err_hint(err, "upgrade pipe, or rebuild the plugin "
			      "against this pipe's pipe_plugin.h");
		return -EPROTO;
	}
	if (p->size < LOADER_SIZE_V2_0) {
		pipe_err_set(err, -EPROTO, "plugin '%s' has a %u-byte "
			     "descriptor, ABI %u.0 needs at least %zu", path,
			     p->size, PIPE_ABI_MAJOR, LOADER_SIZE_V2_0);
		pipe_err_hint(err, "define it with PIPE_PLUGIN_SINK(...) (or "
			      "_SOURCE, _CODEC), which sets the size");
		return -EPROTO;
	}
	if (p->params && p->param_size < LOADER_PARAM_V2_0) {
		pipe_err_set(err, -EPROTO, "plugin '%s' has %u-byte parameter "
			     "entries, ABI %u.0 needs at least %zu", path,
			     p->param_size, PIPE_ABI_MAJOR, LOADER_PARAM_V2_0);
		pipe_err_hint(err, "define it with PIPE_PLUGIN_SINK(...) (or "
			      "_SOURCE, _CODEC), which sets param_size");
		return -EPROTO;
	}
	if (p->params && p->param_size > 4096)
		return pipe_err_set(err, -EPROTO, "plugin '%s' has %u-byte "
				    "parameter entries, which no ABI %u.x "
				    "header makes", path, p->param_size,
				    PIPE_ABI_MAJOR);
	return 0;
}

static bool name_is_valid(const char *s)
{
	size_t n = 0;

	for (; *s; s++, n++)
		if (n == 64 || !((*s >= 'a' && *s <= 'z') ||
				 (*s >= '0' && *s <= '9') ||
				 *s == '_' || *s == '-'))
			return false;
	return n > 0;
}

/* The first missing function of the plugin's kind and shape, or NULL;
 * *shape is "record source", "byte sink", ... */
static const char *ops_missing(const struct pipe_plugin *p,
			       const char **shape)
{
	bool bytes = p->flags & PIPE_PLUGIN_BYTES;

	*shape = loader_kind_name(p->kind);
	switch (p->kind) {
	case PIPE_KIND_SOURCE:
		*shape = bytes ? "byte source" : "record source";
		if (bytes)
			return !p->read_at ? "read_at" : NULL;
		return !p->start ? "start" : !p->read ? "read" : NULL;
	case PIPE_KIND_CODEC:
		return !p->bound ? "bound" : !p->compress ? "compress" :
			!p->decompress ? "decompress" : NULL;
	default:
		if (!p->consume && !p->write && !p->sample && !p->sideband)
			return "consume' or 'write";
		*shape = bytes ? "byte sink" : "record sink";
		if (bytes)
			return !p->write ? "write" : NULL;
		return !p->consume && !p->sample && !p->sideband ?
			"consume" : NULL;
	}
}

static int codec_id_check(const struct pipe_plugin *p, const char *path,
			  struct pipe_err *err)
{
	if (p->kind != PIPE_KIND_CODEC || p->codec_id <= PIPE_CODEC_BUNDLED_MAX ||
	    (p->codec_id >= PIPE_CODEC_USER_MIN &&
	     p->codec_id <= PIPE_CODEC_USER_MAX))
		return 0;
	pipe_err_set(err, -EINVAL, "plugin '%s' uses codec id %#x, which is "
		     "reserved for pipe's own codecs", path, p->codec_id);
	pipe_err_hint(err, "third-party codecs pick an id from %#x to %#x "
		      "(PIPE_CODEC_USER_MIN..MAX)", PIPE_CODEC_USER_MIN,
		      PIPE_CODEC_USER_MAX);
	return -EINVAL;
}

/*
 * Copy the plugin's table at its element size into l->params at ours,
 * then check it, and that it declares no option the host parses for its
 * kind (those are the host's: the plugin reads them through arg_*).
 */
static int params_copy(struct loaded *l, const struct pipe_plugin *p,
		       const char *what, struct pipe_err *err)
{
	const struct pipe_param *host[HOSTOPTS_MAX], *h;
	const char *title[HOSTOPTS_MAX];
	size_t n = 0, i, esz = p->param_size;
	uint32_t nr_host, t;
	int ret;

	if (!p->params)
		return 0;
	while (((const struct pipe_param *)(const void *)
		((const char *)p->params + n * esz))->name) {
		if (++n > LOADER_PARAMS_MAX)
			return pipe_err_set(err, -EINVAL, "%s has more than %d "
					    "parameters (a missing { 0 } at "
					    "the end of its table?)", what,
					    LOADER_PARAMS_MAX);
	}
	l->params = calloc(n + 1, sizeof(*l->params));
	if (!l->params)
		return pipe_err_nomem(err, "cannot load %s", what);
	for (i = 0; i < n; i++)
		memcpy(&l->params[i], (const char *)p->params + i * esz,
		       esz < sizeof(*l->params) ? esz : sizeof(*l->params));
	l->desc.params = l->params;
	ret = params_check_table(l->params, what, err);
	if (ret < 0)
		return ret;
	nr_host = hostopts_tables(p->kind, p->flags, host, title);
	for (t = 0; t < nr_host; t++) {
		for (i = 0; i < n; i++) {
			for (h = host[t]; h->name; h++) {
				if (strcmp(h->name, l->params[i].name))
					continue;
				pipe_err_set(err, -EINVAL, "%s declares "
					     "parameter '%s', which the host "
					     "parses for every %s", what,
					     h->name,
					     loader_kind_name(p->kind));
				pipe_err_hint(err, "drop it from the table and "
					      "read it with host->arg_*: see "
					      "the %s in 'pipe help'",
					      title[t]);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int plugin_check(struct loaded *l, const char *path,
			uint32_t expect_kind, struct pipe_err *err)
{
	const struct pipe_plugin *p = l->plugin;
	const char *missing, *shape;
	char what[4200];
	uint32_t i;
	int ret;

	if (p->kind < PIPE_KIND_SOURCE || p->kind > PIPE_KIND_SINK) {
		pipe_err_set(err, -EINVAL, "plugin '%s' has unknown kind %u",
			     path, p->kind);
		pipe_err_hint(err, "kind is PIPE_KIND_SOURCE, PIPE_KIND_CODEC "
			      "or PIPE_KIND_SINK");
		return -EINVAL;
	}
	if (expect_kind && p->kind != expect_kind)
		return pipe_err_set(err, -EINVAL,
				    "plugin '%s' is a %s, not a %s", path,
				    loader_kind_name(p->kind),
				    loader_kind_name(expect_kind));
	if (!p->name)
		return pipe_err_set(err, -EINVAL, "plugin '%s' has no name",
				    path);
	if (!name_is_valid(p->name)) {
		pipe_err_set(err, -EINVAL, "plugin '%s' has a bad name '%.64s'",
			     path, p->name);
		pipe_err_hint(err, "a name is 1 to 64 of a-z, 0-9, '_' and "
			      "'-'");
		return -EINVAL;
	}
	if (p->kind == PIPE_KIND_SINK && p->consume &&
	    (p->sample || p->sideband)) {
		pipe_err_set(err, -EINVAL, "plugin '%s' has both 'consume' "
			     "and 'sample' or 'sideband'", path);
		pipe_err_hint(err, "a record sink takes batches (consume) or "
			      "single records (sample, sideband), not both");
		return -EINVAL;
	}
	missing = ops_missing(p, &shape);
	if (missing) {
		pipe_err_set(err, -EINVAL, "plugin '%s' is a %s without '%s'",
			     path, shape, missing);
		if (p->kind == PIPE_KIND_SINK && p->write &&
		    !(p->flags & PIPE_PLUGIN_BYTES))
			pipe_err_hint(err, "a byte sink sets PIPE_PLUGIN_BYTES "
				      "in flags");
		return -EINVAL;
	}
	ret = codec_id_check(p, path, err);
	if (ret < 0)
		return ret;
	snprintf(what, sizeof(what), "plugin '%s'", path);
	if (p->state_size > LOADER_STATE_MAX)
		return pipe_err_set(err, -EINVAL, "plugin '%s' asks for a "
				    "%llu-byte state, more than %u", path,
				    (unsigned long long)p->state_size,
				    LOADER_STATE_MAX);
	/* desc.params still points into the .so: replace it by our copy */
	ret = params_copy(l, &l->desc, what, err);
	if (ret < 0)
		return ret;
	for (i = 0; l->params && l->params[i].name; i++)
		if (l->params[i].type == PIPE_PARAM_OUTPUT)
			l->desc.flags |= PIPE_PLUGIN_OUTPUT;
	return 0;
}

int loader_open(struct loaded **out, const char *path, uint32_t expect_kind,
		struct pipe_err *err)
{
	const struct pipe_plugin *so;
	struct loaded *l;
	char *dlpath = NULL;
	char why[512];
	size_t n;
	int fd, ret;

	*out = NULL;
	fd = file_check(path, err);
	if (fd < 0)
		return fd;
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return pipe_err_nomem(err, "cannot load plugin '%s'", path);
	}
	l->fd = -1;
	l->path = strdup(path);
	/* a name without '/' would make dlopen search the library path */
	n = strlen(path) + 32;
	dlpath = malloc(n);
	if (!l->path || !dlpath) {
		ret = pipe_err_nomem(err, "cannot load plugin '%s'", path);
		goto out_free;
	}
	/* set-id or with capabilities, load the very file checked above:
	 * the user could swap the path's file in between.  The fd stays
	 * open while the plugin is loaded: dlopen knows a library by its
	 * name, and a closed fd's number (so its /proc name) is reused by
	 * the next plugin, which would get this one's handle. */
	if (getauxval(AT_SECURE)) {
		snprintf(dlpath, n, "/proc/self/fd/%d", fd);
		l->fd = fd;
		fd = -1;
	} else
		snprintf(dlpath, n, "%s%s", strchr(path, '/') ? "" : "./",
			 path);
	l->handle = dlopen(dlpath, RTLD_NOW | RTLD_LOCAL);
	if (!l->handle) {
		dlerror_tail(why, sizeof(why), dlpath);
		ret = pipe_err_set(err, -ENOEXEC, "cannot load plugin '%s': %s",
				   path, why);
		goto out_free;
	}
	so = dlsym(l->handle, PIPE_PLUGIN_SYMBOL);
	if (!so) {
		ret = pipe_err_set(err, -ENOENT, "plugin '%s' has no '%s' "
				   "symbol", path, PIPE_PLUGIN_SYMBOL);
		pipe_err_hint(err, "define it with PIPE_PLUGIN_SINK(...) (or "
			      "_SOURCE, _CODEC); see plugins.md in pipe's "
			      "documentation (share/doc/pipe)");
		goto out_free;
	}
	ret = version_check(so, path, err);
	if (ret < 0)
		goto out_free;
	memcpy(&l->desc, so, so->size < sizeof(l->desc) ? so->size :
	       sizeof(l->desc));
	l->plugin = &l->desc;
	/* per-sample sinks get comm and symbols: the host keeps process
	 * state for them */
	if (l->desc.kind == PIPE_KIND_SINK && l->desc.sample)
		l->desc.flags |= PIPE_PLUGIN_SYMBOLS;
	ret = plugin_check(l, path, expect_kind, err);
	if (ret < 0)
		goto out_free;
	free(dlpath);
	if (fd >= 0)
		close(fd);
	*out = l;
	return 0;

out_free:
	free(dlpath);
	if (fd >= 0)
		close(fd);
	loader_close(l);
	return ret;
}

void loader_close(struct loaded *l)
{
	if (!l)
		return;
	if (l->handle)
		dlclose(l->handle);
	if (l->fd >= 0)
		close(l->fd);
	free(l->params);
	free(l->path);
	free(l);
}
