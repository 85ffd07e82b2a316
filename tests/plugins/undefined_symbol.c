/*
 * undefined_symbol.c - a broken plugin for the loader tests: it uses a
 * symbol nothing defines, so dlopen(RTLD_NOW) must fail and say which.
 */
#include "pipe_plugin.h"
#include "stub.h"

extern int pipe_test_no_such_symbol;

static int undef_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	(void)host;
	(void)ctx;
	*state = &pipe_test_no_such_symbol;
	return 0;
}

PIPE_PLUGIN_SINK(
	.name = "undefined_symbol",
	.summary = "needs a symbol nobody has",
	.version = "0",
	.open = undef_open,
	.close = stub_close,
	.consume = stub_consume
);
