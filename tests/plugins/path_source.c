/*
 * path_source.c - a byte source as a third party would write it from the
 * guide: one parameter, `path`, and `read_at` alone (no `byte_size`).
 * The host's reader options (strict=, start=, cpus=, threads=, ...) must
 * work on it all the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipe_plugin.h"

struct psrc {
	int fd; /* the file, read with pread */
};

static const struct pipe_param psrc_params[] = {
	{ .name = "path", .type = PIPE_PARAM_STR,
	  .flags = PIPE_PARAM_POSITIONAL | PIPE_PARAM_REQUIRED,
	  .help = "pipe file to read" },
	{ 0 },
};

static int psrc_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		     void **state)
{
	const char *path = host->arg_str(ctx, "path");
	struct psrc *s = malloc(sizeof(*s));
	int e;

	if (!s)
		return -ENOMEM;
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		e = errno;
		host->error(ctx, "cannot open '%s': %s", path, strerror(e));
		free(s);
		return -e;
	}
	*state = s;
	return 0;
}

static void psrc_close(void *state)
{
	struct psrc *s = state;

	close(s->fd);
	free(s);
}

static int psrc_read_at(void *state, uint64_t off, void *buf, size_t len,
			size_t *got)
{
	struct psrc *s = state;
	ssize_t n = pread(s->fd, buf, len, (off_t)off);

	if (n < 0)
		return -errno;
	*got = (size_t)n;
	return 0;
}

PIPE_PLUGIN_SOURCE(
	.flags = PIPE_PLUGIN_BYTES,
	.name = "pathonly",
	.summary = "a byte source with only a path",
	.version = "1",
	.params = psrc_params,
	.open = psrc_open,
	.close = psrc_close,
	.read_at = psrc_read_at
);
