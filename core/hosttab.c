/*
 * hosttab.c - the host table handed to plugins (host_table), with its
 * checks of when each host call may be made: parameters, messages,
 * metadata, decoding, symbols and source lines, the command, outputs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "host.h"
#include "hostopts.h"
#include "meta.h"
#include "output.h"
#include "params.h"
#include "symbolizer.h"

/*
 * A plugin asking for a parameter its table does not declare is the
 * plugin's bug, not ours: say so once per call and answer "unset" rather
 * than trip the core's assertion.
 */
static bool arg_known(struct pipe_ctx *ctx, const char *name)
{
	if (name && args_has(ctx->args, name))
		return true;
	__atomic_fetch_add(&ctx->run->breaches, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "pipe: warning: %s asked for parameter '%s', which "
		"it does not declare\n", ctx->what, name ? name : "(null)");
	return false;
}

/*
 * A host call made where it does not belong: the instance's error says
 * which call, where, and what the rule is.  The plugin's call then fails
 * with it, or, when the plugin carries on, it is printed as a warning.
 */
static bool stage_ok(struct pipe_ctx *ctx, bool ok, const char *fn,
		     const char *rule)
{
	if (ok)
		return true;
	ctx->breach = true;
	__atomic_fetch_add(&ctx->run->breaches, 1, __ATOMIC_RELAXED);
	pipe_err_set(&ctx->err, -EINVAL, "%s called %s() %s%s%s: %s", ctx->what,
		     fn, ctx->call ? "in " : "outside its calls",
		     ctx->call ? ctx->call : "", ctx->call ? "()" : "", rule);
	return false;
}

/* Asked on every decoded sample: the first letter mostly settles it
 * without a strcmp (which was 2% of a flat report). */
static bool in_call(const struct pipe_ctx *ctx, const char *call)
{
	return ctx->call && ctx->call[0] == call[0] &&
	       !strcmp(ctx->call, call);
}

/* Record sources build the metadata in start. */
static bool may_build_meta(struct pipe_ctx *ctx, const char *fn)
{
	return stage_ok(ctx, ctx->kind == PIPE_KIND_SOURCE &&
			!(ctx->flags & PIPE_PLUGIN_BYTES) &&
			in_call(ctx, "start") && ctx->run->meta, fn,
			"the metadata is built by record sources, in start()");
}

/* Decoding needs the metadata: from start (sources) or start_sink on. */
static bool may_decode(struct pipe_ctx *ctx, const char *fn)
{
	return stage_ok(ctx, ctx->run->meta && ctx->call &&
			!in_call(ctx, "open"), fn,
			"records are decoded once the metadata exists, from "
			"start() or start_sink() on");
}

/* A struct the host fills: the caller set its size (PIPE_INIT). */
static bool size_ok(struct pipe_ctx *ctx, const void *out, size_t min,
		    const char *fn)
{
	uint32_t size;

	if (!out)
		return stage_ok(ctx, false, fn, "its out argument is NULL");
	memcpy(&size, out, sizeof(size));
	return stage_ok(ctx, size >= min, fn, "out->size is too small; set "
			"it with PIPE_INIT (= sizeof the struct)");
}

/*
 * Copy a struct the host filled (`full`, host_size bytes, its size field
 * first) into the plugin's `out`, as far as both know: out->size bytes,
 * at most host_size; out->size itself is kept.
 */
static void copy_out(void *out, const void *full, size_t host_size)
{
	uint32_t size;
	size_t n;

	memcpy(&size, out, sizeof(size));
	n = size < host_size ? size : host_size;
	memcpy((char *)out + sizeof(uint32_t),
	       (const char *)full + sizeof(uint32_t), n - sizeof(uint32_t));
}

static const char *h_arg_str(struct pipe_ctx *ctx, const char *name)
{
	return arg_known(ctx, name) ? args_str(ctx->args, name) : NULL;
}

static int64_t h_arg_int(struct pipe_ctx *ctx, const char *name)
{
	return arg_known(ctx, name) ? args_int(ctx->args, name) : 0;
}

static bool h_arg_is_set(struct pipe_ctx *ctx, const char *name)
{
	return arg_known(ctx, name) && args_is_set(ctx->args, name);
}

static uint32_t h_arg_list(struct pipe_ctx *ctx, const char *name,
			   const char *const **items)
{
	if (!arg_known(ctx, name)) {
		*items = NULL;
		return 0;
	}
	return args_list(ctx->args, name, items);
}

