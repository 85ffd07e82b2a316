/*
 * host.c - plugin instances: opening them from a "NAME:ARGS" spec, and
 * the wrappers through which the core calls plugins (host.h), with the
 * sample views handed to per-sample sinks.  hosttab.c holds the table
 * plugins call back through.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "decode.h"
#include "frames.h"
#include "grow.h"
#include "host.h"
#include "hostopts.h"
#include "loader.h"
#include "meta.h"
#include "output.h"
#include "params.h"
#include "symbolizer.h"

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
	int ret;

	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	call_begin(in, "read");
	ret = in->p->read(in->state, out);
	/* nothing to read yet, a live source's every sleep: no failure,
	 * so no message formatted for it */
	if (ret == -EAGAIN && !in->ctx.breach) {
		crash_leave(in->ctx.site);
		in->ctx.call = NULL;
		return ret;
	}
	return call_end(in, ret, PIPE_EOF, err);
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

#define VIEW_FIRST 128           /* frames: the first room */
#define VIEW_MAX (UINT32_MAX / 2) /* frames of one sample */

/*
 * Room for n frames in the view's arrays, the three doubling together
 * (grow.h); 0, -E2BIG past VIEW_MAX or -ENOMEM (hv->cap unchanged: an
 * array grown before the failure is only bigger than it says).  The slow
 * path of view_reserve.
 */
static int view_grow(struct host_view *hv, uint64_t n)
{
	size_t cap_f = hv->cap, cap_m = hv->cap, cap_r = hv->cap;
	int ret;

	if (n > VIEW_MAX)
		return -E2BIG;
	ret = grow_array(&hv->frames, &cap_f, n, sizeof(*hv->frames),
			 VIEW_FIRST, VIEW_MAX);
	if (ret == 0)
		ret = grow_array(&hv->misc, &cap_m, n, sizeof(*hv->misc),
				 VIEW_FIRST, VIEW_MAX);
	if (ret == 0)
		ret = grow_array(&hv->ret, &cap_r, n, sizeof(*hv->ret),
				 VIEW_FIRST, VIEW_MAX);
	if (ret < 0)
		return ret;
	hv->cap = (uint32_t)cap_f;
	return 0;
}

/* Room for n frames in the view's arrays: view_grow's returns. */
static int view_reserve(struct host_view *hv, uint64_t n)
{
	return n <= hv->cap ? 0 : view_grow(hv, n);
}

/*
 * The frames of a sample, leaf first (frames.h), each with the cpumode
 * of its context and whether it is a return address.  Without a
 * callchain, the ip alone.
 */
static int view_frames(struct host_view *hv)
{
	const struct pipe_sample *s = &hv->s;
	struct frames walk;
	struct frame f;
	uint32_t nr = 0;
	int ret;

	ret = view_reserve(hv, s->nr_callchain + 1);
	if (ret < 0)
		return ret;
	frames_init(&walk, s);
	while (frames_next(&walk, &f)) {
		hv->frames[nr] = f.addr;
		hv->misc[nr] = f.misc;
		hv->ret[nr] = f.ret && f.addr > 0;
		nr++;
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

int inst_outputs_end(struct inst *in, enum run_end how, struct pipe_err *err)
{
	uint32_t i;
	int ret, first = 0;

	for (i = 0; i < in->ctx.nr_outs; i++) {
		if (how != RUN_END_OK) {
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
		ret = host_output_add(&in->ctx, path, p->name);
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
			return pipe_err_nomem(err, "cannot open %s with its "
					      "%" PRIu64 "-byte state",
					      in->ctx.what, in->p->state_size);
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
		return pipe_err_nomem(err, "cannot open plugin '%s'",
				      lp->path);
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
		ret = pipe_err_nomem(err, "cannot open plugin '%s'", name);
		free(name);
		return ret;
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
	inst_outputs_end(in, RUN_END_FAILED, NULL);
	free(in->ctx.view.frames);
	free(in->ctx.view.misc);
	free(in->ctx.view.ret);
	args_free(in->ctx.args);
	if (!in->borrowed_lp)
		loader_close(in->lp);
	free(in);
}
