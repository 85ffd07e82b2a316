/*
 * src_perf.c - the live `perf` record source: one perf_event_open per
 * event, CPU (and thread) with one mmap ring per CPU shared through
 * PERF_EVENT_IOC_SET_OUTPUT; records are handed out as views into the
 * rings.  Modes: `-- CMD`, the whole system, or running pid=/tid= lists.
 * This file: the plugin's table, open and close, the command, start and
 * stop; the rest of the plugin shares perfsrc.h.  See
 * docs/perf-source.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "perfsrc.h"

static const struct pipe_param perf_params[] = {
	{ "event", PIPE_PARAM_LIST, PIPE_PARAM_POSITIONAL, "cycles",
	  "events to sample, joined with + (cycles falls back to cpu-clock)",
	  NULL, 0, 0 },
	{ "freq", PIPE_PARAM_INT, 0, NULL,
	  "samples per second per CPU (default 4000)", NULL, 1, 10000000 },
	{ "period", PIPE_PARAM_INT, 0, NULL,
	  "sample every N events instead of freq=", NULL, 1,
	  INT64_C(1000000000000) },
	{ "callchain", PIPE_PARAM_STR, 0, "fp",
	  "call chains: fp (frame pointers), dwarf[:SIZE] (user registers "
	  "and SIZE bytes of stack, default 8K, unwound when read), off",
	  NULL, 0, 0 },
	{ "cpus", PIPE_PARAM_LIST, 0, NULL,
	  "CPUs to record, like 0-3+8 (default: all online)", NULL, 0, 0 },
	{ "pages", PIPE_PARAM_INT, 0, "128",
	  "ring size per CPU in pages, a power of 2", NULL, 1, 1 << 20 },
	{ "duration", PIPE_PARAM_DURATION, 0, NULL,
	  "stop after this long (default: until stopped)", NULL, 0, 0 },
	{ "kernel", PIPE_PARAM_BOOL, 0, NULL,
	  "sample in the kernel too (default: on where permitted)", NULL, 0,
	  0 },
	{ "pid", PIPE_PARAM_LIST, 0, NULL,
	  "attach to these running processes (all their threads)", NULL, 0,
	  0 },
	{ "tid", PIPE_PARAM_LIST, 0, NULL, "attach to these running threads",
	  NULL, 0, 0 },
	{ "wake", PIPE_PARAM_STR, 0, "auto",
	  "auto: with a command or pid= whose tasks exit often, drain the "
	  "rings on a timer sized by the most the events can write "
	  "(cpu-clock, task-clock with freq=); mark: always at the rings' "
	  "watermarks", NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static void perf_close(void *state);

static int perf_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		     void **state)
{
	struct perf_src *s;
	int ret;

	*state = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->host = host;
	s->ctx = ctx;
	s->cur = -1;
	s->child_pidfd = -1;
	s->timerfd = -1;
	s->hup_timerfd = -1;
	s->drain_timerfd = -1;
	ret = perf_configure(s);
	if (ret < 0) {
		/* the host calls close only for an instance that opened */
		perf_close(s);
		return ret;
	}
	*state = s;
	return 0;
}

