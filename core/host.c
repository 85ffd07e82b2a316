/*
 * host.c - the host table handed to plugins, with its checks of when each
 * host call may be made, opening plugin instances from a "NAME:ARGS"
 * spec, and the wrappers through which the core calls plugins (host.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "decode.h"
#include "host.h"
#include "hostopts.h"
#include "loader.h"
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

static bool in_call(const struct pipe_ctx *ctx, const char *call)
{
	return ctx->call && !strcmp(ctx->call, call);
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
	struct pipe_sample full;
	int ret;

	if (!size_ok(ctx, out, offsetof(struct pipe_sample, sample_type),
		     "decode_sample") || !may_decode(ctx, "decode_sample") ||
	    !stage_ok(ctx, rec && rec->hdr, "decode_sample",
		      "its record is NULL"))
		return -EINVAL;
	/* symbolizing sinks see the state of the sample's time: they get
	 * the stacks of callchain=dwarf recordings unwound */
	if (ctx->symbols && ctx->run->sym)
		ret = symbolizer_decode(ctx->run->sym, ctx->run->meta, rec,
					&full);
	else
		ret = decode_sample(ctx->run->meta, rec, &full);
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

/* Open an output under the rule; param names a PIPE_PARAM_OUTPUT
 * parameter, NULL for open_output. */
