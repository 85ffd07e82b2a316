/*
 * sink_report.c - the `report` record sink: a table like
 * `perf report --stdio --no-children` (or --children), one per event,
 * with optional call graphs, CSV or folded stacks for flamegraph.pl.
 * This file holds the plugin: its parameters, open, start and close
 * (report.h lists the others).
 *
 * Memory is bounded by distinct symbols and callchains, not by samples:
 * each distinct (pid, address) is resolved once through a small cache,
 * samples add into a hash of rows keyed by resolved identities, and
 * callchains (when children, graphs or folded output need them) into a
 * hash of distinct chains from which graphs and children are computed at
 * the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

const char *const key_names[NR_KEYS] = { "comm", "pid", "dso", "sym",
						"cpu", "srcline" };

static const struct pipe_param report_params[] = {
	{ "sort", PIPE_PARAM_LIST, 0, "comm+dso+sym",
	  "row keys, from comm, pid, dso, sym, cpu, srcline", NULL, 0, 0 },
	{ "percent_limit", PIPE_PARAM_STR, 0, "0",
	  "hide rows under this overhead percentage", NULL, 0, 0 },
	{ "top", PIPE_PARAM_INT, 0, "0",
	  "show at most this many rows per event (0: all)", NULL, 0,
	  1000000000 },
	{ "comm", PIPE_PARAM_LIST, 0, NULL,
	  "only samples of these commands", NULL, 0, 0 },
	{ "pid", PIPE_PARAM_LIST, 0, NULL,
	  "only samples of these process ids", NULL, 0, 0 },
	{ "dso", PIPE_PARAM_LIST, 0, NULL,
	  "only samples in these binaries (base or full name)", NULL, 0, 0 },
	{ "sym", PIPE_PARAM_LIST, 0, NULL,
	  "only samples in these symbols", NULL, 0, 0 },
	{ "children", PIPE_PARAM_BOOL, 0, "off",
	  "add callers' share from callchains (perf --children)", NULL, 0,
	  0 },
	{ "graph", PIPE_PARAM_ENUM, 0, "none",
	  "call graph under each row", "caller|callee|none", 0, 0 },
	{ "inline", PIPE_PARAM_BOOL, 0, "off",
	  "show inlined functions in graphs and folded stacks (DWARF)",
	  NULL, 0, 0 },
	{ "format", PIPE_PARAM_ENUM, 0, "text",
	  "output format (folded: stacks for flamegraph.pl)",
	  "text|csv|folded", 0, 0 },
	{ "output", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL, "-",
	  "output file (-: standard output)", NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

/* ---- setup -------------------------------------------------------------- */

static int parse_keys(struct report *r)
{
	const char *const *items;
	uint32_t n = r->host->arg_list(r->ctx, "sort", &items), i, k;

	if (n == 0 || n > MAX_KEYS) {
		r->host->error(r->ctx, "bad sort '%s': give 1 to %d keys",
			       r->host->arg_str(r->ctx, "sort"), MAX_KEYS);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < NR_KEYS; k++)
			if (strcmp(items[i], key_names[k]) == 0)
				break;
		if (k == NR_KEYS || r->key_on[k]) {
			r->host->error(r->ctx, "%s sort key '%s'",
				       k == NR_KEYS ? "unknown" : "repeated",
				       items[i]);
			r->host->hint(r->ctx,
				      "sort keys: comm, pid, dso, sym, cpu, "
				      "srcline, joined with '+'");
			return -EINVAL;
		}
		r->keys[r->nr_keys++] = k;
		r->key_on[k] = true;
	}
	return 0;
}

static int parse_filters(struct report *r)
{
	const char *const *pids;
	uint32_t i;
	char *end;

	r->nr_f_comm = r->host->arg_list(r->ctx, "comm", &r->f_comm);
	r->nr_f_dso = r->host->arg_list(r->ctx, "dso", &r->f_dso);
	r->nr_f_sym = r->host->arg_list(r->ctx, "sym", &r->f_sym);
	r->nr_f_pid = r->host->arg_list(r->ctx, "pid", &pids);
	if (r->nr_f_pid == 0)
		return 0;
	r->f_pid = calloc(r->nr_f_pid, sizeof(*r->f_pid));
	if (!r->f_pid)
		return -ENOMEM;
	for (i = 0; i < r->nr_f_pid; i++) {
		unsigned long v;

		errno = 0;
		v = strtoul(pids[i], &end, 10);
		if (errno || end == pids[i] || *end || v > UINT32_MAX) {
			r->host->error(r->ctx, "bad pid '%s': not a process id",
				       pids[i]);
			return -EINVAL;
		}
		r->f_pid[i] = (uint32_t)v;
	}
	return 0;
}

