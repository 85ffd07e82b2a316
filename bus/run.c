/*
 * run.c - the bus: pulls batches from the source (records live, or
 * decoded from pipe-file bytes), puts them in time order, keeps the
 * symbolizer's process state, and fans them out to record sinks and,
 * through the container writer, to byte sinks (see run.h).  The rest of
 * the bus, sharing pipeline.h: sinkq.c, bytesinks.c, readfile.c,
 * status.c and scan.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "loader.h"
#include "merge.h"
#include "params.h"
#include "pipeline.h"
#include "reap.h"
#include "sideband.h"
#include "symbolizer.h"

/* guards pipeline.more: sinks fail on the main and the writer's thread */
static pthread_mutex_t more_mu = PTHREAD_MUTEX_INITIALIZER;
uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void count_records(struct pipeline *pl, const struct pipe_batch *b)
{
	uint64_t lost;
	size_t i;

	for (i = 0; i < b->nr; i++) {
		const struct perf_event_header *h = b->recs[i].hdr;

		pl->records++;
		if (h->type == PERF_RECORD_SAMPLE) {
			pl->samples++;
		} else if (h->type == PERF_RECORD_LOST &&
			   sideband_lost(h, &lost) == 0) {
			pl->lost += lost;
		} else if (h->type == PERF_RECORD_THROTTLE) {
			pl->throttled++;
		}
	}
}

/*
 * A failure of a sink when `first` already holds the run's failure (0:
 * none yet): the first goes to err, the others are kept to be shown after
 * it.  Returns the run's failure.
 */
int sink_failed(struct pipeline *pl, int first, int ret,
		const struct pipe_err *e, struct pipe_err *err)
{
	if (!first) {
		*err = *e;
		return ret;
	}
	/* byte sinks fail on the writer's thread */
	pthread_mutex_lock(&more_mu);
	if (pl->nr_more < MORE_ERRORS_MAX)
		pl->more[pl->nr_more++] = *e;
	pthread_mutex_unlock(&more_mu);
	return first;
}

/* The record sinks a batch is handed to at once. */
enum sink_group {
	SINKS_PLAIN,       /* the sinks that do not symbolize */
	SINKS_SYMBOLIZING, /* those that see each sample with the process
			      state of its time */
};

/* Every record sink of the group gets the batch, even after one of them
 * failed on it, so that each failing sink's error is shown. */
static int consume_all(struct pipeline *pl, const struct pipe_batch *b,
		       enum sink_group group, struct pipe_err *err)
{
	struct pipe_err e;
	uint32_t i;
	int ret, first = 0;

