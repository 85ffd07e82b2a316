/*
 * crash_codec.c - a codec (stored blocks, a third-party id) that crashes
 * with `sig=` in compress, or, when the file is read back, in
 * decompress (`at=`); with `together=N`, decompress first waits (at most
 * 2 s) until N decoding threads are in it, so that they crash at once.
 */
#include <stdatomic.h>
#include <time.h>

#include "crash_common.h"
#include "pipe_plugin.h"
#include "stub.h"

enum { AT_COMPRESS, AT_DECOMPRESS, AT_NONE };

struct crashc {
	struct crash_how how; /* sig= and at= */
	int together;         /* threads to wait for in decompress */
};

static atomic_int crashc_inside; /* threads in decompress, all instances */

/* Spin until n threads are here, or 2 s have passed. */
static void crashc_wait(int n)
{
	struct timespec t0, t;

	atomic_fetch_add(&crashc_inside, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while (atomic_load(&crashc_inside) < n && t.tv_sec - t0.tv_sec < 2);
}

static const struct pipe_param crashc_params[] = {
	PIPE_P_ENUM("sig", "segv", CRASH_SIGNALS, "how to crash"),
	PIPE_P_ENUM("at", "decompress", "compress|decompress|none",
		    "where to crash"),
	PIPE_P_INT("together", 0, "1", 1, 64,
		   "threads that crash in decompress at once"),
	PIPE_P_END,
};

static int crashc_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		       void **state)
{
	struct crashc *c = *state;

	crash_how_read(&c->how, host, ctx, false);
	c->together = (int)host->arg_int(ctx, "together");
	return 0;
}

static int crashc_compress(void *state, uint32_t dict_id, const void *src,
			   size_t len, void *dst, size_t cap, size_t *out_len)
{
	struct crashc *c = state;

	crash_at(&c->how, AT_COMPRESS);
	return stub_compress(state, dict_id, src, len, dst, cap, out_len);
}

static int crashc_decompress(void *state, uint32_t dict_id, const void *src,
			     size_t len, void *dst, size_t raw_len)
{
	struct crashc *c = state;

	if (c->how.at == AT_DECOMPRESS)
		crashc_wait(c->together);
	crash_at(&c->how, AT_DECOMPRESS);
	return stub_decompress(state, dict_id, src, len, dst, raw_len);
}

PIPE_PLUGIN_CODEC(
	.name = "crash_codec",
	.summary = "a stored-blocks codec that crashes as asked",
	.codec_id = PIPE_CODEC_USER_MIN + 0x1234,
	.state_size = sizeof(struct crashc),
	.params = crashc_params,
	.open = crashc_open,
	.bound = stub_bound,
	.compress = crashc_compress,
	.decompress = crashc_decompress
);