static void report_close(void *state)
{
	struct report *r = state;
	uint32_t i;

	free(r->strs.items);
	itab_free(&r->strs_h);
	free(r->syms.items);
	itab_free(&r->syms_h);
	free(r->rows.items);
	itab_free(&r->rows_h);
	free(r->chains.items);
	itab_free(&r->chains_h);
	free(r->pool.items);
	free(r->nodes.items);
	free(r->occ);
	free(r->walks);
	addrcache_free(&r->rcache);
	addrcache_free(&r->ccache);
	addrcache_free(&r->scache);
	for (i = 0; i < r->owned.nr; i++)
		free(*(char **)vec_at(&r->owned, i));
	free(r->owned.items);
	free(r->totals);
	free(r->f_pid);
}

static int report_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		       void **state)
{
	struct report *r = *state; /* zeroed by the host (state_size) */
	const char *limit;
	char *end;
	int ret;

	r->host = host;
	r->ctx = ctx;
	r->sample.size = sizeof(r->sample); /* the rest zero (state_size) */
	r->strs.size = sizeof(struct str);
	r->syms.size = sizeof(struct sym);
	r->rows.size = sizeof(struct row);
	r->chains.size = sizeof(struct chain);
	r->pool.size = sizeof(uint32_t);
	r->nodes.size = sizeof(struct node);
	r->owned.size = sizeof(char *);
	ret = parse_keys(r);
	if (ret == 0)
		ret = parse_filters(r);
	if (ret < 0)
		goto fail;
	limit = host->arg_str(ctx, "percent_limit");
	errno = 0;
	r->percent_limit = strtod(limit, &end);
	if (errno || end == limit || *end || r->percent_limit < 0 ||
	    r->percent_limit > 100) {
		host->error(ctx, "bad percent_limit '%s': give a number from "
			    "0 to 100", limit);
		ret = -EINVAL;
		goto fail;
	}
	r->top = host->arg_int(ctx, "top");
	r->children = host->arg_int(ctx, "children");
	r->inline_on = host->arg_int(ctx, "inline");
	if ((r->inline_on || r->key_on[KEY_SRCLINE]) &&
	    !PIPE_HOST_HAS(host, srcline)) {
		host->error(ctx, "this pipe gives no source lines (ABI %u.%u)",
			    host->abi >> 16, host->abi & 0xffff);
		ret = -ENOTSUP;
		goto fail;
	}
	if (r->key_on[KEY_SRCLINE] && r->children) {
		host->error(ctx, "sort key 'srcline' works without "
			    "children=on");
		ret = -EINVAL;
		goto fail;
	}
	r->graph = (enum graph)host->arg_int(ctx, "graph");
	r->format = (enum format)host->arg_int(ctx, "format");
	r->output = host->arg_str(ctx, "output");
	r->need_chains = r->children || r->format == FORMAT_FOLDED ||
			 (r->graph != GRAPH_NONE && r->format == FORMAT_TEXT);
	ret = addrcache_init(&r->rcache, RCACHE_BITS, sizeof(uint32_t));
	if (ret == 0)
		ret = addrcache_init(&r->ccache, CCACHE_BITS, sizeof(uint32_t));
	if (ret == 0 && r->key_on[KEY_SRCLINE])
		ret = addrcache_init(&r->scache, SCACHE_BITS,
				     sizeof(uint32_t));
	if (ret < 0) {
		host->error(ctx, "cannot open the report's caches: %s",
			    strerror(-ret));
		goto fail;
	}
	ret = host->open_output(ctx, r->output, &r->out);
	if (ret < 0)
		goto fail;
	return 0;
fail:
	report_close(r);
	return ret;
}

static int report_start(void *state)
{
	struct report *r = state;
	const struct pipe_meta *m = r->host->meta(r->ctx);

	r->nr_events = m ? m->nr_events : 0;
	/* one more slot for samples of no known event */
	r->totals = calloc((size_t)r->nr_events + 1, sizeof(*r->totals));
	if (!r->totals) {
		r->host->error(r->ctx, "cannot start the report: %s",
			       strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

PIPE_PLUGIN_SINK(
	.flags = PIPE_PLUGIN_SYMBOLS | PIPE_PLUGIN_OUTPUT,
	.name = "report",
	.summary = "where the time went: a perf-report table, graphs, CSV, "
		   "folded stacks",
	.version = "1",
	.params = report_params,
	.state_size = sizeof(struct report),
	.open = report_open,
	.close = report_close,
	.start_sink = report_start,
	.consume = report_consume,
	.finish = report_finish
);
