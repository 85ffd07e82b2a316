/*
 * host.c - the host table handed to plugins, and opening plugin
 * instances from a "NAME:ARGS" spec (see host.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "decode.h"
#include "host.h"
#include "loader.h"
#include "meta.h"
#include "params.h"
#include "symbolizer.h"

/*
 * A plugin asking for a parameter its table does not declare is the
 * plugin's bug, not ours: say so once per call and answer "unset" rather
 * than trip the core's assertion.
 */
static bool arg_known(struct pipe_ctx *ctx, const char *name)
{
	if (args_has(ctx->args, name))
		return true;
	fprintf(stderr, "pipe: warning: %s asked for parameter '%s', which "
		"it does not declare\n", ctx->what, name);
	return false;
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
	return meta_add_event(ctx->run->meta, attr, name, ids, nr_ids,
			      &ctx->err);
}

static int h_meta_set_streams(struct pipe_ctx *ctx, uint32_t nr,
			      const int32_t *cpus)
{
	return meta_set_streams(ctx->run->meta, nr, cpus, &ctx->err);
}

static int h_meta_set_prop(struct pipe_ctx *ctx, const char *key,
			   const char *value)
{
	return meta_set_prop(ctx->run->meta, key, value, &ctx->err);
}

static uint32_t h_event_of_id(struct pipe_ctx *ctx, uint64_t id)
{
	return meta_event_of_id(ctx->run->meta, id);
}

static int h_decode_sample(struct pipe_ctx *ctx, const struct pipe_record *rec,
			   struct pipe_sample *out)
{
	/* symbolizing sinks see the state of the sample's time: they get
	 * the stacks of callchain=dwarf recordings unwound */
	if (ctx->symbols && ctx->run->sym)
		return symbolizer_decode(ctx->run->sym, ctx->run->meta, rec,
					 out);
	return decode_sample(ctx->run->meta, rec, out);
}

static int h_decode_sample_id(struct pipe_ctx *ctx,
			      const struct pipe_record *rec,
			      struct pipe_sample_id *out)
{
	return decode_sample_id(ctx->run->meta, rec, out);
}

static char *const *h_command(struct pipe_ctx *ctx)
{
	return ctx->run->command;
}

static void h_command_exited(struct pipe_ctx *ctx, int wait_status)
{
	ctx->run->command_status = wait_status;
}

static int h_symbolize(struct pipe_ctx *ctx, uint32_t pid, uint64_t ip,
		       uint16_t misc, struct pipe_symbol *out)
{
	if (!ctx->run->sym) {
		memset(out, 0, sizeof(*out));
		return pipe_err_set(&ctx->err, -EINVAL,
				    "%s asked for symbols without declaring "
				    "PIPE_PLUGIN_SYMBOLS", ctx->what);
	}
	return symbolizer_resolve(ctx->run->sym, pid, ip, misc, out);
}

static const char *h_thread_comm(struct pipe_ctx *ctx, uint32_t tid)
{
	if (!ctx->run->sym)
		return "[unknown]";
	return symbolizer_comm(ctx->run->sym, tid);
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
};

int inst_fail(struct inst *in, int ret, struct pipe_err *err)
{
	if (in->ctx.err.msg[0]) {
		*err = in->ctx.err;
		return ret;
	}
	return pipe_err_set(err, ret, "%s failed: %s", in->ctx.what,
			    strerror(ret < 0 ? -ret : EIO));
}

int inst_open_loaded(struct inst **out, struct loaded *lp, const char *text,
		     struct host_run *run, struct pipe_err *err)
{
	const struct pipe_param *tables[1] = { lp->plugin->params };
	struct inst *in = calloc(1, sizeof(*in));
	int ret;

	if (!in)
		return -ENOMEM;
	in->lp = lp;
	in->borrowed_lp = true;
	in->p = lp->plugin;
	in->ctx.run = run;
	snprintf(in->ctx.what, sizeof(in->ctx.what), "%s '%s'",
		 loader_kind_name(in->p->kind), in->p->name);
	ret = params_parse(&in->ctx.args, in->ctx.what, tables, 1, NULL, text,
			   err);
	if (ret < 0)
		goto out_free;
	ret = in->p->open(&host_table, &in->ctx, &in->state);
	if (ret < 0) {
		ret = inst_fail(in, ret, err);
		goto out_free;
	}
	*out = in;
	return 0;
out_free:
	args_free(in->ctx.args);
	free(in);
	return ret;
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
	      const char *spec, const struct pipe_param *extra,
	      struct host_run *run, struct pipe_err *err)
{
	const struct pipe_param *tables[2];
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
	if (ret < 0)
		goto out_free;
	in->p = in->lp->plugin;
	in->ctx.run = run;
	in->ctx.symbols = kind == PIPE_KIND_SINK &&
			  (in->p->flags & PIPE_PLUGIN_SYMBOLS);
	snprintf(in->ctx.what, sizeof(in->ctx.what), "%s '%s'",
		 loader_kind_name(kind), in->p->name);
	tables[0] = in->p->params;
	tables[1] = extra;
	ret = params_parse(&in->ctx.args, in->ctx.what, tables, extra ? 2 : 1,
			   defaults, rest, err);
	if (ret < 0)
		goto out_free;
	ret = in->p->open(&host_table, &in->ctx, &in->state);
	if (ret < 0) {
		ret = inst_fail(in, ret, err);
		goto out_free;
	}
	free(name);
	*out = in;
	return 0;
out_free:
	args_free(in->ctx.args);
	loader_close(in->lp);
	free(in);
	free(name);
	return ret;
}

bool inst_has_param(const struct inst *in, const char *name)
{
	const struct pipe_param *t;

	for (t = in->p->params; t && t->name; t++)
		if (!strcmp(t->name, name))
			return true;
	return false;
}

void inst_free(struct inst *in)
{
	if (!in)
		return;
	if (in->state && in->p->close)
		in->p->close(in->state);
	args_free(in->ctx.args);
	if (!in->borrowed_lp)
		loader_close(in->lp);
	free(in);
}
