/*
 * readfile.c - reading pipe files: the container reader with codecs opened
 * on demand, the reader options (window, CPUs, pids, threads) and its
 * damage lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "grow.h"
#include "loader.h"
#include "params.h"
#include "pipeline.h"

/* The name pipe gave codec id `id`, or NULL for another's id. */
static const char *bundled_codec(uint32_t id)
{
	static const char *const names[] = {
		[PIPE_CODEC_NONE] = "none", [PIPE_CODEC_ZLIB] = "zlib",
		[PIPE_CODEC_LZMA] = "lzma", [PIPE_CODEC_ZSTD] = "zstd",
	};

	return id < sizeof(names) / sizeof(names[0]) ? names[id] : NULL;
}

/*
 * A codec instance for the blocks of `codec_id`: the first codec of the
 * conf files whose plugin has that id.  -ENOENT when every codec plugin
 * loads and none has it: the file's blocks of that id are damaged, as
 * docs/format.md says.  When one does not load (its file missing,
 * broken) it may be the one the blocks need: another error, which ends
 * the read with the plugin named, instead of skipping their records as
 * damage.
 */
static int reader_codec_open(void *opaque, uint32_t codec_id,
			     const struct pipe_plugin **p, void **state,
			     struct pipe_ctx **ctx, struct pipe_err *err)
{
	struct pipeline *pl = opaque;
	const struct conf *conf = pl->o->conf;
	const char *name = bundled_codec(codec_id);
	const struct conf_entry *broken = NULL;
	struct pipe_err why = { { 0 }, { 0 } }, e;
	struct inst *in;
	uint32_t i;
	int ret;

	if (!pl->codecs) {
		pl->codecs = calloc(conf->nr ? conf->nr : 1, sizeof(*pl->codecs));
		if (!pl->codecs)
			return pipe_err_nomem(err, "cannot open codec id %u",
					      codec_id);
		pl->nr_codecs = conf->nr;
	}
	for (i = 0; i < conf->nr; i++) {
		const struct conf_entry *ce = &conf->entries[i];

		if (ce->kind != PIPE_KIND_CODEC)
			continue;
		if (!pl->codecs[i].lp) {
			pipe_err_clear(&e);
			ret = loader_open(&pl->codecs[i].lp, ce->path,
					  PIPE_KIND_CODEC, &e);
			if (ret == -ENOMEM) {
				*err = e;
				return ret;
			}
			if (ret < 0) {
				/* the one named as the blocks' codec, else
				 * the first */
				if (!broken || (name && strcmp(ce->name, name) == 0 &&
						strcmp(broken->name, name) != 0)) {
					broken = ce;
					why = e;
				}
				continue;
			}
		}
		if (pl->codecs[i].lp->plugin->codec_id == codec_id)
			break;
	}
	if (i == conf->nr && broken) {
		char what[32];

		if (name)
			snprintf(what, sizeof(what), "'%s'", name);
		else
			snprintf(what, sizeof(what), "id %u", codec_id);
		pipe_err_set(err, -ELIBBAD, "its blocks of codec %s cannot "
			     "be decoded: codec '%s' (%s) does not load: %s",
			     what, broken->name, broken->origin, why.msg);
		pipe_err_hint(err, "build or install the plugin, or mend or "
			      "remove that line; 'pipe plugins' lists every "
			      "plugin and why one does not load");
		return -ELIBBAD;
	}
	if (i == conf->nr)
		return pipe_err_set(err, -ENOENT,
				    "no codec plugin for codec id %u", codec_id);
	ret = inst_open_loaded(&in, pl->codecs[i].lp, NULL, &pl->hr, err);
	if (ret < 0)
		/* -ENOENT is for a codec id no plugin has */
		return ret == -ENOENT ? -EINVAL : ret;
	if (grow_array(&pl->open_codecs, &pl->cap_open_codecs,
		       (size_t)pl->nr_open_codecs + 1, sizeof(*pl->open_codecs),
		       4, UINT32_MAX) < 0) {
		inst_free(in);
		return pipe_err_nomem(err, "cannot open codec id %u", codec_id);
	}
	pl->open_codecs[pl->nr_open_codecs++] = in;
	*p = in->p;
	*state = in->state;
	*ctx = &in->ctx;
	return 0;
}

