/*
 * json_samples.c - one sample as JSON: its fields, its symbolized
 * callchain (with source lines and inlined frames when asked), names
 * escaped once through a cache; and the sample's fixed key strings,
 * built once for the chosen layout.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsonw.h"

/* ---- samples ------------------------------------------------------------ */

static bool sym_resolve(struct json *j, uint32_t pid, uint64_t ip,
			uint16_t misc, struct pipe_symbol *out)
{
	struct addrcache_key *slot;
	const struct pipe_symbol *hit = addrcache_get(&j->syms, pid, ip, misc,
						      &slot);

	if (hit) {
		*out = *hit;
		return out->name != NULL;
	}
	if (j->host->symbolize(j->ctx, pid, ip, misc, out) < 0)
		memset(out, 0, sizeof(*out));
	*(struct pipe_symbol *)addrcache_put(&j->syms, slot, pid, ip, misc) =
		*out;
	return out->name != NULL;
}

/* Write a symbol or dso name, escaping it once: the symbolizer's strings
 * live for the whole run, so their address identifies them.  The table
 * stops growing at JSON_ESC_SLOTS / 2 names or JSON_ESC_BYTES. */
static void name_put(struct json *j, struct jout *o, const char *name)
{
	uint64_t h = (uint64_t)(uintptr_t)name * UINT64_C(0x9e3779b97f4a7c15);
	uint32_t i = (uint32_t)(h >> 40) & (JSON_ESC_SLOTS - 1);
	struct esc_slot *e;
	struct jout tmp;
	size_t cap;

	for (;; i = (i + 1) & (JSON_ESC_SLOTS - 1)) {
		e = &j->esc[i];
		if (e->name == name) {
			jout_put(o, e->json, e->len);
			return;
		}
		if (!e->name)
			break;
	}
	cap = 6 * strlen(name) + 3;
	if (j->nr_esc >= JSON_ESC_SLOTS / 2 ||
	    j->esc_bytes + cap > JSON_ESC_BYTES || cap > JSON_BUF_SIZE) {
		jout_str(o, name);
		return;
	}
	tmp = (struct jout){ .fd = -1, .cap = cap };
	tmp.buf = malloc(cap);
	if (!tmp.buf) {
		jout_str(o, name);
		return;
	}
	jout_str(&tmp, name);
	e->name = name;
	e->json = tmp.buf;
	e->len = tmp.len;
	j->nr_esc++;
	j->esc_bytes += cap;
	jout_put(o, e->json, e->len);
}

/* `"srcline": "FILE:LINE"` of one level, when it has a line. */
static void srcline_key(struct json *j, struct jout *o, int depth,
			const struct pipe_src_frame *f)
{
	char buf[4200];

	if (!f->file || !f->line)
		return;
	snprintf(buf, sizeof(buf), "%s:%" PRIu32, f->file, f->line);
	key(j, o, true, depth, "srcline");
	jout_str(o, buf);
}

/*
 * A frame's source position: "srcline", the line in the frame's own
 * function, and "inlined", the functions inlined there (innermost first),
 * each with its line.  A return address is looked up `back` (1) byte
 * earlier, inside its call.
 */
static void frame_srcline_put(struct json *j, struct jout *o, uint32_t pid,
			      uint64_t ip, uint32_t back, uint16_t cpumode)
{
	int d = j->format == JSON_FORMAT_LINES ? 0 : 2;
	const struct pipe_srcline *sl;
	uint32_t i;

	sl = j->host->srcline(j->ctx, pid, ip - back, cpumode);
	if (sl->nr == 0)
		return;
	srcline_key(j, o, d + 3, pipe_src_frame(sl, sl->nr - 1));
	if (sl->nr < 2)
		return;
	key(j, o, true, d + 3, "inlined");
	jout_put(o, "[", 1);
	for (i = 0; i + 1 < sl->nr; i++) {
		const struct pipe_src_frame *f = pipe_src_frame(sl, i);

		delim(j, o, i > 0, d + 4);
		jout_put(o, "{", 1);
		key(j, o, false, d + 5, "symbol");
		jout_str(o, f->function ? f->function : "[unknown]");
		srcline_key(j, o, d + 5, f);
		delim(j, o, false, d + 4);
		jout_put(o, "}", 1);
	}
	delim(j, o, false, d + 3);
	jout_put(o, "]", 1);
}

/* One callchain entry: ip, and symbol and dso only when resolved. */
static void frame_put(struct json *j, struct jout *o, bool first,
		      uint32_t pid, uint64_t ip, uint32_t back,
		      uint16_t cpumode)
{
	struct pipe_symbol sym = PIPE_INIT(sym);

	jout_lit_put(o, &j->lit.frame[first]);
	jout_hex(o, ip);
	if (j->symbols && sym_resolve(j, pid, ip, cpumode, &sym)) {
		jout_lit_put(o, &j->lit.symbol);
		name_put(j, o, sym.name);
		if (sym.dso_short && *sym.dso_short) {
			jout_lit_put(o, &j->lit.dso);
			name_put(j, o, sym.dso_short);
		}
		if (j->srcline)
			frame_srcline_put(j, o, pid, ip, back, cpumode);
	}
	jout_lit_put(o, &j->lit.frame_end);
}

/* The callchain without its context markers; a sample without one gets
 * one entry for its ip. */
