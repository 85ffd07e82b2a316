/*
 * conf.c - reading plugins.conf files (docs/plugins.md): `KIND NAME PATH [ARGS]`
 * per line, '#' comments, paths relative to the file.  Files are read in
 * order; a later file replaces a plugin of the same kind and name, with a
 * note.  Errors name FILE:LINE as the user gave FILE.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "err.h"
#include "grow.h"
#include "pipe_plugin.h"
#include "trust.h"

#define CONF_LINE_MAX 4096     /* longest line */
#define CONF_FILE_MAX (1 << 20) /* largest file, bytes */
#define CONF_ENTRIES_MAX 4096  /* plugins over all files */
#define CONF_FILES_MAX 16
#define CONF_NAME_MAX 64

static const char *const kind_names[] = {
	[PIPE_KIND_SOURCE] = "source",
	[PIPE_KIND_CODEC] = "codec",
	[PIPE_KIND_SINK] = "sink",
};

struct conf *conf_new(void)
{
	return calloc(1, sizeof(struct conf));
}

static void entry_release(struct conf_entry *e)
{
	free(e->name);
	free(e->path);
	free(e->args);
	free(e->origin);
}

void conf_free(struct conf *c)
{
	uint32_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr; i++)
		entry_release(&c->entries[i]);
	free(c->entries);
	for (i = 0; i < c->nr_files; i++)
		free(c->files[i]);
	free(c->files);
	free(c);
}

static struct conf_entry *entry_find(const struct conf *c, uint32_t kind,
				     const char *name)
{
	uint32_t i;

	for (i = 0; i < c->nr; i++)
		if (c->entries[i].kind == kind &&
		    !strcmp(c->entries[i].name, name))
			return &c->entries[i];
	return NULL;
}

const struct conf_entry *conf_find(const struct conf *c, uint32_t kind,
				   const char *name)
{
	return entry_find(c, kind, name);
}

void conf_names(const struct conf *c, uint32_t kind, char *buf, size_t cap)
{
	size_t n = 0;
	uint32_t i;

	if (cap == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < c->nr && n < cap; i++) {
		if (c->entries[i].kind != kind)
			continue;
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "",
				      c->entries[i].name);
	}
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' ||
	       ch == '\v' || ch == '\f';
}

/* The next whitespace-separated field of *p, NUL-terminated in place. */
static char *field_next(char **p)
{
	char *s = *p, *start;

	while (is_space(*s))
		s++;
	if (!*s) {
		*p = s;
		return NULL;
	}
	start = s;
	while (*s && !is_space(*s))
		s++;
	if (*s)
		*s++ = '\0';
	*p = s;
	return start;
}

