/*
 * breach_sink.c - a record sink that breaks the plugin contract in the
 * way its `breach=` parameter names, for the tests of the host's checks:
 * each must end in one message naming the plugin and the call, never in
 * a crash.
 */
#include <errno.h>
#include <stdlib.h>

#include "pipe_plugin.h"

enum breach {
	BREACH_NONE,
	BREACH_OPEN_POSITIVE,   /* open returns 1 */
	BREACH_META_IN_OPEN,    /* meta_set_prop from open */
	BREACH_DECODE_IN_OPEN,  /* decode_sample from open */
	BREACH_SYMBOLS,         /* symbolize without PIPE_PLUGIN_SYMBOLS */
	BREACH_SYMBOLS_IGNORED, /* the same, carrying on regardless */
	BREACH_CONSUME_POSITIVE, /* consume returns 7 */
	BREACH_NO_SIZE,         /* decode_sample with out->size 0 */
	BREACH_OUTPUT_NO_FLAG,  /* open_output without PIPE_PLUGIN_OUTPUT */
	BREACH_FRAME_OUTSIDE,   /* frame_symbol outside sample() */
	BREACH_NO_MESSAGE,      /* consume fails (-ENOMEM) saying nothing */
};

struct bsink {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	int breach;                   /* enum breach */
};

static const struct pipe_param bsink_params[] = {
	{ .name = "breach", .type = PIPE_PARAM_ENUM,
	  .flags = PIPE_PARAM_POSITIONAL, .def = "none",
	  .choices = "none|open_positive|meta_in_open|decode_in_open|"
		     "symbols|symbols_ignored|consume_positive|no_size|"
		     "output_no_flag|frame_outside|no_message",
	  .help = "which rule to break" },
	{ 0 },
};

static int bsink_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	struct bsink *s = calloc(1, sizeof(*s));
	struct pipe_record rec = { 0 };
	struct pipe_sample smp = PIPE_INIT(smp);
	FILE *f;
	int ret;

	if (!s)
		return -ENOMEM;
	s->host = host;
	s->ctx = ctx;
	s->breach = (int)host->arg_int(ctx, "breach");
	*state = s;
	switch (s->breach) {
	case BREACH_OPEN_POSITIVE:
		return 1;
	case BREACH_META_IN_OPEN:
		ret = host->meta_set_prop(ctx, "colour", "blue");
		break;
	case BREACH_DECODE_IN_OPEN:
		ret = host->decode_sample(ctx, &rec, &smp);
		break;
	case BREACH_OUTPUT_NO_FLAG:
		ret = host->open_output(ctx, "out.txt", &f);
		break;
	default:
		return 0;
	}
	free(s);
	*state = NULL;
	return ret;
}

static void bsink_close(void *state)
{
	free(state);
}

static int bsink_consume(void *state, const struct pipe_batch *b)
{
	struct bsink *s = state;
	struct pipe_symbol sym = PIPE_INIT(sym);
	struct pipe_sample smp = { .size = 0 };
	int ret;

	if (!b->nr)
		return 0;
	switch (s->breach) {
	case BREACH_SYMBOLS:
		return s->host->symbolize(s->ctx, 1, 0x1000, 0, &sym);
	case BREACH_SYMBOLS_IGNORED:
		ret = s->host->symbolize(s->ctx, 1, 0x1000, 0, &sym);
		return ret < 0 ? 0 : -EIO;
	case BREACH_CONSUME_POSITIVE:
		return 7;
	case BREACH_NO_SIZE:
		return s->host->decode_sample(s->ctx, &b->recs[0], &smp);
	case BREACH_FRAME_OUTSIDE:
		ret = s->host->frame_symbol(s->ctx, NULL, 0)->flags;
		return ret & PIPE_SYM_RESOLVED ? 0 : -EINVAL;
	case BREACH_NO_MESSAGE:
		return -ENOMEM;
	default:
		return 0;
	}
}

PIPE_PLUGIN_SINK(
	.name = "breach",
	.summary = "breaks the contract as asked",
	.version = "1",
	.params = bsink_params,
	.open = bsink_open,
	.close = bsink_close,
	.consume = bsink_consume
);
