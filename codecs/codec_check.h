/*
 * codec_check.h - the checks the codec plugins make of a block, each
 * with its one message: a dictionary given to a codec that has none, a
 * block too big for the codec, output that does not fit, and the decoded
 * length against the block header's.  Header-only, on the public header
 * alone: each codec compiles its own copy.
 */
#ifndef PIPE_CODEC_CHECK_H
#define PIPE_CODEC_CHECK_H

#include <errno.h>
#include <stdint.h>

#include "pipe_plugin.h"

/* The messages name the codec `name` and go through host->error. */
struct codec_who {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	const char *name;             /* the codec's name */
};

/* A block names dictionary `dict_id`, and the codec takes none: -EINVAL. */
static inline int codec_no_dict(const struct codec_who *w, uint32_t dict_id)
{
	w->host->error(w->ctx,
		       "cannot use dictionary %u with '%s': it takes no dictionaries",
		       dict_id, w->name);
	return -EINVAL;
}

/* A block of len bytes is more than the codec takes: -EINVAL.  `what`
 * is "compress" or "decompress". */
static inline int codec_too_big(const struct codec_who *w, const char *what,
				size_t len)
{
	w->host->error(w->ctx,
		       "cannot %s with '%s': block of %zu bytes is too big",
		       what, w->name, len);
	return -EINVAL;
}

/* The compressed block does not fit in cap bytes: -ENOBUFS. */
static inline int codec_no_room(const struct codec_who *w, size_t cap)
{
	w->host->error(w->ctx,
		       "cannot compress with '%s': output does not fit in %zu bytes",
		       w->name, cap);
	return -ENOBUFS;
}

/* The data decodes to more than the raw_len bytes of the block: -EINVAL. */
static inline int codec_too_long(const struct codec_who *w, size_t raw_len)
{
	w->host->error(w->ctx,
		       "cannot decompress with '%s': data is longer than the %zu bytes the block header says",
		       w->name, raw_len);
	return -EINVAL;
}

/*
 * The end of a decoded block: `got` bytes came out and `left` input
 * bytes were not read.  0 when got is the block header's raw_len and
 * nothing is left, else -EINVAL with the message.
 */
static inline int codec_check_end(const struct codec_who *w, uint64_t got,
				  size_t raw_len, size_t left)
{
	if (got != raw_len) {
		w->host->error(w->ctx,
			       "cannot decompress with '%s': got %llu bytes, block header says %zu",
			       w->name, (unsigned long long)got, raw_len);
		return -EINVAL;
	}
	if (left) {
		w->host->error(w->ctx,
			       "cannot decompress with '%s': %zu bytes after the end of the stream",
			       w->name, left);
		return -EINVAL;
	}
	return 0;
}

#endif