/* printf-like: the attributes let the compiler check the forwarding */
static void h_error(struct pipe_ctx *ctx, const char *fmt, ...)
	PIPE_PRINTF(2, 3);
static void h_hint(struct pipe_ctx *ctx, const char *fmt, ...)
	PIPE_PRINTF(2, 3);
static void h_log(struct pipe_ctx *ctx, int level, const char *fmt, ...)
	PIPE_PRINTF(3, 4);

static void h_error(struct pipe_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void h_error(struct pipe_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pipe_err_setv(&ctx->err, -EINVAL, fmt, ap);
	va_end(ap);
}

static void h_hint(struct pipe_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void h_hint(struct pipe_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err.hint, sizeof(ctx->err.hint), fmt, ap);
	va_end(ap);
	pipe_err_clean(ctx->err.hint);
}

static void h_log(struct pipe_ctx *ctx, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void h_log(struct pipe_ctx *ctx, int level, const char *fmt, ...)
{
	static const char *const prefix[] = { "", "warning: ", "note: ", "" };
	char line[1024];
	va_list ap;

	if (level == PIPE_LOG_NOTE && ctx->run->quiet)
		return;
	if (level == PIPE_LOG_DEBUG && !ctx->run->verbose)
		return;
	if (level < PIPE_LOG_ERROR || level > PIPE_LOG_DEBUG)
		level = PIPE_LOG_NOTE;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pipe_err_clean(line);
	fprintf(stderr, "pipe: %s%s\n", prefix[level], line);
}

static bool h_interrupted(struct pipe_ctx *ctx)
{
	return ctx->run->interrupted;
}

static bool h_quiet(struct pipe_ctx *ctx)
{
	return ctx->run->quiet;
}

static bool h_tty(struct pipe_ctx *ctx)
{
	return ctx->run->tty;
}

static const struct pipe_meta *h_meta(struct pipe_ctx *ctx)
{
	return ctx->run->meta ? meta_view(ctx->run->meta) : NULL;
}

static const char *h_meta_prop(struct pipe_ctx *ctx, const char *key)
{
	return ctx->run->meta ? meta_prop(ctx->run->meta, key) : NULL;
}

static int h_meta_add_event(struct pipe_ctx *ctx,
			    const struct perf_event_attr *attr,
			    const char *name, const uint64_t *ids,
			    uint32_t nr_ids)
{
	if (!may_build_meta(ctx, "meta_add_event"))
		return -EINVAL;
	return meta_add_event(ctx->run->meta, attr, name, ids, nr_ids,
			      &ctx->err);
}

static int h_meta_set_streams(struct pipe_ctx *ctx, uint32_t nr,
			      const int32_t *cpus)
{
	if (!may_build_meta(ctx, "meta_set_streams"))
		return -EINVAL;
	return meta_set_streams(ctx->run->meta, nr, cpus, &ctx->err);
}

static int h_meta_set_prop(struct pipe_ctx *ctx, const char *key,
			   const char *value)
{
	if (!may_build_meta(ctx, "meta_set_prop"))
		return -EINVAL;
	return meta_set_prop(ctx->run->meta, key, value, &ctx->err);
}

static uint32_t h_event_of_id(struct pipe_ctx *ctx, uint64_t id)
{
	if (!may_decode(ctx, "event_of_id"))
		return PIPE_EVENT_NONE;
	return meta_event_of_id(ctx->run->meta, id);
}

static int h_decode_sample(struct pipe_ctx *ctx, const struct pipe_record *rec,
			   struct pipe_sample *out)
{
	struct pipe_sample full, *to = &full;
	int ret;

	if (!size_ok(ctx, out, offsetof(struct pipe_sample, sample_type),
		     "decode_sample") || !may_decode(ctx, "decode_sample") ||
	    !stage_ok(ctx, rec && rec->hdr, "decode_sample",
		      "its record is NULL"))
		return -EINVAL;
	/* a plugin built with this header takes the sample as it is
	 * decoded; only one of another minor needs the copy that fits */
	if (out->size == sizeof(full))
		to = out;
	/* symbolizing sinks see the state of the sample's time: they get
	 * the stacks of callchain=dwarf recordings unwound */
	if (ctx->symbols && ctx->run->sym)
		ret = symbolizer_decode(ctx->run->sym, ctx->run->meta, rec,
					to);
	else
		ret = decode_sample(ctx->run->meta, rec, to);
	if (to == &full)
		copy_out(out, &full, sizeof(full));
	return ret;
}

static int h_decode_sample_id(struct pipe_ctx *ctx,
			      const struct pipe_record *rec,
			      struct pipe_sample_id *out)
{
	struct pipe_sample_id full;
	int ret;

	if (!size_ok(ctx, out, offsetof(struct pipe_sample_id, pid),
		     "decode_sample_id") ||
	    !may_decode(ctx, "decode_sample_id") ||
	    !stage_ok(ctx, rec && rec->hdr, "decode_sample_id",
		      "its record is NULL"))
		return -EINVAL;
	ret = decode_sample_id(ctx->run->meta, rec, &full);
	copy_out(out, &full, sizeof(full));
	return ret;
}

static char *const *h_command(struct pipe_ctx *ctx)
{
	return ctx->run->command;
}

static void h_command_exited(struct pipe_ctx *ctx, int wait_status)
{
	if (!stage_ok(ctx, ctx->kind == PIPE_KIND_SOURCE &&
		      (ctx->flags & PIPE_PLUGIN_LIVE), "command_exited",
		      "it is for live sources (PIPE_PLUGIN_LIVE)"))
		return;
	ctx->run->command_status = wait_status;
}

static void h_command_started(struct pipe_ctx *ctx, int pid)
{
	if (!stage_ok(ctx, ctx->kind == PIPE_KIND_SOURCE &&
		      (ctx->flags & PIPE_PLUGIN_LIVE), "command_started",
		      "it is for live sources (PIPE_PLUGIN_LIVE)"))
		return;
	crash_set_command(pid);
}

/* The symbolizer is for sinks that declared it, once it exists. */
static bool may_symbolize(struct pipe_ctx *ctx, const char *fn)
{
	if (!stage_ok(ctx, ctx->kind == PIPE_KIND_SINK &&
		      (ctx->flags & PIPE_PLUGIN_SYMBOLS), fn,
		      "it needs PIPE_PLUGIN_SYMBOLS in the descriptor's flags"))
		return false;
	return stage_ok(ctx, ctx->run->sym && ctx->call &&
			!in_call(ctx, "open"), fn,
			"the symbolizer runs from start_sink() on");
}

static int h_symbolize(struct pipe_ctx *ctx, uint32_t pid, uint64_t ip,
		       uint16_t misc, struct pipe_symbol *out)
{
	struct pipe_symbol full;
	int ret;

	if (!size_ok(ctx, out, offsetof(struct pipe_symbol, name),
		     "symbolize"))
		return -EINVAL;
	if (!may_symbolize(ctx, "symbolize")) {
		memset(&full, 0, sizeof(full));
		copy_out(out, &full, sizeof(full));
		return -EINVAL;
	}
	symbolizer_set_demangle(ctx->run->sym, ctx->demangle);
	ret = symbolizer_resolve(ctx->run->sym, pid, ip, misc, &full);
	copy_out(out, &full, sizeof(full));
	return ret;
}

static const char *h_thread_comm(struct pipe_ctx *ctx, uint32_t tid)
{
	if (!may_symbolize(ctx, "thread_comm"))
		return "[unknown]";
	return symbolizer_comm(ctx->run->sym, tid);
}

static const struct pipe_symbol *h_frame_symbol(struct pipe_ctx *ctx,
		const struct pipe_sample_view *v, uint32_t i)
{
	struct host_view *hv = &ctx->view;
	struct pipe_symbol *sym = &hv->sym;

	memset(sym, 0, sizeof(*sym));
	sym->size = sizeof(*sym);
	if (stage_ok(ctx, hv->live && v == &hv->v, "frame_symbol",
		     "it takes the view handed to sample(), during that "
		     "call") &&
	    stage_ok(ctx, i < hv->v.nr_frames, "frame_symbol",
		     "the frame index is past nr_frames")) {
		symbolizer_set_demangle(ctx->run->sym, ctx->demangle);
		symbolizer_resolve(ctx->run->sym, hv->s.pid,
				   hv->frames[i] - hv->ret[i], hv->misc[i],
				   sym);
	}
	if (!sym->name)
		sym->name = "[unknown]";
	if (!sym->dso)
		sym->dso = "[unknown]";
	if (!sym->dso_short)
		sym->dso_short = "[unknown]";
	return sym;
}

static const struct pipe_srcline *h_srcline(struct pipe_ctx *ctx,
					    uint32_t pid, uint64_t ip,
					    uint16_t misc)
{
	if (!may_symbolize(ctx, "srcline"))
		return symbolizer_srcline_none();
	symbolizer_set_demangle(ctx->run->sym, ctx->demangle);
	return symbolizer_srcline(ctx->run->sym, pid, ip, misc);
}

static const struct pipe_srcline *h_frame_srcline(struct pipe_ctx *ctx,
		const struct pipe_sample_view *v, uint32_t i)
{
	struct host_view *hv = &ctx->view;

	if (!stage_ok(ctx, hv->live && v == &hv->v, "frame_srcline",
		      "it takes the view handed to sample(), during that "
		      "call") ||
	    !stage_ok(ctx, i < hv->v.nr_frames, "frame_srcline",
		      "the frame index is past nr_frames"))
		return symbolizer_srcline_none();
	symbolizer_set_demangle(ctx->run->sym, ctx->demangle);
	return symbolizer_srcline(ctx->run->sym, hv->s.pid,
				  hv->frames[i] - hv->ret[i], hv->misc[i]);
}

static FILE *h_arg_file(struct pipe_ctx *ctx, const char *name)
{
	uint32_t i;

	for (i = 0; name && i < ctx->nr_outs; i++)
		if (ctx->out_param[i] && !strcmp(ctx->out_param[i], name))
			return output_file(ctx->outs[i]);
	stage_ok(ctx, false, "arg_file", "it takes the name of a "
		 "PIPE_PARAM_OUTPUT parameter");
	return NULL;
}

int host_output_add(struct pipe_ctx *ctx, const char *path,
		    const char *param)
{
	char hint[600]; /* the err keeps its first 255 bytes */
	int ret;

	snprintf(hint, sizeof(hint), "add force=on to overwrite it: -k "
		 "%s:%s,force=on", ctx->name, path);
	ret = output_open(&ctx->outs[ctx->nr_outs], path,
			  args_int(ctx->args, "force"), hint, ctx->run->input,
			  &ctx->err);
	if (ret < 0)
		return ret;
	ctx->out_param[ctx->nr_outs++] = param;
	return 0;
}

static int h_open_output(struct pipe_ctx *ctx, const char *path, FILE **out)
{
	int ret;

	if (!stage_ok(ctx, out != NULL, "open_output",
		      "its out argument is NULL"))
		return -EINVAL;
	*out = NULL;
	if (!stage_ok(ctx, ctx->kind == PIPE_KIND_SINK &&
		      (ctx->flags & PIPE_PLUGIN_OUTPUT), "open_output",
		      "it needs PIPE_PLUGIN_OUTPUT in the descriptor's flags") ||
	    !stage_ok(ctx, in_call(ctx, "open") || in_call(ctx, "start_sink"),
		      "open_output", "outputs are opened in open() or "
		      "start_sink()") ||
	    !stage_ok(ctx, path != NULL, "open_output", "its path is NULL") ||
	    !stage_ok(ctx, ctx->nr_outs < HOST_OUTPUTS_MAX, "open_output",
		      "a sink opens at most 8 outputs"))
		return -EINVAL;
	ret = host_output_add(ctx, path, NULL);
	if (ret < 0)
		return ret;
	*out = output_file(ctx->outs[ctx->nr_outs - 1]);
	return 0;
}

const struct pipe_host host_table = {
	.abi = PIPE_ABI,
	.size = sizeof(struct pipe_host),
	.arg_str = h_arg_str,
	.arg_int = h_arg_int,
	.arg_is_set = h_arg_is_set,
	.arg_list = h_arg_list,
	.error = h_error,
	.hint = h_hint,
	.log = h_log,
	.interrupted = h_interrupted,
	.quiet = h_quiet,
	.tty = h_tty,
	.meta = h_meta,
	.meta_prop = h_meta_prop,
	.meta_add_event = h_meta_add_event,
	.meta_set_streams = h_meta_set_streams,
	.meta_set_prop = h_meta_set_prop,
	.event_of_id = h_event_of_id,
	.decode_sample = h_decode_sample,
	.decode_sample_id = h_decode_sample_id,
	.command = h_command,
	.command_exited = h_command_exited,
	.symbolize = h_symbolize,
	.thread_comm = h_thread_comm,
	.frame_symbol = h_frame_symbol,
	.arg_file = h_arg_file,
	.open_output = h_open_output,
	.command_started = h_command_started,
	.srcline = h_srcline,
	.frame_srcline = h_frame_srcline,
};
