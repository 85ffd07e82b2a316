/*
 * sideband_sink.c - a per-record sink for the tests: one line per
 * sideband record the host decoded, to compare with the json sink's view
 * of the same records.
 */
#include <inttypes.h>

#include "pipe_plugin.h"

static const struct pipe_param sb_params[] = {
	PIPE_P_OUTPUT("output", "-", "where the lines go"),
	PIPE_P_END,
};

static int sb_sideband(void *state, const struct pipe_sideband *sb)
{
	FILE *f = sb->host->arg_file(sb->ctx, "output");

	(void)state;
	switch (sb->type) {
	case PIPE_SB_COMM:
		fprintf(f, "comm %u %u %s %s\n", sb->pid, sb->tid, sb->comm,
			sb->exec ? "true" : "false");
		break;
	case PIPE_SB_MMAP:
		fprintf(f, "mmap %u %u 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64
			" %s\n", sb->pid, sb->tid, sb->addr, sb->len, sb->pgoff,
			sb->filename);
		break;
	case PIPE_SB_FORK:
	case PIPE_SB_EXIT:
		fprintf(f, "%s %u %u %u %u\n",
			sb->type == PIPE_SB_FORK ? "fork" : "exit", sb->pid,
			sb->ppid, sb->tid, sb->ptid);
		break;
	case PIPE_SB_LOST:
		fprintf(f, "lost %" PRIu64 "\n", sb->lost);
		break;
	default:
		fprintf(f, "%s\n", sb->type == PIPE_SB_THROTTLE ? "throttle" :
			"unthrottle");
		break;
	}
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "sideband",
	.summary = "print the sideband records the host decodes",
	.params = sb_params,
	.sideband = sb_sideband
);