static void perf_close(void *state)
{
	struct perf_src *s = state;
	uint32_t i;

	if (!s)
		return;
	if (s->child > 0 && !s->child_reaped) {
		kill(s->child, SIGKILL);
		while (waitpid(s->child, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (s->rings) {
		for (i = 0; i < s->nr_cpus; i++) {
			if (s->rings[i].map)
				munmap(s->rings[i].map, s->rings[i].map_len);
			free(s->rings[i].bounce);
		}
	}
	for (i = 0; s->fds && i < s->nr_fds; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	for (i = 0; s->dummy_fds && i < s->nr_cpus; i++)
		if (s->dummy_fds[i] >= 0)
			close(s->dummy_fds[i]);
	for (i = 0; s->pidfds && i < s->nr_pids; i++)
		if (s->pidfds[i] >= 0)
			close(s->pidfds[i]);
	if (s->child_pidfd >= 0)
		close(s->child_pidfd);
	if (s->timerfd >= 0)
		close(s->timerfd);
	if (s->hup_timerfd >= 0)
		close(s->hup_timerfd);
	if (s->drain_timerfd >= 0)
		close(s->drain_timerfd);
	free(s->rings);
	free(s->fds);
	free(s->ids);
	free(s->dummy_fds);
	free(s->pidfds);
	free(s->cpus);
	free(s->targets);
	free(s->pids);
	free(s->recs);
	free(s->synth);
	free(s->synth_recs);
	free(s->final_buf);
	free(s->final_recs);
	free(s);
}

/* ---- the command -------------------------------------------------------- */

/* In the child: wait for the go byte, then exec; on failure send errno. */
static void child_run(char *const *argv, int go_fd, int err_fd)
{
	struct sigaction sa;
	sigset_t none;
	ssize_t n;
	char c;
	int e;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	do {
		n = read(go_fd, &c, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* pipe gave up before the exec */
	execvp(argv[0], argv);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

static int command_fork(struct perf_src *s, int *go_fd, int *err_fd)
{
	char *const *argv = s->host->command(s->ctx);
	int go[2], er[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(er, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		s->host->error(s->ctx, "cannot run '%s': %s", argv[0],
			       strerror(-err));
		close(go[0]);
		close(go[1]);
		close(er[0]);
		close(er[1]);
		return err;
	}
	if (pid == 0) {
		close(go[1]);
		close(er[0]);
		child_run(argv, go[0], er[1]);
	}
	close(go[0]);
	close(er[1]);
	s->child = pid;
	s->host->command_started(s->ctx, pid);
	*go_fd = go[1];
	*err_fd = er[0];
	s->child_pidfd = pidfd_open(pid);
	if (s->child_pidfd < 0) {
		s->host->error(s->ctx, "cannot watch command '%s': %s",
			       argv[0], strerror(-s->child_pidfd));
		s->host->hint(s->ctx, "pipe needs pidfd_open (Linux 5.3)");
		return s->child_pidfd;
	}
	s->targets = calloc(1, sizeof(*s->targets));
	if (!s->targets)
		return -ENOMEM;
	s->targets[0] = pid;
	s->nr_targets = 1;
	return 0;
}

/* Let the child exec; an exec failure comes back as an errno. */
static int command_release(struct perf_src *s, int go_fd, int err_fd)
{
	char *const *argv = s->host->command(s->ctx);
	int e = 0, status = 0;
	ssize_t n;

	n = write(go_fd, "g", 1);
	close(go_fd);
	if (n != 1) {
		s->host->error(s->ctx, "cannot start command '%s': %s",
			       argv[0], strerror(errno));
		return -EIO;
	}
	do {
		n = read(err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(err_fd);
	if (n != (ssize_t)sizeof(e))
		return 0;
	while (waitpid(s->child, &status, 0) < 0 && errno == EINTR)
		;
	s->child_reaped = true;
	s->host->error(s->ctx, "cannot run '%s': %s", argv[0], strerror(e));
	s->host->command_exited(s->ctx, (e == ENOENT ? 127 : 126) << 8);
	return -e;
}

/* ---- start, stop ------------------------------------------------------- */

static int timer_start(struct perf_src *s)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(s->duration_ns / 1000000000);
	its.it_value.tv_nsec = (long)(s->duration_ns % 1000000000);
	clock_gettime(CLOCK_MONOTONIC, &s->deadline);
	s->deadline.tv_sec += its.it_value.tv_sec;
	s->deadline.tv_nsec += its.it_value.tv_nsec;
	if (s->deadline.tv_nsec >= 1000000000) {
		s->deadline.tv_sec++;
		s->deadline.tv_nsec -= 1000000000;
	}
	s->timerfd = timerfd_create(CLOCK_MONOTONIC,
				    TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->timerfd < 0 || timerfd_settime(s->timerfd, 0, &its, NULL) < 0) {
		s->host->error(s->ctx, "cannot start the duration timer: %s",
			       strerror(errno));
		return -errno;
	}
	return 0;
}

static int watch_pids(struct perf_src *s)
{
	uint32_t i;

	s->pidfds = malloc((s->nr_pids + 1) * sizeof(*s->pidfds));
	if (!s->pidfds)
		return -ENOMEM;
	for (i = 0; i < s->nr_pids; i++)
		s->pidfds[i] = pidfd_open(s->pids[i]);
	return 0;
}

/* A small number from /proc/sys/kernel, or `dflt`. */
static uint64_t sysctl_u64(const char *path, uint64_t dflt)
{
	char buf[32];
	uint32_t v;
	char *nl;

	if (read_text(path, buf, sizeof(buf)) <= 0)
		return dflt;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return parse_u32(buf, &v) == 0 ? v : dflt;
}

/* The largest sample our sample_type lets the kernel write, in bytes. */
static uint64_t sample_max(const struct perf_src *s)
{
	/* header, IDENTIFIER IP TID TIME CPU PERIOD */
	uint64_t n = 8 + 6 * 8;

	if (s->sample_type & PERF_SAMPLE_CALLCHAIN)
		n += 8 + 8 * (sysctl_u64("/proc/sys/kernel/perf_event_max_stack",
					 127) +
			      sysctl_u64("/proc/sys/kernel/"
					 "perf_event_max_contexts_per_stack",
					 8));
	if (s->sample_type & PERF_SAMPLE_REGS_USER)
		n += 8 + 8 * (uint64_t)__builtin_popcountll(PERF_REGS_USER);
	if (s->sample_type & PERF_SAMPLE_STACK_USER)
		n += 16 + s->stack_size;
	return n;
}

/*
 * Whether a timer may drain the rings (perf_ring.c, drain_plan): the
 * events are inherited (a command, pid=), so exits kick the poller, and
 * each samples on a timer at most freq= times a second per CPU.
 */
static void drain_timer_open(struct perf_src *s)
{
	uint32_t e;

	if (s->wake_mark || s->use_period || !s->nr_cpus ||
	    s->mode == PERF_MODE_SYSTEM)
		return;
	for (e = 0; e < s->nr_events; e++)
		if (s->attrs[e].type != PERF_TYPE_SOFTWARE ||
		    (s->attrs[e].config != PERF_COUNT_SW_CPU_CLOCK &&
		     s->attrs[e].config != PERF_COUNT_SW_TASK_CLOCK))
			return;
	s->drain_timerfd = timerfd_create(CLOCK_MONOTONIC,
					  TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->drain_timerfd < 0)
		return; /* the watermarks then, as with wake=mark */
	s->drain_level = s->rings[0].size / 4 * 3;
	s->mark_bytes = s->attrs[0].wakeup_watermark;
	s->samples_max = (double)s->rate * s->nr_events *
			 (double)sample_max(s);
	s->timed_ok = s->mark_bytes > 0;
}

static int perf_start(void *state)
{
	struct perf_src *s = state;
	int go_fd = -1, err_fd = -1;
	int ret;

	s->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			 PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (s->chain != PERF_CHAIN_NONE)
		s->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (s->chain == PERF_CHAIN_DWARF)
		s->sample_type |= PERF_SAMPLE_REGS_USER |
				  PERF_SAMPLE_STACK_USER;
	if (s->mode == PERF_MODE_SYSTEM) {
		s->targets = calloc(1, sizeof(*s->targets));
		if (!s->targets)
			return -ENOMEM;
		s->targets[0] = -1;
		s->nr_targets = 1;
	} else if (s->mode == PERF_MODE_COMMAND) {
		ret = command_fork(s, &go_fd, &err_fd);
		if (ret < 0)
			goto out;
	}
	ret = open_events(s);
	if (ret < 0)
		goto out;
	drain_timer_open(s);
	ret = meta_events(s);
	if (ret < 0)
		goto out;
	ret = meta_props(s);
	if (ret < 0)
		goto out;
	ret = synth_tasks(s);
	if (ret < 0)
		goto out;
	if (s->mode == PERF_MODE_ATTACH) {
		ret = watch_pids(s);
		if (ret < 0)
			goto out;
	}
	if (s->duration_ns) {
		ret = timer_start(s);
		if (ret < 0)
			goto out;
	}
	if (s->mode == PERF_MODE_COMMAND) {
		ret = command_release(s, go_fd, err_fd);
		go_fd = -1;
		err_fd = -1;
	} else {
		ret = enable_all(s, PERF_EVENT_IOC_ENABLE);
	}
	if (ret == 0)
		s->started = true;
out:
	if (go_fd >= 0)
		close(go_fd); /* the child sees EOF and exits */
	if (err_fd >= 0)
		close(err_fd);
	return ret;
}

/* Disable every event; from here on reads drain the rings and end. */
void begin_stop(struct perf_src *s)
{
	if (s->stopping)
		return;
	enable_all(s, PERF_EVENT_IOC_DISABLE);
	s->stopping = true;
}

static int perf_stop(void *state, int signo)
{
	struct perf_src *s = state;

	if (s->child > 0 && !s->child_reaped) {
		/* the command decides: recording ends when it exits */
		kill(s->child, signo ? signo : SIGTERM);
		return 0;
	}
	begin_stop(s);
	return 0;
}

/* Whether the recording should end now: duration over, the command or
 * every attached process gone. */
bool should_end(struct perf_src *s)
{
	struct timespec now;
	struct pollfd pfd;
	uint32_t i, gone = 0;
	int status;

	if (s->duration_ns && !s->duration_over) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > s->deadline.tv_sec ||
		    (now.tv_sec == s->deadline.tv_sec &&
		     now.tv_nsec >= s->deadline.tv_nsec)) {
			uint64_t ticks;

			s->duration_over = true;
			/* drain the timerfd so it stops waking the poller */
			if (read(s->timerfd, &ticks, sizeof(ticks)) < 0)
				ticks = 0;
			if (s->child > 0 && !s->child_reaped)
				kill(s->child, SIGTERM);
			else
				return true;
		}
	}
	if (s->child > 0 && !s->child_reaped) {
		pid_t r = waitpid(s->child, &status, WNOHANG);

		if (r == s->child) {
			s->child_reaped = true;
			s->host->command_exited(s->ctx, status);
			return true;
		}
		return false;
	}
	for (i = 0; s->pidfds && i < s->nr_pids; i++) {
		pfd.fd = s->pidfds[i];
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (pfd.fd >= 0 && poll(&pfd, 1, 0) == 1)
			gone++;
	}
	/* with tid= too, the recording runs until stopped */
	return s->mode == PERF_MODE_ATTACH && s->nr_pids &&
	       gone == s->nr_pids && !s->tids_given;
}

static int perf_fds(void *state, int *fds, uint32_t cap)
{
	struct perf_src *s = state;
	bool rings = s->rings ? drain_plan(s) : true;
	uint32_t n = 0, i;

	for (i = 0; rings && s->rings && i < s->nr_cpus && n < cap; i++)
		if (s->rings[i].fd >= 0 && !s->rings[i].hup)
			fds[n++] = s->rings[i].fd;
	if (!rings && n < cap)
		fds[n++] = s->drain_timerfd;
	if (s->child_pidfd >= 0 && !s->child_reaped && n < cap)
		fds[n++] = s->child_pidfd;
	for (i = 0; s->pidfds && i < s->nr_pids && n < cap; i++)
		if (s->pidfds[i] >= 0)
			fds[n++] = s->pidfds[i];
	if (s->timerfd >= 0 && n < cap)
		fds[n++] = s->timerfd;
	if (s->hup_timerfd >= 0 && n < cap)
		fds[n++] = s->hup_timerfd;
	return (int)n;
}

PIPE_PLUGIN_SOURCE(
	.flags = PIPE_PLUGIN_LIVE,
	.name = "perf",
	.summary = "record live with perf_event_open: a command, the whole "
		   "system or running processes",
	.version = "1.0",
	.params = perf_params,
	.open = perf_open,
	.close = perf_close,
	.start = perf_start,
	.read = perf_read,
	.fds = perf_fds,
	.stop = perf_stop
);
