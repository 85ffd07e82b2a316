/*
 * sink_file.c - the `file` byte sink: writes finished pipe-file bytes, as
 * they come, to the host's output file (`file:-` for stdout), so a killed
 * recording is readable up to its last block.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "pipe_plugin.h"

struct fsink {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	const char *path;             /* borrowed from the args */
	int fd;                       /* the host's output, written directly */
	int (*sync)(int fd);          /* fdatasync, or NULL for pipes */
};

static const struct pipe_param fsink_params[] = {
	{ "path", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL | PIPE_PARAM_REQUIRED,
	  NULL, "output file, - for standard output", NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static int fsink_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	struct fsink *s = *state; /* zeroed by the host (state_size) */
	bool regular;
	int ret;

	s->host = host;
	s->ctx = ctx;
	s->path = host->arg_str(ctx, "path");
	ret = fdio_output(host, ctx, s->path, &s->fd, &regular);
	if (ret < 0)
		return ret;
	if (regular)
		s->sync = fdatasync;
	return 0;
}

static int fsink_write(void *state, const void *buf, size_t len)
{
	struct fsink *s = state;
	int ret = fdio_write_all(s->fd, buf, len);

	if (ret < 0)
		s->host->error(s->ctx, "cannot write '%s': %s", s->path,
			       strerror(-ret));
	return ret;
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

PIPE_PLUGIN_SINK(
	.flags = PIPE_PLUGIN_BYTES | PIPE_PLUGIN_OUTPUT,
	.name = "file",
	.summary = "write a pipe file",
	.version = "1",
	.params = fsink_params,
	.state_size = sizeof(struct fsink),
	.open = fsink_open,
	.write = fsink_write,
	.finish = fsink_finish
);
