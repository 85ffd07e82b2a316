/*
 * hostopts.h - the options the host parses for plugins, beside each
 * plugin's own table: reader options of byte sources (strict=, start=,
 * threads=, ...), writer options of codecs (block=, dict=, ...) and
 * symbolizer options of sinks that use symbols (demangle=, debug_dir=).
 * The core reads these, and only these, by name.
 */
#ifndef PIPE_HOSTOPTS_H
#define PIPE_HOSTOPTS_H

#include <stdint.h>

#include "pipe_plugin.h"

/*
 * The host table for a plugin of this kind and flags (NULL-terminated,
 * static), or NULL when the host parses nothing for it.  *title (may be
 * NULL) is set to its heading for `pipe help`, as "reader options (every
 * byte source)".
 */
const struct pipe_param *hostopts_table(uint32_t kind, uint32_t flags,
					const char **title);

#endif