static int output_add(struct pipe_ctx *ctx, const char *path,
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
	ret = output_add(ctx, path, NULL);
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

int inst_fail(struct inst *in, int ret, struct pipe_err *err)
{
	if (in->ctx.err.msg[0]) {
		*err = in->ctx.err;
		return ret;
	}
	return pipe_err_set(err, ret, "%s failed in %s(): %s", in->ctx.what,
			    in->ctx.call ? in->ctx.call : "?",
			    strerror(ret < 0 ? -ret : EIO));
}

const char *inst_subject(const struct inst *in)
{
	return args_positional(in->ctx.args);
}

/* ---- calls ------------------------------------------------------------- */

struct crash_site host_enter(struct pipe_ctx *ctx, const char *call)
{
	if (!ctx)
		return crash_enter(NULL, NULL, NULL);
	return crash_enter(ctx->what, ctx->path, call);
}

void host_leave(struct crash_site prev)
{
	crash_leave(prev);
}

static void call_begin(struct inst *in, const char *call)
{
	in->ctx.call = call;
	in->ctx.breach = false;
	in->ctx.site = crash_enter(in->ctx.what, in->ctx.path, call);
}

/*
 * The end of a plugin call that returned ret: a failure gets its message
 * in err; a positive ret above `max_ok` breaks the contract; a refused
 * host call the plugin shrugged off is printed as a warning.
 */
static int call_end(struct inst *in, int ret, int max_ok, struct pipe_err *err)
{
	crash_leave(in->ctx.site);
	if (ret > max_ok) {
		ret = pipe_err_set(err, -EPROTO, "%s returned %d from %s(); "
				   "it returns 0 or a negative errno",
				   in->ctx.what, ret, in->ctx.call);
	} else if (ret < 0) {
		ret = inst_fail(in, ret, err);
	}
	if (ret < 0) {
		in->failed = true;
	} else if (in->ctx.breach) {
		/* once: a per-record breach must not flood the terminal */
		if (!in->ctx.warned)
			fprintf(stderr, "pipe: warning: %s\n", in->ctx.err.msg);
		in->ctx.warned = true;
		pipe_err_clear(&in->ctx.err);
	}
	in->ctx.breach = false;
	in->ctx.call = NULL;
	return ret;
}

int inst_start(struct inst *in, struct pipe_err *err)
{
	call_begin(in, "start");
	return call_end(in, in->p->start(in->state), 0, err);
}

int inst_read(struct inst *in, struct pipe_batch *out, struct pipe_err *err)
{
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	call_begin(in, "read");
	return call_end(in, in->p->read(in->state, out), PIPE_EOF, err);
}

int inst_fds(struct inst *in, int *fds, uint32_t cap, struct pipe_err *err)
{
	int n;

	if (!in->p->fds)
		return 0;
	call_begin(in, "fds");
	n = in->p->fds(in->state, fds, cap);
	if (n > (int)cap)
		n = pipe_err_set(err, -EPROTO, "%s returned %d from fds(), "
				 "more than the %u it was given room for",
				 in->ctx.what, n, cap);
	return call_end(in, n, (int)cap, err);
}

int inst_stop(struct inst *in, int signo, struct pipe_err *err)
{
	if (!in->p->stop)
		return 0;
	call_begin(in, "stop");
	return call_end(in, in->p->stop(in->state, signo), 0, err);
}

int inst_byte_size(struct inst *in, uint64_t *size)
{
	struct pipe_err ignored;
	int ret;

	if (!in->p->byte_size)
		return -ESPIPE;
	call_begin(in, "byte_size");
	ret = call_end(in, in->p->byte_size(in->state, size), 0, &ignored);
	pipe_err_clear(&in->ctx.err);
	return ret;
}

int inst_start_sink(struct inst *in, struct pipe_err *err)
{
	int ret = 0;

	if (in->p->start_sink) {
		call_begin(in, "start_sink");
		ret = call_end(in, in->p->start_sink(in->state), 0, err);
	}
	in->started = ret == 0;
	return ret;
}

int inst_consume(struct inst *in, const struct pipe_batch *b,
		 struct pipe_err *err)
{
	call_begin(in, "consume");
	return call_end(in, in->p->consume(in->state, b), 0, err);
}

int inst_write(struct inst *in, const void *buf, size_t len,
	       struct pipe_err *err)
{
	call_begin(in, "write");
	return call_end(in, in->p->write(in->state, buf, len), 0, err);
}

int inst_flush(struct inst *in, struct pipe_err *err)
{
	if (!in->p->flush)
		return 0;
	call_begin(in, "flush");
	return call_end(in, in->p->flush(in->state), 0, err);
}

int inst_finish(struct inst *in, struct pipe_err *err)
{
	if (!in->p->finish)
		return 0;
	call_begin(in, "finish");
	return call_end(in, in->p->finish(in->state), 0, err);
}

/* Room for n frames in the view's arrays. */
static int view_reserve(struct host_view *hv, uint64_t n)
{
	uint64_t *f;
	uint16_t *m;
	uint8_t *r;

	if (n <= hv->cap)
		return 0;
	if (n > UINT32_MAX / 2)
		return -E2BIG;
	f = realloc(hv->frames, n * sizeof(*f));
	if (f)
		hv->frames = f;
	m = realloc(hv->misc, n * sizeof(*m));
	if (m)
		hv->misc = m;
	r = realloc(hv->ret, n * sizeof(*r));
	if (r)
		hv->ret = r;
	if (!f || !m || !r)
		return -ENOMEM;
	hv->cap = (uint32_t)n;
	return 0;
}

/*
 * The frames of a sample, leaf first: the callchain without its context
 * markers, each entry with the cpumode of its context; the first address
 * of a context is where it was interrupted, the others are return
 * addresses.  Without a callchain, the ip alone.
 */
static int view_frames(struct host_view *hv)
{
	const struct pipe_sample *s = &hv->s;
	uint16_t misc = s->misc;
	uint32_t nr = 0;
	bool seen_ip = false;
	uint64_t i;
	int ret;

	ret = view_reserve(hv, s->nr_callchain + 1);
	if (ret < 0)
		return ret;
	for (i = 0; i < s->nr_callchain; i++) {
		uint64_t a = s->callchain[i];

		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			if (a == (uint64_t)PERF_CONTEXT_KERNEL)
				misc = PERF_RECORD_MISC_KERNEL;
			else if (a == (uint64_t)PERF_CONTEXT_USER)
				misc = PERF_RECORD_MISC_USER;
			else
				misc = PERF_RECORD_MISC_CPUMODE_UNKNOWN;
			seen_ip = false;
			continue;
		}
		hv->frames[nr] = a;
		hv->misc[nr] = misc;
		hv->ret[nr] = seen_ip && a > 0;
		nr++;
		seen_ip = true;
	}
	if (nr == 0) {
		hv->frames[0] = s->ip;
		hv->misc[0] = s->misc;
		hv->ret[0] = 0;
		nr = 1;
	}
	hv->v.frames = hv->frames;
	hv->v.frame_misc = hv->misc;
	hv->v.nr_frames = nr;
	return 0;
}

