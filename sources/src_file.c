/*
 * src_file.c - the `file` byte source: offers a pipe file's bytes (`file:-`
 * reads standard input, forward only; a regular file is also mapped, to
 * be read in place) to the core's container reader.
 * Its one parameter is the path: the reader's options (strict=, start=,
 * threads=, ...) are the host's, which owns the container format.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "pipe_plugin.h"

struct fsrc {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	const char *path;             /* borrowed from the args */
	int fd;
	bool seekable;                /* a regular file */
	uint64_t pos;                 /* next offset when not seekable */
	void *map;                    /* the mapping `map` made, or NULL */
	size_t map_len;
};

static const struct pipe_param fsrc_params[] = {
	{ "path", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL | PIPE_PARAM_REQUIRED,
	  NULL, "pipe file to read, - for standard input", NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static int fsrc_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		     void **state)
{
	struct fsrc *s = *state; /* zeroed by the host (state_size) */
	struct stat st;

	s->host = host;
	s->ctx = ctx;
	s->path = host->arg_str(ctx, "path");
	if (!strcmp(s->path, "-"))
		s->fd = STDIN_FILENO;
	else
		s->fd = open(s->path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		int e = errno;

		host->error(ctx, "cannot open '%s': %s", s->path, strerror(e));
		return -e;
	}
	if (fstat(s->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		host->error(ctx, "cannot read '%s': it is a directory", s->path);
		if (s->fd != STDIN_FILENO)
			close(s->fd);
		return -EISDIR;
	}
	s->seekable = fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode);
	return 0;
}

static int fsrc_read_at(void *state, uint64_t off, void *buf, size_t len,
			size_t *got)
{
	struct fsrc *s = state;
	ssize_t n;

	if (!s->seekable && off != s->pos) {
		s->host->error(s->ctx, "cannot seek in '%s': not a regular file",
			       s->path);
		return -ESPIPE;
	}
	if (s->seekable)
		n = fdio_pread_full(s->fd, buf, len, (off_t)off);
	else
		n = fdio_read_full(s->fd, buf, len);
	if (n < 0) {
		s->host->error(s->ctx, "cannot read '%s': %s", s->path,
			       strerror((int)-n));
		return (int)n;
	}
	if (!s->seekable)
		s->pos += (uint64_t)n;
	*got = (size_t)n;
	return 0;
}

static int fsrc_size(void *state, uint64_t *size)
{
	struct fsrc *s = state;
	struct stat st;

	if (!s->seekable)
		return -ESPIPE;
	if (fstat(s->fd, &st) < 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* A regular file, whole: the reader reads it in place.  A file cut
 * while it is mapped kills the reader with SIGBUS, as it does perf
 * report, which maps perf.data the same way. */
static int fsrc_map(void *state, const void **base, uint64_t *len)
{
	struct fsrc *s = state;
	struct stat st;
	void *p;

	if (!s->seekable || fstat(s->fd, &st) < 0 || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX)
		return -ENOTSUP;
	if (!s->map) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED,
			 s->fd, 0);
		if (p == MAP_FAILED)
			return -ENOTSUP;
		/* read forward, once: read ahead, drop behind */
		madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
		s->map = p;
		s->map_len = (size_t)st.st_size;
	}
	*base = s->map;
	*len = s->map_len;
	return 0;
}

static void fsrc_close(void *state)
{
	struct fsrc *s = state;

	if (s->map)
		munmap(s->map, s->map_len);
	if (s->fd > STDERR_FILENO)
		close(s->fd);
}

PIPE_PLUGIN_SOURCE(
	.flags = PIPE_PLUGIN_BYTES,
	.name = "file",
	.summary = "read a pipe file",
	.version = "1",
	.params = fsrc_params,
	.state_size = sizeof(struct fsrc),
	.open = fsrc_open,
	.close = fsrc_close,
	.read_at = fsrc_read_at,
	.byte_size = fsrc_size,
	.map = fsrc_map
);
