/*
 * fakehost.h - the one host the unit tests and benchmarks open a plugin
 * with when there is no pipeline: its parameters parsed from text by
 * core/params.c (as the command does), the last host->error kept, logs
 * and hints dropped, never interrupted, quiet or on a terminal.
 * Include it in one file of a program linked with core/params.c and
 * lib/err.c.
 */
#ifndef PIPE_TEST_FAKEHOST_H
#define PIPE_TEST_FAKEHOST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "err.h"
#include "params.h"
#include "pipe_plugin.h"

/* The fake host's instance. */
struct pipe_ctx {
	struct args *args; /* owned, from fakehost_args; NULL: none given */
	char err[512];     /* the last host->error, "" for none */
};

static const char *fakehost_arg_str(struct pipe_ctx *ctx, const char *name)
{
	return args_str(ctx->args, name);
}

static int64_t fakehost_arg_int(struct pipe_ctx *ctx, const char *name)
{
	return args_int(ctx->args, name);
}

static bool fakehost_arg_is_set(struct pipe_ctx *ctx, const char *name)
{
	return args_is_set(ctx->args, name);
}

static void fakehost_error(struct pipe_ctx *ctx, const char *fmt, ...)
	PIPE_PRINTF(2, 3);

static void fakehost_error(struct pipe_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
}

static void fakehost_hint(struct pipe_ctx *ctx, const char *fmt, ...)
	PIPE_PRINTF(2, 3);

static void fakehost_hint(struct pipe_ctx *ctx, const char *fmt, ...)
{
	(void)ctx;
	(void)fmt;
}

static void fakehost_log(struct pipe_ctx *ctx, int level, const char *fmt,
			 ...) PIPE_PRINTF(3, 4);

static void fakehost_log(struct pipe_ctx *ctx, int level, const char *fmt,
			 ...)
{
	(void)ctx;
	(void)level;
	(void)fmt;
}

static bool fakehost_false(struct pipe_ctx *ctx)
{
	(void)ctx;
	return false;
}

static const struct pipe_host fakehost = {
	.abi = PIPE_ABI,
	.size = sizeof(struct pipe_host),
	.arg_str = fakehost_arg_str,
	.arg_int = fakehost_arg_int,
	.arg_is_set = fakehost_arg_is_set,
	.error = fakehost_error,
	.hint = fakehost_hint,
	.log = fakehost_log,
	.interrupted = fakehost_false,
	.quiet = fakehost_false,
	.tty = fakehost_false,
};

/*
 * Parse `text` (the part after "NAME:", NULL or "" for the defaults)
 * against plugin p's parameter table into ctx->args, which ctx owns
 * until fakehost_release.  Returns 0, or negative errno with the message
 * in ctx->err.
 */
static inline int fakehost_args(struct pipe_ctx *ctx,
				const struct pipe_plugin *p, const char *text)
{
	const struct pipe_param *tables[1] = { p->params };
	struct pipe_err err;
	int ret;

	ctx->err[0] = '\0';
	ret = params_parse(&ctx->args, p->name, tables, p->params ? 1 : 0,
			   NULL, text, &err);
	if (ret < 0)
		snprintf(ctx->err, sizeof(ctx->err), "%s", err.msg);
	return ret;
}

/* Free ctx->args (ctx can take new ones). */
static inline void fakehost_release(struct pipe_ctx *ctx)
{
	args_free(ctx->args);
	ctx->args = NULL;
}

#endif