/* Build the view of one sample; -EINVAL when it does not decode. */
static int view_build(struct inst *in, const struct pipe_record *rec)
{
	struct host_view *hv = &in->ctx.view;
	const struct pipe_meta_event *e;
	const struct pipe_meta *m;

	/* as decode_sample gives symbolizing sinks: callchain=dwarf stacks
	 * unwound in the state of the sample's time */
	if ((in->ctx.run->sym ?
	     symbolizer_decode(in->ctx.run->sym, in->ctx.run->meta, rec,
			       &hv->s) :
	     decode_sample(in->ctx.run->meta, rec, &hv->s)) < 0)
		return -EINVAL;
	memset(&hv->v, 0, sizeof(hv->v));
	hv->v.size = sizeof(hv->v);
	hv->v.host = &host_table;
	hv->v.ctx = &in->ctx;
	hv->v.event = hv->s.event;
	hv->v.rec = rec;
	hv->v.sample = &hv->s;
	m = meta_view(in->ctx.run->meta);
	e = m && hv->s.event < m->nr_events ?
		pipe_meta_event(m, hv->s.event) : NULL;
	hv->v.event_name = e && e->name ? e->name : "";
	hv->v.comm = in->ctx.run->sym ?
		symbolizer_comm(in->ctx.run->sym, hv->s.tid) : "[unknown]";
	return view_frames(hv);
}

int inst_records(struct inst *in, const struct pipe_batch *b,
		 struct pipe_err *err)
{
	struct pipe_sideband sb;
	size_t i;
	int ret;

