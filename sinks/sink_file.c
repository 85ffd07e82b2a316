/*
 * sink_file.c - the `file` byte sink: writes finished pipe-file bytes to
 * a file (`file:-` for stdout).  An existing file is kept unless
 * force=on; a file this run created and never wrote to is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipe_plugin.h"

struct fsink {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	const char *path;             /* borrowed from the args */
	int fd;                       /* output, or -1 */
	uint64_t written;             /* bytes written */
	int (*sync)(int fd);          /* fdatasync, or NULL for pipes */
};

static const struct pipe_param fsink_params[] = {
	{ "path", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL | PIPE_PARAM_REQUIRED,
	  NULL, "output file, - for standard output", NULL, 0, 0 },
	{ "force", PIPE_PARAM_BOOL, 0, "off",
	  "overwrite an existing file", NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static int fsink_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	struct fsink *s = calloc(1, sizeof(*s));
	struct stat st;
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC;

	if (!s)
		return -ENOMEM;
	s->host = host;
	s->ctx = ctx;
	s->path = host->arg_str(ctx, "path");
	if (!strcmp(s->path, "-")) {
		s->fd = STDOUT_FILENO;
		*state = s;
		return 0;
	}
	if (host->arg_int(ctx, "force"))
		flags |= O_TRUNC;
	else
		flags |= O_EXCL;
	s->fd = open(s->path, flags, 0644);
	if (s->fd < 0) {
		int e = errno;

		if (e == EEXIST) {
			host->error(ctx, "output '%s' already exists", s->path);
			host->hint(ctx, "add force=on to overwrite it: -k file:%s,force=on",
				   s->path);
		} else {
			host->error(ctx, "cannot create '%s': %s", s->path,
				    strerror(e));
		}
		free(s);
		return -e;
	}
	if (fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode))
		s->sync = fdatasync;
	*state = s;
	return 0;
}

static int fsink_write(void *state, const void *buf, size_t len)
{
	struct fsink *s = state;
	const char *p = buf;

	while (len) {
		ssize_t n = write(s->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			s->host->error(s->ctx, "cannot write '%s': %s", s->path,
				       strerror(e));
			return -e;
		}
		p += n;
		len -= (size_t)n;
		s->written += (uint64_t)n;
	}
	return 0;
}

static int fsink_finish(void *state)
{
	struct fsink *s = state;

	if (s->sync && s->sync(s->fd) < 0) {
		int e = errno;

		s->host->error(s->ctx, "cannot sync '%s': %s", s->path,
			       strerror(e));
		return -e;
	}
	return 0;
}

static void fsink_close(void *state)
{
	struct fsink *s = state;

	if (s->fd > STDERR_FILENO) {
		close(s->fd);
		if (!s->written && s->sync)
			unlink(s->path); /* nothing to keep: the run failed early */
	}
	free(s);
}

PIPE_PLUGIN_SINK(
	.flags = PIPE_PLUGIN_BYTES,
	.name = "file",
	.summary = "write a pipe file",
	.version = "1",
	.params = fsink_params,
	.open = fsink_open,
	.close = fsink_close,
	.write = fsink_write,
	.finish = fsink_finish
);
