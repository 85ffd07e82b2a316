/*
 * output.c - the output-file rule (see output.h): standard output, new
 * files created exclusively, forced overwrites through a temporary file
 * renamed at the end, and the input never overwritten.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash.h"
#include "err.h"
#include "output.h"

struct output {
	char *path;   /* owned copy of the target */
	char *tmp;    /* owned temporary name, or NULL: writing path itself */
	FILE *f;      /* the stream; stdout for "-" */
	bool created; /* this run created path (kept on failure if written) */
};

static void output_free(struct output *o)
{
	if (!o)
		return;
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->tmp)
		crash_tmp_del(o->tmp);
	free(o->path);
	free(o->tmp);
	free(o);
}

static bool same_file(const struct stat *a, const char *other)
{
	struct stat b;

	return other && strcmp(other, "-") && stat(other, &b) == 0 &&
	       a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* A temporary file beside path: DIR/.BASE.pipe-XXXXXX with the mode of
 * the file it replaces. */
static int tmp_open(struct output *o, const struct stat *st,
		    struct pipe_err *err)
{
	const char *slash = strrchr(o->path, '/');
	size_t dlen = slash ? (size_t)(slash - o->path + 1) : 0;
	size_t n = strlen(o->path) + 16;
	int fd;

	o->tmp = malloc(n);
	if (!o->tmp)
		return pipe_err_nomem(err, "cannot create a temporary file "
				      "beside '%s'", o->path);
	snprintf(o->tmp, n, "%.*s.%s.pipe-XXXXXX", (int)dlen, o->path,
		 o->path + dlen);
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd >= 0)
		crash_tmp_add(o->tmp);
	if (fd < 0) {
		int e = errno;

		free(o->tmp);
		o->tmp = NULL;
		return pipe_err_set(err, -e, "cannot create a temporary file "
				    "beside '%s': %s", o->path, strerror(e));
	}
	if (fchmod(fd, st->st_mode & 07777) < 0) {
		/* the rename would change the mode: keep it as it was */
		int e = errno;

		close(fd);
		unlink(o->tmp);
		crash_tmp_del(o->tmp);
		return pipe_err_set(err, -e, "cannot create a temporary file "
				    "beside '%s': %s", o->path, strerror(e));
	}
	return fd;
}

/* Open the target or its temporary file; returns the fd or -errno. */
static int target_open(struct output *o, bool force, const char *force_hint,
		       const char *input, struct pipe_err *err)
{
	struct stat st;
	int fd;

	if (stat(o->path, &st) == 0) {
		if (same_file(&st, input)) {
			pipe_err_set(err, -EINVAL, "cannot write '%s': it is "
				     "the file this run reads", o->path);
			pipe_err_hint(err, "write to another file, then "
				      "rename it");
			return -EINVAL;
		}
		if (S_ISDIR(st.st_mode))
			return pipe_err_set(err, -EISDIR, "cannot create "
					    "'%s': %s", o->path,
					    strerror(EISDIR));
		if (!S_ISREG(st.st_mode)) {
			/* a device or a fifo: nothing to destroy */
			fd = open(o->path, O_WRONLY | O_CLOEXEC);
			if (fd < 0)
				return pipe_err_set(err, -errno, "cannot open "
						    "'%s': %s", o->path,
						    strerror(errno));
			return fd;
		}
		if (!force) {
			pipe_err_set(err, -EEXIST, "output '%s' already "
				     "exists", o->path);
			if (force_hint)
				pipe_err_hint(err, "%s", force_hint);
			return -EEXIST;
		}
		return tmp_open(o, &st, err);
	}
	fd = open(o->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return pipe_err_set(err, -errno, "cannot create '%s': %s",
				    o->path, strerror(errno));
	o->created = true;
	return fd;
}

int output_open(struct output **out, const char *path, bool force,
		const char *force_hint, const char *input,
		struct pipe_err *err)
{
	struct output *o = calloc(1, sizeof(*o));
	int fd;

	*out = NULL;
	if (o)
		o->path = strdup(path);
	if (!o || !o->path) {
		output_free(o);
		return pipe_err_nomem(err, "cannot open '%s'", path);
	}
	if (!strcmp(path, "-")) {
		o->f = stdout;
		*out = o;
		return 0;
	}
	fd = target_open(o, force, force_hint, input, err);
	if (fd < 0) {
		output_free(o);
		return fd;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;

		close(fd);
		output_abort(o);
		return pipe_err_set(err, -e, "cannot open '%s': %s", path,
				    strerror(e));
	}
	*out = o;
	return 0;
}

FILE *output_file(const struct output *o)
{
	return o->f;
}

const char *output_path(const struct output *o)
{
	return o->path;
}

int output_commit(struct output *o, struct pipe_err *err)
{
	int ret = 0;

	if (fflush(o->f) == EOF || ferror(o->f))
		ret = -errno ? -errno : -EIO;
	/* the new bytes are on disk before they replace the old ones */
	if (ret == 0 && o->tmp && fsync(fileno(o->f)) < 0)
		ret = -errno;
	if (ret == 0 && o->f != stdout) {
		FILE *f = o->f;

		o->f = NULL;
		if (fclose(f) == EOF)
			ret = -errno;
	}
	if (ret == 0 && o->tmp && rename(o->tmp, o->path) < 0)
		ret = -errno;
	if (ret < 0) {
		pipe_err_set(err, ret, "cannot write '%s': %s", o->path,
			     strerror(-ret));
		output_abort(o);
		return ret;
	}
	output_free(o);
	return 0;
}

void output_abort(struct output *o)
{
	struct stat st;

	if (!o)
		return;
	if (o->f && o->f != stdout) {
		fflush(o->f);
		if (!o->tmp && o->created && fstat(fileno(o->f), &st) == 0 &&
		    st.st_size == 0)
			unlink(o->path); /* nothing was written: leave nothing */
	}
	if (o->tmp)
		unlink(o->tmp);
	output_free(o);
}
