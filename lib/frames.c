/*
 * frames.c - the one walker of a sample's callchain (frames.h).
 */
#include "frames.h"

void frames_init(struct frames *w, const struct pipe_sample *s)
{
	w->s = s;
	w->next = 0;
	w->misc = s->misc;
	w->in_context = false;
}

bool frames_next(struct frames *w, struct frame *f)
{
	const struct pipe_sample *s = w->s;

	while (w->next < s->nr_callchain) {
		uint64_t a = s->callchain[w->next++];

		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			if (a == (uint64_t)PERF_CONTEXT_KERNEL)
				w->misc = PERF_RECORD_MISC_KERNEL;
			else if (a == (uint64_t)PERF_CONTEXT_USER)
				w->misc = PERF_RECORD_MISC_USER;
			else
				w->misc = PERF_RECORD_MISC_CPUMODE_UNKNOWN;
			w->in_context = false;
			continue;
		}
		f->addr = a;
		f->misc = w->misc;
		f->ret = w->in_context;
		w->in_context = true;
		return true;
	}
	return false;
}