	if (!b->nr)
		return 0;
	for (i = 0; i < pl->nr_sinks; i++) {
		struct inst *s = pl->sinks[i];
		bool sym = s->p->flags & PIPE_PLUGIN_SYMBOLS;

		if ((s->p->flags & PIPE_PLUGIN_BYTES) || s->failed)
			continue;
		if (sym != (group == SINKS_SYMBOLIZING))
			continue;
		ret = s->p->consume ? inst_consume(s, b, &e) :
				      inst_records(s, b, &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	return first;
}

/*
 * Symbolizing sinks must see each sample with the process state of its
 * time: cut the batch before every run of state records, apply the run,
 * then hand the next piece over.
 */
static int deliver_symbols(struct pipeline *pl, const struct pipe_batch *b,
			   struct pipe_err *err)
{
	struct pipe_batch part = { .flags = b->flags };
	size_t start = 0, i;
	bool seen_other = false;
	int ret;

	for (i = 0; i < b->nr; i++) {
		if (!sideband_is_task(b->recs[i].hdr->type)) {
			seen_other = true;
			continue;
		}
		if (seen_other) {
			part.recs = b->recs + start;
			part.nr = i - start;
			ret = consume_all(pl, &part, SINKS_SYMBOLIZING, err);
			if (ret < 0)
				return ret;
			start = i;
			seen_other = false;
		}
		symbolizer_apply(pl->hr.sym, b->recs[i].hdr);
	}
	part.recs = b->recs + start;
	part.nr = b->nr - start;
	return consume_all(pl, &part, SINKS_SYMBOLIZING, err);
}

static int deliver(struct pipeline *pl, const struct pipe_batch *b,
		   struct pipe_err *err)
{
	int ret;

	if (!b->nr)
		return 0;
	if (!pl->counted)
		count_records(pl, b);
	ret = consume_all(pl, b, SINKS_PLAIN, err);
	if (ret < 0)
		return ret;
	if (pl->symbols) {
		ret = deliver_symbols(pl, b, err);
		if (ret < 0)
			return ret;
	}
	if (pl->writer && !pl->direct)
		return cwriter_add(pl->writer, b, err);
	return 0;
}

int release(struct pipeline *pl, uint64_t horizon, struct pipe_err *err)
{
	struct pipe_batch b;
	int ret;

	for (;;) {
		merge_pop(pl->merge, horizon, BATCH_MAX, &b);
		if (!b.nr)
			return 0;
		ret = deliver(pl, &b, err);
		if (ret < 0)
			return ret;
	}
}

bool rounds_take(struct rounds *r, const struct pipe_batch *b,
		 uint64_t *horizon)
{
	size_t i;

	for (i = 0; i < b->nr; i++)
		if (b->recs[i].time > r->max)
			r->max = b->recs[i].time;
	if (!(b->flags & PIPE_BATCH_ROUND_END))
		return false;
	*horizon = r->prev_max;
	r->prev_max = r->max;
	return true;
}

/* The time-order merge for record sinks, by the source's rounds. */
int merge_batch(struct pipeline *pl, const struct pipe_batch *b,
		struct pipe_err *err)
{
	uint64_t horizon = 0;
	bool round_end = rounds_take(&pl->m_rounds, b, &horizon);
	int ret;

	ret = merge_push(pl->merge, b->recs, b->nr);
	if (ret < 0)
		return pipe_err_set(err, ret, "cannot buffer records: %s",
				    strerror(-ret));
	if (round_end) {
		ret = release(pl, horizon, err);
		if (ret < 0)
			return ret;
	}
	if (merge_bytes(pl->merge) > MERGE_BYTES_MAX)
		return release(pl, pl->m_rounds.max, err);
	return 0;
}

/* Record sinks push buffered output out, on the thread that feeds them. */
int flush_record_sinks(struct pipeline *pl, struct pipe_err *err)
{
	uint32_t i;
	int ret;

	for (i = 0; i < pl->nr_sinks; i++) {
		struct inst *s = pl->sinks[i];

		if (!s->started || s->failed || (s->p->flags & PIPE_PLUGIN_BYTES))
			continue;
		ret = inst_flush(s, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ---- signals ---------------------------------------------------------- */

static int signals_open(struct pipeline *pl, sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, old) < 0)
		return -errno;
	pl->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return pl->sigfd < 0 ? -errno : 0;
}

/* Returns the signal number read, or 0. */
static int signal_take(struct pipeline *pl)
{
	struct signalfd_siginfo si;

	if (read(pl->sigfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	pl->hr.interrupted = true;
	return (int)si.ssi_signo;
}

/* ---- the loops ---------------------------------------------------------- */

static int stop_source(struct pipeline *pl, int signo, struct pipe_err *err)
{
	return inst_stop(pl->src, signo, err);
}

/* Ask every sink that is working to push its buffered output out, at
 * most once a FLUSH_EVERY_NS (the first time with the first records), so
 * a long run reaches its outputs as it goes. */
static int flush_sinks(struct pipeline *pl, struct pipe_err *err)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint32_t i;
	int ret;

	if (now < pl->next_flush)
		return 0;
	pl->next_flush = now + FLUSH_EVERY_NS;
	/* the record sinks' thread, and the writer's, flush what they feed */
	for (i = 0; pl->sq && i < pl->nr_sinks; i++)
		if (pl->sinks[i]->p->flush &&
		    !(pl->sinks[i]->p->flags & PIPE_PLUGIN_BYTES))
			break;
	if (pl->sq && i < pl->nr_sinks) {
		pthread_mutex_lock(&pl->sq->mu);
		pl->sq->flush_req = true;
		pthread_cond_signal(&pl->sq->work);
		pthread_mutex_unlock(&pl->sq->mu);
	}
	for (i = 0; i < pl->nr_sinks; i++) {
		/* (their `failed` is the other thread's to read) */
		if (pl->writer && (pl->sinks[i]->p->flags & PIPE_PLUGIN_BYTES))
			continue;
		if (pl->sq && !(pl->sinks[i]->p->flags & PIPE_PLUGIN_BYTES))
			continue;
		if (!pl->sinks[i]->started || pl->sinks[i]->failed)
			continue;
		ret = inst_flush(pl->sinks[i], err);
		if (ret < 0)
			return ret;
	}
	return pl->writer ? cwriter_flush_output(pl->writer, err) : 0;
}

/* A started sink pushes buffered output out when asked (flush_sinks). */
static bool sink_flushes(const struct pipeline *pl)
{
	uint32_t i;

	for (i = 0; i < pl->nr_sinks; i++)
		if (pl->sinks[i]->p->flush && pl->sinks[i]->started)
			return true;
	return false;
}

/*
 * How long the source may sleep: the rings wake the host at their
 * watermark, so a timeout is needed only for the next status line and
 * for flush=: records that came into a quiet ring just after it was
 * drained must reach the file within the flush interval, as must the
 * writer's pending blocks, and sinks that buffer must be asked to flush
 * on time.  At most a second without a writer.
 */
static int wait_timeout(struct pipeline *pl)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC), next, w;

	pl->empty_at = now;
	next = now + (pl->writer && pl->codec ?
		      (uint64_t)args_int(pl->codec->ctx.args, "flush") :
		      1000000000u);
	if (pl->writer) {
		cwriter_idle(pl->writer, now);
		cwriter_set_arrival(pl->writer, now);
		w = cwriter_next_tick(pl->writer);
		if (w < next)
			next = w;
	}
	if (pl->hr.tty && !pl->hr.quiet && pl->next_status &&
	    pl->next_status < next)
		next = pl->next_status;
	if (pl->next_flush && pl->next_flush < next && sink_flushes(pl))
		next = pl->next_flush;
	if (next <= now)
		return 0;
	/* round up: waking a little late beats waking twice */
	return (int)((next - now + 999999) / 1000000);
}

/*
 * Before a sleep, with every ring drained: how early the writer flushes
 * what would otherwise end a later sleep.  The waits end about every
 * wake_gap (the rings' watermarks at a steady rate), so what falls due
 * before the next one probably ends is written now: a quarter again the
 * usual gap, between an eighth and half of the flush interval.  Blocks
 * are then cut near their deadline, fuller, and the worker writes about
 * once per interval; a wake that comes later than usual is the sleep's
 * timeout, at the deadline.
 */
static uint64_t flush_early(const struct pipeline *pl)
{
	uint64_t flush = (uint64_t)args_int(pl->codec->ctx.args, "flush");
	uint64_t early = pl->wake_gap ? pl->wake_gap / 4 * 5 : flush / 2;

	if (early < flush / 8)
		early = flush / 8;
	return early < flush / 2 ? early : flush / 2;
}

static int wait_source(struct pipeline *pl, struct pipe_err *err)
{
	struct pollfd pfd[MAX_FDS + 1];
	int fds[MAX_FDS], n = 0, i, ret, signo;
	uint64_t now;

	n = inst_fds(pl->src, fds, MAX_FDS, err);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		pfd[i].fd = fds[i];
		pfd[i].events = POLLIN;
	}
	pfd[n].fd = pl->sigfd;
	pfd[n].events = POLLIN;
	if (pl->writer) {
		/* the rings are drained: what they held goes with the blocks
		 * cut now, and what comes next counts from this sleep */
		ret = cwriter_tick(pl->writer, now_ns(CLOCK_MONOTONIC),
				   flush_early(pl), err);
		if (ret < 0)
			return ret;
	}
	ret = poll(pfd, (nfds_t)n + 1, wait_timeout(pl));
	if (ret < 0 && errno != EINTR)
		return pipe_err_set(err, -errno, "poll failed: %s",
				    strerror(errno));
	now = now_ns(CLOCK_MONOTONIC);
	if (pl->woke_at)
		pl->wake_gap = pl->wake_gap ?
			       (3 * pl->wake_gap + (now - pl->woke_at)) / 4 :
			       now - pl->woke_at;
	pl->woke_at = now;
	if (pfd[n].revents & POLLIN) {
		signo = signal_take(pl);
		if (signo)
			return stop_source(pl, signo, err);
	}
	status_update(pl);
	return flush_sinks(pl, err);
}

static int loop_records(struct pipeline *pl, struct pipe_err *err)
{
	struct pipe_batch b;
	int ret, signo;

	pl->direct = pl->writer != NULL;
	if (pl->direct) {
		/* nothing is known to have come yet */
		ret = cwriter_cap_horizon(pl->writer, 0, err);
		if (ret < 0)
			return ret;
	}
	pl->counted = true;
	if (has_record_sink(pl)) {
		ret = merge_new(&pl->merge);
		if (ret < 0)
			return pipe_err_set(err, ret, "cannot order records: %s",
					    strerror(-ret));
		if (pl->src->p->flags & PIPE_PLUGIN_LIVE)
			ret = sinkq_start(pl, err);
		if (ret < 0)
			return ret;
	}
	for (;;) {
		ret = inst_read(pl->src, &b, err);
		if (ret == PIPE_EOF)
			break;
		if (ret == -EAGAIN) {
			ret = wait_source(pl, err);
			if (ret < 0)
				return ret;
			continue;
		}
		if (ret < 0)
			return ret;
		ret = take_batch(pl, &b, err);
		if (ret == 0)
			ret = flush_sinks(pl, err);
		if (ret < 0)
			return ret;
		status_update(pl);
		signo = signal_take(pl);
		if (signo) {
			ret = stop_source(pl, signo, err);
			if (ret < 0)
				return ret;
		}
	}
	if (pl->sq)
		return sinkq_stop(pl, err);
	if (pl->merge)
		return release(pl, UINT64_MAX, err);
	return 0;
}

static int loop_bytes(struct pipeline *pl, struct pipe_err *err)
{
	struct pipe_batch b;
	int ret;

	pl->counted = true; /* the reader counts (creader_stats) */
	for (;;) {
		ret = creader_next(pl->reader, &b, err);
		if (ret == PIPE_EOF)
			return 0;
		if (ret < 0)
			return ret;
		ret = deliver(pl, &b, err);
		if (ret == 0)
			ret = flush_sinks(pl, err);
		if (ret < 0)
			return ret;
		status_update(pl);
		pl->cut_signo = signal_take(pl);
		if (pl->cut_signo)
			return 0; /* finish what was read; run_pipeline says so */
	}
}

/* ---- set-up and tear-down --------------------------------------------- */

static int open_sinks(struct pipeline *pl, struct pipe_err *err)
{
	uint32_t i;
	int ret;

	pl->sinks = calloc(pl->o->nr_sinks, sizeof(*pl->sinks));
	if (!pl->sinks)
		return pipe_err_nomem(err, "cannot open the sinks");
	for (i = 0; i < pl->o->nr_sinks; i++) {
		ret = inst_open(&pl->sinks[i], pl->o->conf, PIPE_KIND_SINK,
				pl->o->sinks[i], &pl->hr, err);
		if (ret < 0)
			return ret;
		pl->nr_sinks++;
		if (pl->sinks[i]->p->flags & PIPE_PLUGIN_SYMBOLS)
			pl->symbols = true;
	}
	return 0;
}

static void sym_warn(void *opaque, const char *line)
{
	(void)opaque;
	print_line("warning: ", line);
}

/*
 * The symbolizer is shared: its debug_dir= comes from whichever sink
 * gives one, and two sinks giving different ones is an error.  (demangle=
 * stays each sink's own: the host applies it per call.)
 */
static int sym_opts_from_sinks(struct pipeline *pl,
			       struct symbolizer_opts *so, struct pipe_err *err)
{
	const struct inst *from = NULL;
	uint32_t i;

