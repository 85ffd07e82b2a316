/*
 * train.h - `pipe train`: a shared dictionary trained on the transformed
 * blocks of earlier recordings, for `-c zstd:dict_file=FILE`.
 */
#ifndef PIPE_TRAIN_H
#define PIPE_TRAIN_H

#include <stddef.h>
#include <stdint.h>

struct conf;
struct pipe_err;

struct train_opts {
	const struct conf *conf;   /* borrowed */
	const char *source;        /* "file:a.dat" */
	const char *codec;         /* "zstd" or "zstd:block=8K", or NULL */
	const char *output;        /* dictionary file to create */
	uint32_t dict_size;        /* bytes, 0: the codec's dict_size */
	bool force;                /* overwrite output */
};

/* Returns 0, or negative errno with err set (naming file or plugin). */
int train_run(const struct train_opts *o, struct pipe_err *err);

#endif