static void callchain_put(struct json *j, struct jout *o,
			  const struct pipe_sample *s)
{
	uint16_t cpumode = s->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool first = true;
	uint32_t back = 0;
	uint64_t i;

	jout_lit_put(o, &j->lit.chain);
	if (!(s->sample_type & PERF_SAMPLE_CALLCHAIN)) {
		frame_put(j, o, true, s->pid, s->ip, 0, cpumode);
		first = false;
	}
	for (i = 0; i < s->nr_callchain; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= PERF_CONTEXT_MAX) {
			if (ip == PERF_CONTEXT_KERNEL)
				cpumode = PERF_RECORD_MISC_KERNEL;
			else if (ip == PERF_CONTEXT_USER)
				cpumode = PERF_RECORD_MISC_USER;
			else if (ip == PERF_CONTEXT_HV)
				cpumode = PERF_RECORD_MISC_HYPERVISOR;
			/* a context starts where it was interrupted; the
			 * entries after it are return addresses */
			back = 0;
			continue;
		}
		frame_put(j, o, first, s->pid, ip, back, cpumode);
		first = false;
		back = 1;
	}
	jout_lit_put(o, &j->lit.chain_end);
}

void sample_put(struct json *j, const struct pipe_record *r)
{
	struct jout *o = &j->out;
	struct pipe_sample *s = &j->sample;

	if (j->host->decode_sample(j->ctx, r, s) < 0) {
		j->bad++;
		return;
	}
	jout_lit_put(o, &j->lit.open[j->samples == 0]);
	time_put(j, o, s->time);
	jout_lit_put(o, &j->lit.pid);
	jout_i64(o, (int32_t)s->pid);
	jout_lit_put(o, &j->lit.tid);
	jout_i64(o, (int32_t)s->tid);
	if (s->sample_type & PERF_SAMPLE_CPU) {
		jout_lit_put(o, &j->lit.cpu);
		jout_i64(o, (int32_t)s->cpu);
	}
	jout_lit_put(o, &j->lit.comm);
	jout_str(o, j->host->thread_comm(j->ctx, s->tid));
	callchain_put(j, o, s);
	jout_lit_put(o, &j->lit.event);
	if (s->event < j->meta->nr_events)
		jout_str(o, pipe_meta_event(j->meta, s->event)->name);
	else
		jout_lit(o, "null");
	if (s->sample_type & PERF_SAMPLE_PERIOD) {
		jout_lit_put(o, &j->lit.period);
		jout_u64(o, s->period);
	}
	jout_lit_put(o, &j->lit.close);
	j->samples++;
}

/* Build one literal with the layout functions. */
static struct jout *lit_begin(struct jout *tmp, struct lit *l)
{
	*tmp = (struct jout){ .fd = -1, .buf = l->s, .cap = sizeof(l->s) };
	return tmp;
}

static void lit_end(struct jout *tmp, struct lit *l)
{
	assert(tmp->len < sizeof(l->s));
	l->n = tmp->len;
}

static void lit_key(struct json *j, struct lit *l, bool comma, int depth,
		    const char *name)
{
	struct jout tmp;

	key(j, lit_begin(&tmp, l), comma, depth, name);
	lit_end(&tmp, l);
}

void lits_build(struct json *j)
{
	bool lines = j->format == JSON_FORMAT_LINES;
	int d = lines ? 0 : 2;
	struct lits *L = &j->lit;
	struct jout tmp;
	int first;

	for (first = 0; first <= 1; first++) {
		lit_begin(&tmp, &L->open[first]);
		if (!lines)
			delim(j, &tmp, !first, d);
		jout_put(&tmp, "{", 1);
		if (lines)
			jout_lit(&tmp, "\"type\":\"sample\"");
		key(j, &tmp, lines, d + 1, "timestamp");
		lit_end(&tmp, &L->open[first]);

		lit_begin(&tmp, &L->frame[first]);
		delim(j, &tmp, !first, d + 2);
		jout_put(&tmp, "{", 1);
		key(j, &tmp, false, d + 3, "ip");
		lit_end(&tmp, &L->frame[first]);
	}
	lit_key(j, &L->pid, true, d + 1, "pid");
	lit_key(j, &L->tid, true, d + 1, "tid");
	lit_key(j, &L->cpu, true, d + 1, "cpu");
	lit_key(j, &L->comm, true, d + 1, "comm");
	lit_key(j, &L->event, true, d + 1, "event");
	lit_key(j, &L->period, true, d + 1, "period");
	lit_key(j, &L->symbol, true, d + 3, "symbol");
	lit_key(j, &L->dso, true, d + 3, "dso");
	lit_key(j, &L->chain, true, d + 1, "callchain");
	L->chain.s[L->chain.n++] = '[';

	lit_begin(&tmp, &L->frame_end);
	delim(j, &tmp, false, d + 2);
	jout_put(&tmp, "}", 1);
	lit_end(&tmp, &L->frame_end);

	lit_begin(&tmp, &L->chain_end);
	delim(j, &tmp, false, d + 1);
	jout_put(&tmp, "]", 1);
	lit_end(&tmp, &L->chain_end);

	lit_begin(&tmp, &L->close);
	delim(j, &tmp, false, d);
	jout_put(&tmp, "}", 1);
	if (lines)
		jout_put(&tmp, "\n", 1);
	lit_end(&tmp, &L->close);
}
