/*
 * hostopts.h - the options the host parses for plugins, beside each
 * plugin's own table: reader options of byte sources (strict=, start=,
 * threads=, ...), writer options of codecs (block=, dict=, ...) and
 * the queue of record sinks (queue=), symbolizer options of sinks that
 * use symbols (demangle=, debug_dir=), and the output option of sinks
 * that write a file (force=).
 * The core reads these, and only these, by name.
 */
#ifndef PIPE_HOSTOPTS_H
#define PIPE_HOSTOPTS_H

#include <stdint.h>

#include "pipe_plugin.h"

#define HOSTOPTS_MAX 3 /* tables for one plugin, at most */

/*
 * The host tables for a plugin of this kind and flags (NULL-terminated,
 * static) into tables[HOSTOPTS_MAX], and their headings for `pipe help`
 * ("reader options (every byte source)") into titles[HOSTOPTS_MAX] (may
 * be NULL).  Returns how many.
 */
uint32_t hostopts_tables(uint32_t kind, uint32_t flags,
			 const struct pipe_param **tables, const char **titles);

#endif
