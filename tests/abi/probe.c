/*
 * probe.c - a batch sink that touches every part of the ABI a sink can
 * touch: the metadata and its events table, decode_sample and
 * decode_sample_id into caller-sized structs, symbolize, thread_comm and
 * arguments, and (built against 2.1 or later) srcline with its
 * host-sized levels.  The suite builds it against each kept header and runs it on
 * the current host and on one whose structs grew: its output (a summary
 * of what it saw) must not change.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_plugin.h"

struct probe {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	uint64_t samples, others, ids;
	uint64_t pid_sum, time_xor, period_sum, frames;
	uint64_t resolved, name_hash;
	uint64_t comm_hash;
	uint64_t src_levels, src_hash; /* srcline (2.1) */
};

static const struct pipe_param probe_params[] = {
	PIPE_P_BOOL("symbols", "on", "resolve sample addresses"),
	PIPE_P_END,
};

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return h;
}

static int probe_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	struct probe *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->host = host;
	p->ctx = ctx;
	*state = p;
	return 0;
}

static void probe_close(void *state)
{
	free(state);
}

#if PIPE_ABI_MINOR >= 1
/* Every level of ip's source position, hashed. */
static void probe_srcline(struct probe *p, const struct pipe_sample *s)
{
	const struct pipe_srcline *sl;
	uint32_t i;

	if (!PIPE_HOST_HAS(p->host, srcline))
		return;
	sl = p->host->srcline(p->ctx, s->pid, s->ip, s->misc);
	for (i = 0; i < sl->nr; i++) {
		const struct pipe_src_frame *f = pipe_src_frame(sl, i);

		p->src_levels++;
		p->src_hash = hash_str(p->src_hash, f->function);
		p->src_hash = hash_str(p->src_hash, f->file);
		p->src_hash = p->src_hash * 31 + f->line + f->inlined;
	}
}
#else
static void probe_srcline(struct probe *p, const struct pipe_sample *s)
{
	(void)p;
	(void)s;
}
#endif

static void probe_sample(struct probe *p, const struct pipe_record *r)
{
	struct pipe_sample s = PIPE_INIT(s);
	struct pipe_symbol sym = PIPE_INIT(sym);

	if (p->host->decode_sample(p->ctx, r, &s) < 0)
		return;
	p->samples++;
	p->pid_sum += s.pid;
	p->time_xor ^= s.time;
	p->period_sum += s.period;
	p->frames += s.nr_callchain;
	p->comm_hash = hash_str(p->comm_hash,
				p->host->thread_comm(p->ctx, s.tid));
	if (!p->host->arg_int(p->ctx, "symbols"))
		return;
	if (p->host->symbolize(p->ctx, s.pid, s.ip, s.misc, &sym) == 0 &&
	    sym.name) {
		p->resolved++;
		p->name_hash = hash_str(p->name_hash, sym.name);
	}
	probe_srcline(p, &s);
}

static int probe_consume(void *state, const struct pipe_batch *b)
{
	struct probe *p = state;
	struct pipe_sample_id id = PIPE_INIT(id);
	size_t i;

	for (i = 0; i < b->nr; i++) {
		if (b->recs[i].hdr->type == PERF_RECORD_SAMPLE) {
			probe_sample(p, &b->recs[i]);
			continue;
		}
		p->others++;
		if (p->host->decode_sample_id(p->ctx, &b->recs[i], &id) == 0)
			p->ids += id.pid;
	}
	return 0;
}

static int probe_finish(void *state)
{
	struct probe *p = state;
	const struct pipe_meta *m = p->host->meta(p->ctx);
	uint32_t i;

	for (i = 0; i < m->nr_events; i++)
		printf("event %u: %s, type %u, %u ids\n", i,
		       pipe_meta_event(m, i)->name,
		       pipe_meta_event(m, i)->attr->type,
		       pipe_meta_event(m, i)->nr_ids);
	for (i = 0; i < m->nr_props; i++)
		printf("prop %s=%s\n", m->prop_keys[i], m->prop_values[i]);
	printf("samples %" PRIu64 ", others %" PRIu64 ", ids %" PRIu64
	       ", pids %" PRIu64 ", times %" PRIx64 ", periods %" PRIu64
	       ", frames %" PRIu64 ", resolved %" PRIu64 ", names %" PRIx64
	       ", comms %" PRIx64 "\n", p->samples, p->others, p->ids,
	       p->pid_sum, p->time_xor, p->period_sum, p->frames, p->resolved,
	       p->name_hash, p->comm_hash);
	if (p->src_levels)
		printf("source levels %" PRIu64 ", hash %" PRIx64 "\n",
		       p->src_levels, p->src_hash);
	return 0;
}

PIPE_PLUGIN_SINK(
	.flags = PIPE_PLUGIN_SYMBOLS,
	.name = "probe",
	.summary = "touch the whole sink ABI and summarize what it saw",
	.version = "1",
	.params = probe_params,
	.open = probe_open,
	.close = probe_close,
	.consume = probe_consume,
	.finish = probe_finish
);