	for (i = 0; i < pl->nr_sinks; i++) {
		struct inst *s = pl->sinks[i];
		const char *dir;

		if (!(s->p->flags & PIPE_PLUGIN_SYMBOLS))
			continue;
		/* off when any sink says so; the shortest time limit */
		if (!args_int(s->ctx.args, "debuginfod"))
			so->debuginfod = false;
		if ((uint64_t)args_int(s->ctx.args, "debuginfod_timeout") <
		    so->debuginfod_timeout_ns)
			so->debuginfod_timeout_ns =
				(uint64_t)args_int(s->ctx.args,
						   "debuginfod_timeout");
		dir = args_str(s->ctx.args, "debug_dir");
		if (!dir)
			continue;
		if (from && strcmp(dir, so->debug_dir)) {
			pipe_err_set(err, -EINVAL, "%s and %s give different "
				     "debug_dir= values", from->ctx.what,
				     s->ctx.what);
			pipe_err_hint(err, "the symbolizer is shared: give "
				      "the same directory, or one sink only");
			return -EINVAL;
		}
		so->debug_dir = dir;
		from = s;
	}
	return 0;
}

static int start_sinks(struct pipeline *pl, struct pipe_err *err)
{
	struct symbolizer_opts so = { .demangle = true, .warn = sym_warn,
				      .debuginfod = true,
				      .debuginfod_timeout_ns = UINT64_MAX,
				      .interrupted = &pl->hr.interrupted };
	uint32_t i;
	int ret;

	ret = sym_opts_from_sinks(pl, &so, err);
	if (ret < 0)
		return ret;
	if (pl->symbols) {
		ret = symbolizer_new(&pl->hr.sym, &so, pl->hr.meta, err);
		if (ret < 0)
			return ret;
	}
	if (has_byte_sink(pl)) {
		ret = open_writer(pl, err);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < pl->nr_sinks; i++) {
		ret = inst_start_sink(pl->sinks[i], err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * End the outputs of every sink that started and has not failed: finish
 * runs after a successful run and after a failed one alike, so what the
 * sinks got ends cleanly (a failed sink gets only close).  After a
 * successful run (RUN_END_OK) the files the sinks opened take their place once
 * every finish succeeded; otherwise (a failed or interrupted run) the pipe
 * file keeps the blocks written so far but gets no trailer, so it does
 * not read as a complete recording, and the outputs are abandoned when
 * the sinks are freed.  `first` is the run's failure so far (0: none, err
 * holds it).
 */
static int finish_sinks(struct pipeline *pl, enum run_end how, int first,
			struct pipe_err *err)
{
	struct pipe_err e;
	uint32_t i;
	int ret;

	/* after a failure the sinks' thread may still run: end it first */
	ret = sinkq_stop(pl, &e);
	if (ret < 0)
		first = sink_failed(pl, first, ret, &e, err);
	if (pl->writer) {
		ret = how == RUN_END_OK ? cwriter_finish(pl->writer, &e) :
					  cwriter_cut(pl->writer, &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	for (i = 0; i < pl->nr_sinks; i++) {
		if (!pl->sinks[i]->started || pl->sinks[i]->failed)
			continue;
		ret = inst_finish(pl->sinks[i], &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	for (i = 0; how == RUN_END_OK && !first && i < pl->nr_sinks; i++) {
		ret = inst_outputs_end(pl->sinks[i], RUN_END_OK, &e);
		if (ret < 0)
			first = sink_failed(pl, first, ret, &e, err);
	}
	return first;
}

/* Show the failures that came after the run's first, after it. */
static void show_more(struct pipeline *pl, struct pipe_err *err)
{
	uint32_t i;

	if (!pl->nr_more)
		return;
	pipe_err_print(err);
	for (i = 0; i < pl->nr_more; i++)
		pipe_err_print(&pl->more[i]);
	pipe_err_clear(err);
}

void pipeline_free(struct pipeline *pl)
{
	struct pipe_err ignored;
	uint32_t i;

	sinkq_stop(pl, &ignored);
	cwriter_free(pl->writer);
	for (i = 0; i < pl->nr_sinks; i++)
		inst_free(pl->sinks[i]);
	free(pl->sinks);
	inst_free(pl->codec);
	if (pl->hr.sym)
		symbolizer_free(pl->hr.sym);
	creader_free(pl->reader);
	merge_free(pl->merge);
	meta_free(pl->live_meta);
	for (i = 0; i < pl->nr_open_codecs; i++)
		inst_free(pl->open_codecs[i]);
	free(pl->open_codecs);
	for (i = 0; i < pl->nr_codecs; i++)
		loader_close(pl->codecs[i].lp);
	free(pl->codecs);
	inst_free(pl->src);
	free(pl->win_cpus);
	free(pl->win_pids);
	free(pl->dict_data);
	if (pl->sigfd >= 0)
		close(pl->sigfd);
}

static int exit_status(const struct pipeline *pl, int ret)
{
	int st = pl->hr.command_status;

	/* the command was not found (127) or could not run (126) */
	if (st >= 0 && WIFEXITED(st) &&
	    (WEXITSTATUS(st) == 127 || WEXITSTATUS(st) == 126))
		return WEXITSTATUS(st);
	if (ret < 0)
		return 1;
	if (st < 0)
		return 0;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int run_pipeline(const struct run_opts *o, struct pipe_err *err)
{
	struct pipeline pl = { .o = o, .sigfd = -1 };
	sigset_t old;
	int ret;

	pl.hr.command = o->command;
	pl.hr.command_status = -1;
	pl.hr.quiet = o->quiet;
	pl.hr.verbose = o->verbose;
	pl.hr.tty = isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &pl.t0);
	crash_install();
	ret = signals_open(&pl, &old);
	if (ret < 0) {
		pipe_err_set(err, ret, "cannot set up signals: %s", strerror(-ret));
		goto out;
	}
	/* the command's orphans come back to pipe, to be ended on failure */
	if (o->command) {
		int r = reap_adopt();

		if (r < 0)
			fprintf(stderr, "pipe: warning: cannot adopt the "
				"command's orphans: %s\n", strerror(-r));
	}
	ret = inst_open(&pl.src, o->conf, PIPE_KIND_SOURCE, o->source, &pl.hr,
			err);
	if (ret < 0)
		goto out;
	if (o->command && !(pl.src->p->flags & PIPE_PLUGIN_LIVE)) {
		ret = pipe_err_set(err, -EINVAL,
				   "%s does not run a command",
				   pl.src->ctx.what);
		pipe_err_hint(err, "a command after -- needs a live source, such as -s perf");
		pl.usage_error = true;
		goto out;
	}
	/* a byte source's subject, or a record source's `path`, is a file
	 * this run reads: never an output */
	if (pl.src->p->flags & PIPE_PLUGIN_BYTES)
		pl.hr.input = inst_subject(pl.src);
	else if (args_has(pl.src->ctx.args, "path"))
		pl.hr.input = args_str(pl.src->ctx.args, "path");
	ret = open_sinks(&pl, err);
	if (ret < 0)
		goto out;
	if (o->codec && !has_byte_sink(&pl)) {
		ret = pipe_err_set(err, -EINVAL,
				   "-c '%s' needs a sink that writes a pipe file",
				   o->codec);
		pipe_err_hint(err, "add one, such as -k file:out.dat");
		pl.usage_error = true;
		goto out;
	}
	if (pl.src->p->flags & PIPE_PLUGIN_BYTES) {
		ret = open_reader(&pl, 0, err);
	} else {
		pl.live_meta = meta_new();
		pl.hr.meta = pl.live_meta;
		ret = pl.live_meta ? inst_start(pl.src, err) :
			pipe_err_nomem(err, "cannot start %s",
				       pl.src->ctx.what);
	}
	if (ret < 0)
		goto out;
	ret = start_sinks(&pl, err);
	if (ret < 0)
		goto out;
	if (pl.reader)
		ret = loop_bytes(&pl, err);
	else
		ret = loop_records(&pl, err);
	if (ret < 0) {
		/* keep what was written: close the outputs cleanly anyway */
		status_clear(&pl);
		finish_sinks(&pl, RUN_END_FAILED, ret, err);
		goto out;
	}
	status_clear(&pl);
	/* an interrupted read: the outputs have what was read, a pipe file
	 * is cut (no trailer), an existing file is not replaced by them, and
	 * the exit status says so (128+N) */
	ret = finish_sinks(&pl, pl.cut_signo ? RUN_END_FAILED : RUN_END_OK, 0,
			   err);
	if (ret == 0 && pl.cut_signo)
		say_cut(&pl);
	if (ret == 0 && (pl.src->p->flags & PIPE_PLUGIN_LIVE) && !o->quiet)
		print_summary(&pl);
	if (ret == 0) {
		warn_dropped(&pl);
		warn_malformed(&pl);
	}
out:
	{
		int code = exit_status(&pl, ret);

		if (pl.usage_error && ret < 0)
			code = 2;
		if (ret == 0 && pl.cut_signo)
			code = 128 + pl.cut_signo;
		/* a failed run ends the command and all it started, as perf
		 * record ends its workload: SIGTERM, then SIGKILL */
		if (ret < 0 && o->command)
			reap_terminate(RUN_REAP_GRACE_MS);
		if (ret < 0)
			show_more(&pl, err);
		if (o->breaches)
			*o->breaches = pl.hr.breaches;
		pipeline_free(&pl);
		if (ret < 0 && o->command)
			reap_all(RUN_REAP_GRACE_MS);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return code;
	}
}