	for (i = 0; i < b->nr; i++) {
		const struct pipe_record *r = &b->recs[i];

		if (r->hdr->type == PERF_RECORD_SAMPLE) {
			if (!in->p->sample)
				continue;
			ret = view_build(in, r);
			if (ret == -EINVAL)
				continue; /* malformed: what consume sinks skip */
			if (ret < 0)
				return pipe_err_set(err, ret, "cannot build a "
						    "sample view for %s: %s",
						    in->ctx.what,
						    strerror(-ret));
			call_begin(in, "sample");
			in->ctx.view.live = true;
			ret = in->p->sample(in->state, &in->ctx.view.v);
			in->ctx.view.live = false;
			ret = call_end(in, ret, 0, err);
		} else {
			if (!in->p->sideband || decode_sideband(r, &sb) < 0)
				continue;
			sb.host = &host_table;
			sb.ctx = &in->ctx;
			call_begin(in, "sideband");
			ret = call_end(in, in->p->sideband(in->state, &sb), 0,
				       err);
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

int inst_outputs_end(struct inst *in, bool ok, struct pipe_err *err)
{
	uint32_t i;
	int ret, first = 0;

	for (i = 0; i < in->ctx.nr_outs; i++) {
		if (!ok) {
			output_abort(in->ctx.outs[i]);
			continue;
		}
		ret = output_commit(in->ctx.outs[i], err);
		if (ret < 0 && !first)
			first = ret;
	}
	in->ctx.nr_outs = 0;
	return first;
}

int inst_train(struct inst *in, const void *samples, const size_t *sizes,
	       uint32_t nr, void *dict, size_t cap, size_t *dict_len,
	       struct pipe_err *err)
{
	int ret;

	call_begin(in, "train");
	ret = in->p->train(in->state, samples, sizes, nr, dict, cap, dict_len);
	if (ret == 0 && *dict_len > cap)
		ret = pipe_err_set(err, -EPROTO, "%s returned a %zu-byte "
				   "dictionary from train(), more than the "
				   "%zu asked for", in->ctx.what, *dict_len,
				   cap);
	return call_end(in, ret, 0, err);
}

/* ---- opening ----------------------------------------------------------- */

/* The files of the plugin's PIPE_PARAM_OUTPUT parameters (given or with
 * a default), before its open sees them through arg_file. */
static int outputs_open(struct inst *in, struct pipe_err *err)
{
	const struct pipe_param *p;
	const char *path;
	int ret;

	for (p = in->p->params; p && p->name; p++) {
		if (p->type != PIPE_PARAM_OUTPUT)
			continue;
		path = args_str(in->ctx.args, p->name);
		if (!path)
			continue;
		if (in->ctx.nr_outs == HOST_OUTPUTS_MAX)
			return pipe_err_set(err, -EINVAL, "%s has more than %d "
					    "outputs", in->ctx.what,
					    HOST_OUTPUTS_MAX);
		ret = output_add(&in->ctx, path, p->name);
		if (ret < 0) {
			*err = in->ctx.err;
			return ret;
		}
	}
	return 0;
}

/* Parse the args (plus plugins.conf defaults) and call open. */
static int inst_init(struct inst *in, const char *name, const char *path,
		     const char *defaults, const char *text,
		     struct host_run *run, struct pipe_err *err)
{
	const struct pipe_param *tables[1 + HOSTOPTS_MAX];
	uint32_t nr;
	int ret;

	in->p = in->lp->plugin;
	in->ctx.run = run;
	in->ctx.path = in->lp->path;
	in->ctx.kind = in->p->kind;
	in->ctx.flags = in->p->flags;
	in->ctx.symbols = in->p->kind == PIPE_KIND_SINK &&
			  (in->p->flags & PIPE_PLUGIN_SYMBOLS);
	snprintf(in->ctx.name, sizeof(in->ctx.name), "%s",
		 name ? name : path ? path : in->p->name);
	snprintf(in->ctx.what, sizeof(in->ctx.what), "%s '%s'",
		 loader_kind_name(in->p->kind), name ? name : in->p->name);
	tables[0] = in->p->params;
	nr = 1 + hostopts_tables(in->p->kind, in->p->flags, tables + 1, NULL);
	ret = params_parse(&in->ctx.args, in->ctx.what, tables, nr, defaults,
			   text, err);
	if (ret < 0)
		return ret;
	if (in->ctx.flags & PIPE_PLUGIN_SYMBOLS)
		in->ctx.demangle = args_int(in->ctx.args, "demangle");
	ret = outputs_open(in, err);
	if (ret < 0)
		return ret;
	if (in->p->state_size) {
		in->alloc = calloc(1, in->p->state_size);
		if (!in->alloc)
			return pipe_err_set(err, -ENOMEM, "out of memory");
		in->state = in->alloc;
	}
	if (!in->p->open)
		return 0;
	call_begin(in, "open");
	ret = in->p->open(&host_table, &in->ctx, &in->state);
	if (ret > 0)
		/* a plugin that meant failure has freed its state: leak the
		 * rest rather than close what may not exist */
		in->state = in->alloc;
	return call_end(in, ret, 0, err);
}

int inst_open_loaded(struct inst **out, struct loaded *lp, const char *text,
		     struct host_run *run, struct pipe_err *err)
{
	struct inst *in = calloc(1, sizeof(*in));
	int ret;

	if (!in)
		return -ENOMEM;
	in->lp = lp;
	in->borrowed_lp = true;
	ret = inst_init(in, NULL, NULL, NULL, text, run, err);
	if (ret < 0) {
		in->state = NULL;
		inst_free(in);
		return ret;
	}
	*out = in;
	return 0;
}

static int resolve_plugin(struct loaded **lp, const char **defaults,
			  const struct conf *conf, uint32_t kind,
			  const char *name, struct pipe_err *err)
{
	const struct conf_entry *e;
	char names[512];

	*defaults = NULL;
	if (strchr(name, '/'))
		return loader_open(lp, name, kind, err);
	e = conf_find(conf, kind, name);
	if (!e) {
		conf_names(conf, kind, names, sizeof(names));
		pipe_err_set(err, -ENOENT, "unknown %s '%s'",
			     loader_kind_name(kind), name);
		if (strpbrk(name, ",="))
			pipe_err_hint(err, "parameters follow a ':', as in '%.*s:%s'",
				      (int)strcspn(name, ",="), name,
				      name + strcspn(name, ",=") + 1);
		else
			pipe_err_hint(err, "available %ss: %s",
				      loader_kind_name(kind),
				      names[0] ? names : "(none)");
		return -ENOENT;
	}
	*defaults = e->args;
	return loader_open(lp, e->path, kind, err);
}

int inst_open(struct inst **out, const struct conf *conf, uint32_t kind,
	      const char *spec, struct host_run *run, struct pipe_err *err)
{
	const char *rest, *defaults;
	struct inst *in;
	char *name;
	int ret;

	ret = params_split(spec, &name, &rest, err);
	if (ret < 0)
		return ret;
	in = calloc(1, sizeof(*in));
	if (!in) {
		free(name);
		return -ENOMEM;
	}
	ret = resolve_plugin(&in->lp, &defaults, conf, kind, name, err);
	if (ret == 0)
		ret = inst_init(in, strchr(name, '/') ? NULL : name,
				strchr(name, '/') ? name : NULL, defaults, rest,
				run, err);
	free(name);
	if (ret < 0) {
		in->state = NULL;
		inst_free(in);
		return ret;
	}
	*out = in;
	return 0;
}

void inst_free(struct inst *in)
{
	if (!in)
		return;
	if (in->state && in->p->close) {
		call_begin(in, "close");
		in->p->close(in->state);
		crash_leave(in->ctx.site);
		in->ctx.call = NULL;
	}
	free(in->alloc);
	inst_outputs_end(in, false, NULL);
	free(in->ctx.view.frames);
	free(in->ctx.view.misc);
	free(in->ctx.view.ret);
	args_free(in->ctx.args);
	if (!in->borrowed_lp)
		loader_close(in->lp);
	free(in);
}
