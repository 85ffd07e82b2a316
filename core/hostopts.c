/*
 * hostopts.c - the host-owned option tables (see hostopts.h): the
 * container reader's, the container writer's and the symbolizer's.
 */
#include <stddef.h>

#include "container.h"
#include "hostopts.h"

static const struct pipe_param reader_table[] = {
	{ "strict", PIPE_PARAM_BOOL, 0, "off",
	  "stop at the first damaged block (exit 1) instead of skipping it",
	  NULL, 0, 0 },
	{ "start", PIPE_PARAM_DURATION, 0, "0",
	  "read from this time after the first record (sideband replayed)",
	  NULL, 0, INT64_MAX },
	{ "stop", PIPE_PARAM_DURATION, 0, NULL,
	  "read up to this time after the first record", NULL, 0, INT64_MAX },
	{ "cpus", PIPE_PARAM_LIST, 0, NULL,
	  "only these CPUs, as 0-3+8 (sideband always read)", NULL, 0, 0 },
	{ "pid", PIPE_PARAM_LIST, 0, NULL,
	  "only samples of these processes, as 123+456", NULL, 0, 0 },
	{ "threads", PIPE_PARAM_INT, 0, "0",
	  "block decoding threads, 0: one per CPU", NULL, 0, 256 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static const struct pipe_param writer_table[] = {
	{ "block", PIPE_PARAM_SIZE, 0, "256K",
	  "raw bytes of records per block", NULL,
	  CONTAINER_BLOCK_MIN, CONTAINER_BLOCK_MAX },
	{ "flush", PIPE_PARAM_DURATION, 0, "1s",
	  "a quiet stream still reaches the output within this time", NULL,
	  1000000, INT64_C(3600) * 1000000000 },
	{ "transform", PIPE_PARAM_ENUM, 0, "auto",
	  "record-aware column transform (auto: on unless codec none)",
	  "auto|on|off", 0, 0 },
	{ "dict", PIPE_PARAM_ENUM, 0, "auto",
	  "train a dictionary per stream (auto: when blocks are small; "
	  "codecs that train only)", "auto|on|off", 0, 0 },
	{ "dict_size", PIPE_PARAM_SIZE, 0, "32K",
	  "size of a trained dictionary", NULL, 1024, 1 << 20 },
	{ "dict_file", PIPE_PARAM_STR, 0, NULL,
	  "use this pre-trained dictionary instead of training", NULL, 0, 0 },
	{ "queue", PIPE_PARAM_SIZE, 0, "16M",
	  "raw bytes of blocks waiting for the encoder thread; live, a block "
	  "past it is dropped and counted lost", NULL,
	  64 << 10, INT64_C(1) << 30 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static const struct pipe_param symbolizer_table[] = {
	{ "demangle", PIPE_PARAM_BOOL, 0, "on",
	  "demangle C++ and Rust names in this sink's symbols", NULL, 0, 0 },
	{ "debug_dir", PIPE_PARAM_STR, 0, NULL,
	  "another debug-file root, like /usr/lib/debug", NULL, 0, 0 },
	{ "debuginfod", PIPE_PARAM_BOOL, 0, "on",
	  "fetch missing debug files by build-id from the servers of "
	  "DEBUGINFOD_URLS", NULL, 0, 0 },
	{ "debuginfod_timeout", PIPE_PARAM_DURATION, 0, "30s",
	  "the longest one debug file's transfer may take", NULL, 1000000,
	  INT64_C(3600000000000) },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static const struct pipe_param record_table[] = {
	{ "queue", PIPE_PARAM_SIZE, 0, "64M",
	  "record bytes waiting for the record sinks on a live recording; "
	  "past it a batch is not given to them and is counted lost there",
	  NULL, 4 << 10, INT64_C(1) << 32 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static const struct pipe_param output_table[] = {
	{ "force", PIPE_PARAM_BOOL, 0, "off",
	  "replace an existing output file (when the run succeeds)", NULL,
	  0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static void add(const struct pipe_param **tables, const char **titles,
		uint32_t *n, const struct pipe_param *t, const char *title)
{
	tables[*n] = t;
	if (titles)
		titles[*n] = title;
	(*n)++;
}

uint32_t hostopts_tables(uint32_t kind, uint32_t flags,
			 const struct pipe_param **tables, const char **titles)
{
	uint32_t n = 0;

	if (kind == PIPE_KIND_SOURCE && (flags & PIPE_PLUGIN_BYTES))
		add(tables, titles, &n, reader_table,
		    "reader options (every byte source)");
	if (kind == PIPE_KIND_CODEC)
		add(tables, titles, &n, writer_table,
		    "writer options (every codec)");
	if (kind == PIPE_KIND_SINK && !(flags & PIPE_PLUGIN_BYTES))
		add(tables, titles, &n, record_table,
		    "record sink options (every sink that takes records)");
	if (kind == PIPE_KIND_SINK && (flags & PIPE_PLUGIN_SYMBOLS))
		add(tables, titles, &n, symbolizer_table,
		    "symbolizer options (every sink that uses symbols)");
	if (kind == PIPE_KIND_SINK && (flags & PIPE_PLUGIN_OUTPUT))
		add(tables, titles, &n, output_table,
		    "output options (every sink that writes a file)");
	return n;
}