static void reader_codec_close(void *opaque, const struct pipe_plugin *p,
			       void *state)
{
	struct pipeline *pl = opaque;
	uint32_t i;

	(void)p;
	for (i = 0; i < pl->nr_open_codecs; i++) {
		if (pl->open_codecs[i] && pl->open_codecs[i]->state == state) {
			inst_free(pl->open_codecs[i]);
			pl->open_codecs[i] = NULL;
		}
	}
}

/* The codec instance's own message for its last failure, then cleared. */
static const char *reader_codec_error(void *opaque, void *state)
{
	struct pipeline *pl = opaque;
	uint32_t i;

	for (i = 0; i < pl->nr_open_codecs; i++) {
		struct inst *in = pl->open_codecs[i];

		if (in && in->state == state) {
			/* copy out so the next failure can write the slot */
			snprintf(in->last_msg, sizeof(in->last_msg), "%s",
				 in->ctx.err.msg);
			pipe_err_clear(&in->ctx.err);
			return in->last_msg;
		}
	}
	return NULL;
}

/* Print a line that may hold names from a file: control bytes become
 * '?', so nothing in it reaches the terminal as an escape sequence. */
void print_line(const char *prefix, const char *line)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s", line);
	pipe_err_clean(buf);
	fprintf(stderr, "pipe: %s%s\n", prefix, buf);
}

static void reader_report(void *opaque, const char *line)
{
	struct pipeline *pl = opaque;

	if (pl->lines_skip) {
		pl->lines_skip--;
		return;
	}
	pl->lines_said++;
	print_line("", line);
}

/* "0-3+8" items into numbers; *out malloc'd (caller frees). */
static int parse_numbers(const struct inst *src, const char *key,
			 uint32_t **out, uint32_t *nr, struct pipe_err *err)
{
	const char *const *items;
	uint32_t n = args_list(src->ctx.args, key, &items), i;
	uint32_t *v = NULL;
	size_t cap = 0;

	*out = NULL;
	*nr = 0;
	for (i = 0; i < n; i++) {
		unsigned long a, b;
		char *end;

		a = strtoul(items[i], &end, 10);
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (end == items[i] || *end || b < a || b - a > 65536 ||
		    b > UINT32_MAX) {
			free(v);
			pipe_err_set(err, -EINVAL, "bad value '%s' for '%s' of %s",
				     items[i], key, src->ctx.what);
			pipe_err_hint(err, "expected numbers or ranges joined by '+', as 0-3+8");
			return -EINVAL;
		}
		for (; a <= b; a++) {
			if (grow_array(&v, &cap, (size_t)*nr + 1, sizeof(*v),
				       16, SIZE_MAX) < 0) {
				free(v);
				return pipe_err_nomem(err, "cannot read '%s' "
						      "of %s", key,
						      src->ctx.what);
			}
			v[(*nr)++] = (uint32_t)a;
		}
	}
	*out = v;
	return 0;
}

int open_reader(struct pipeline *pl, uint32_t threads, struct pipe_err *err)
{
	struct inst *src = pl->src;
	struct cr_opts ro = { 0 };
	const char *name = inst_subject(src);
	int ret;

	ro.src = src->p;
	ro.src_state = src->state;
	ro.src_ctx = &src->ctx;
	ro.name = name ? name : src->ctx.what;
	ro.strict = args_int(src->ctx.args, "strict");
	ro.codec_open = reader_codec_open;
	ro.codec_close = reader_codec_close;
	ro.codec_error = reader_codec_error;
	ro.report = reader_report;
	ro.opaque = pl;
	ro.threads = threads ? threads :
		     (uint32_t)args_int(src->ctx.args, "threads");
	ro.start_ns = (uint64_t)args_int(src->ctx.args, "start");
	if (args_is_set(src->ctx.args, "stop"))
		ro.stop_ns = (uint64_t)args_int(src->ctx.args, "stop");
	if (ro.stop_ns && ro.stop_ns <= ro.start_ns)
		return pipe_err_set(err, -EINVAL,
				    "stop= must come after start= for %s",
				    src->ctx.what);
	ret = parse_numbers(src, "cpus", &pl->win_cpus, &ro.nr_cpus, err);
	if (ret == 0)
		ret = parse_numbers(src, "pid", &pl->win_pids, &ro.nr_pids, err);
	if (ret < 0)
		return ret;
	ro.cpus = pl->win_cpus;
	ro.pids = pl->win_pids;
	ret = creader_open(&pl->reader, &ro, err);
	if (ret < 0)
		return ret;
	pl->hr.meta = (struct meta *)creader_meta(pl->reader);
	return 0;
}
