/*
 * fuzz_plugins.h - codec plugins for the harnesses: loaded from the
 * build's plugins directory ($PIPE_FUZZ_PLUGINS, else the one the harness
 * was built beside) and opened with the real host table, as pipe does.
 */
#ifndef PIPE_FUZZ_PLUGINS_H
#define PIPE_FUZZ_PLUGINS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "host.h"
#include "loader.h"

#ifndef FUZZ_PLUGIN_DIR
#define FUZZ_PLUGIN_DIR "build/plugins"
#endif

static struct host_run fuzz_run;

/* The loaded codec_NAME.so, once per process; NULL when not built. */
static inline struct loaded *fuzz_codec_load(const char *name)
{
	const char *dir = getenv("PIPE_FUZZ_PLUGINS");
	struct pipe_err err;
	struct loaded *lp = NULL;
	char path[4096];

	snprintf(path, sizeof(path), "%s/codec_%s.so",
		 dir ? dir : FUZZ_PLUGIN_DIR, name);
	if (loader_open(&lp, path, PIPE_KIND_CODEC, &err) < 0)
		return NULL;
	return lp;
}

/* A new instance of a loaded codec with its default arguments. */
static inline struct inst *fuzz_codec_open(struct loaded *lp)
{
	struct pipe_err err;
	struct inst *in = NULL;

	if (!lp || inst_open_loaded(&in, lp, "", &fuzz_run, &err) < 0)
		return NULL;
	return in;
}

#endif