static bool name_is_valid(const char *s)
{
	if (!*s || strlen(s) > CONF_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-'))
			return false;
	return true;
}

static uint32_t kind_parse(const char *s)
{
	uint32_t k;

	for (k = PIPE_KIND_SOURCE; k <= PIPE_KIND_SINK; k++)
		if (!strcmp(s, kind_names[k]))
			return k;
	return 0;
}

/* Cut a comment: '#' at the start or after whitespace. */
static void comment_cut(char *line)
{
	char *p;

	for (p = line; *p; p++) {
		if (*p == '#' && (p == line || is_space(p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

/* Trim trailing whitespace in place. */
static void trim_end(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && is_space(s[n - 1]))
		s[--n] = '\0';
}

static char *strdup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* `path` relative to the directory of conf file `file`; malloc'd.  A
 * result always holds a '/', so dlopen never searches the library path. */
static char *path_resolve(const char *file, const char *path)
{
	const char *slash = strrchr(file, '/');
	size_t dir_len, n;
	char *out;

	if (path[0] == '/')
		return strdup(path);
	dir_len = slash ? (size_t)(slash - file) : 1;
	n = dir_len + 1 + strlen(path) + 1;
	out = malloc(n);
	if (!out)
		return NULL;
	if (!slash)
		snprintf(out, n, "./%s", path);
	else if (dir_len == 0)
		snprintf(out, n, "/%s", path);
	else
		snprintf(out, n, "%.*s/%s", (int)dir_len, file, path);
	return out;
}

/* One parsed line, fields pointing into the line buffer. */
struct line {
	uint32_t kind;
	const char *name;
	const char *path;
	const char *args; /* NULL: none */
};

static int line_parse(char *buf, const char *file, unsigned lineno,
		      struct line *l, struct pipe_err *err)
{
	char *p = buf, *kind;

	comment_cut(buf);
	kind = field_next(&p);
	if (!kind) {
		l->kind = 0;
		return 0;
	}
	l->name = field_next(&p);
	l->path = l->name ? field_next(&p) : NULL;
	if (!l->path)
		return pipe_err_set(err, -EINVAL, "%s:%u: expected KIND NAME "
				    "PATH [ARGS]", file, lineno);
	l->kind = kind_parse(kind);
	if (!l->kind) {
		pipe_err_set(err, -EINVAL, "%s:%u: unknown kind '%s'", file,
			     lineno, kind);
		pipe_err_hint(err, "kinds are source, codec, sink");
		return -EINVAL;
	}
	if (!name_is_valid(l->name)) {
		pipe_err_set(err, -EINVAL, "%s:%u: bad plugin name '%s'", file,
			     lineno, l->name);
		pipe_err_hint(err, "a name is 1 to %d of a-z, 0-9, '_' and '-'",
			      CONF_NAME_MAX);
		return -EINVAL;
	}
	while (is_space(*p))
		p++;
	trim_end(p);
	l->args = *p ? p : NULL;
	return 0;
}

/* Add or replace the entry of one line. */
static int entry_add(struct conf *c, const struct line *l, const char *file,
		     unsigned lineno, void (*note)(const char *line),
		     struct pipe_err *err)
{
	struct conf_entry e = { .kind = l->kind, .file = c->nr_files - 1 };
	struct conf_entry *old = entry_find(c, l->kind, l->name);
	size_t origin_len = strlen(file) + 16;
	char msg[1024];

	if (old && old->file == c->nr_files - 1)
		return pipe_err_set(err, -EINVAL, "%s:%u: %s '%s' is already "
				    "defined on line %s", file, lineno,
				    kind_names[l->kind], l->name,
				    strrchr(old->origin, ':') + 1);
	if (!old && c->nr == CONF_ENTRIES_MAX)
		return pipe_err_set(err, -EINVAL, "%s:%u: too many plugins "
				    "(at most %d)", file, lineno,
				    CONF_ENTRIES_MAX);
	e.name = strdup(l->name);
	e.path = path_resolve(file, l->path);
	e.args = strdup_or_null(l->args);
	e.origin = malloc(origin_len);
	if (!e.name || !e.path || (l->args && !e.args) || !e.origin) {
		entry_release(&e);
		return pipe_err_nomem(err, "cannot read %s:%u", file, lineno);
	}
	snprintf(e.origin, origin_len, "%s:%u", file, lineno);
	if (old) {
		if (note) {
			snprintf(msg, sizeof(msg), "note: %s replaces plugin "
				 "'%s' from %s", e.origin, e.name, old->origin);
			note(msg);
		}
		entry_release(old);
		*old = e;
		return 0;
	}
	if (grow_array(&c->entries, &c->cap, (size_t)c->nr + 1,
		       sizeof(*c->entries), 16, CONF_ENTRIES_MAX) < 0) {
		entry_release(&e);
		return pipe_err_nomem(err, "cannot read %s:%u", file, lineno);
	}
	c->entries[c->nr++] = e;
	return 0;
}

static int file_add(struct conf *c, const char *path, struct pipe_err *err)
{
	if (c->nr_files == CONF_FILES_MAX)
		return pipe_err_set(err, -EINVAL, "cannot read '%s': more than "
				    "%d plugins.conf files", path,
				    CONF_FILES_MAX);
	if (grow_array(&c->files, &c->cap_files, (size_t)c->nr_files + 1,
		       sizeof(*c->files), 4, CONF_FILES_MAX) < 0)
		return pipe_err_nomem(err, "cannot read '%s'", path);
	c->files[c->nr_files] = strdup(path);
	if (!c->files[c->nr_files])
		return pipe_err_nomem(err, "cannot read '%s'", path);
	c->nr_files++;
	return 0;
}

/* Read the lines of an open file. */
static int lines_read(struct conf *c, FILE *f, const char *path,
		      void (*note)(const char *line), struct pipe_err *err)
{
	char *buf = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	ssize_t n;
	int ret = 0;

	/* getline's failed allocation leaves no error on f, only errno */
	for (errno = 0; (n = getline(&buf, &cap, f)) >= 0; errno = 0) {
		struct line l = { 0 };

		lineno++;
		if (n > CONF_LINE_MAX) {
			ret = pipe_err_set(err, -EINVAL, "%s:%u: line too long "
					   "(more than %d bytes)", path,
					   lineno, CONF_LINE_MAX);
			goto out;
		}
		if (strlen(buf) != (size_t)n) {
			ret = pipe_err_set(err, -EINVAL, "%s:%u: NUL byte in "
					   "line", path, lineno);
			goto out;
		}
		ret = line_parse(buf, path, lineno, &l, err);
		if (ret < 0)
			goto out;
		if (!l.kind)
			continue;
		ret = entry_add(c, &l, path, lineno, note, err);
		if (ret < 0)
			goto out;
	}
	if (ferror(f) || errno)
		ret = pipe_err_set(err, errno ? -errno : -EIO,
				   "cannot read '%s': %s", path,
				   strerror(errno ? errno : EIO));
out:
	free(buf);
	return ret;
}

/*
 * Open a conf file: a regular file (a FIFO cannot hang pipe) of at most
 * CONF_FILE_MAX bytes, owned by the user or root (perf's rule for
 * ~/.perfconfig; only root under set-id or file capabilities).  On
 * success *f is owned by the caller.
 */
static int conf_open(const char *path, FILE **f, struct pipe_err *err)
{
	struct stat st;
	int fd, ret;

	fd = trust_open(path, "cannot read", &st, err);
	if (fd < 0)
		return fd;
	ret = trust_check_owner(&st, "plugins.conf", path, err);
	if (ret == 0 && st.st_size > CONF_FILE_MAX)
		ret = pipe_err_set(err, -EFBIG, "cannot read '%s': larger "
				   "than %d bytes", path, CONF_FILE_MAX);
	if (ret == 0) {
		*f = fdopen(fd, "r");
		if (*f)
			return 0;
		ret = pipe_err_set(err, -errno, "cannot read '%s': %s", path,
				   strerror(errno));
	}
	close(fd);
	return ret;
}

static int conf_read(struct conf *c, FILE *f, const char *path,
		     void (*note)(const char *line), struct pipe_err *err)
{
	int ret = file_add(c, path, err);

	if (ret == 0)
		ret = lines_read(c, f, path, note, err);
	fclose(f);
	return ret;
}

int conf_load_file(struct conf *c, const char *path,
		   void (*note)(const char *line), struct pipe_err *err)
{
	FILE *f;
	int ret = conf_open(path, &f, err);

	if (ret < 0)
		return ret;
	return conf_read(c, f, path, note, err);
}

/*
 * The user's file: $XDG_CONFIG_HOME/pipe/plugins.conf, else
 * $HOME/.config/pipe/plugins.conf; NULL when neither is an absolute path
 * (the XDG spec ignores a relative XDG_CONFIG_HOME; a relative HOME would
 * make the file depend on the current directory) or when pipe runs set-id
 * or with capabilities (secure_getenv).  malloc'd.
 */
static char *user_conf_path(void)
{
	const char *xdg = secure_getenv("XDG_CONFIG_HOME");
	const char *home = secure_getenv("HOME");
	const char *tail = "pipe/plugins.conf";
	char *out;
	size_t n;

	if (xdg && xdg[0] == '/') {
		n = strlen(xdg) + strlen(tail) + 2;
		out = malloc(n);
		if (out)
			snprintf(out, n, "%s/%s", xdg, tail);
		return out;
	}
	if (!home || home[0] != '/')
		return NULL;
	n = strlen(home) + strlen(tail) + 10;
	out = malloc(n);
	if (out)
		snprintf(out, n, "%s/.config/%s", home, tail);
	return out;
}

/* The user's file when there is one; one owned by someone else is
 * skipped with a warning, as perf does with ~/.perfconfig. */
static int conf_load_user(struct conf *c, void (*note)(const char *line),
			  struct pipe_err *err)
{
	char *user = user_conf_path();
	char line[sizeof(err->msg) + 32];
	FILE *f;
	int ret;

	if (!user)
		return 0;
	ret = conf_open(user, &f, err);
	if (ret == -ENOENT || ret == -ENOTDIR) {
		ret = 0;
	} else if (ret == -EPERM) {
		snprintf(line, sizeof(line), "warning: %s: ignored", err->msg);
		if (note)
			note(line);
		pipe_err_clear(err);
		ret = 0;
	} else if (ret == 0) {
		ret = conf_read(c, f, user, note, err);
	}
	free(user);
	return ret;
}

int conf_load(struct conf **out, const char *builtin,
	      void (*note)(const char *line), struct pipe_err *err)
{
	const char *env = secure_getenv("PIPE_PLUGINS_CONF");
	struct conf *c = conf_new();
	int ret = 0;

	*out = NULL;
	if (!c)
		return pipe_err_nomem(err, "cannot read plugins.conf");
	if (env && *env) {
		ret = conf_load_file(c, env, note, err);
		if (ret == -ENOENT)
			pipe_err_hint(err, "$PIPE_PLUGINS_CONF names it; unset "
				      "it to use the built-in plugins.conf");
	} else if (builtin) {
		ret = conf_load_file(c, builtin, note, err);
		if (ret == -ENOENT)
			pipe_err_hint(err, "run make to build pipe and its "
				      "plugins.conf");
	}
	if (ret == 0)
		ret = conf_load_user(c, note, err);
	if (ret < 0) {
		conf_free(c);
		return ret;
	}
	*out = c;
	return 0;
}
