/*
 * perf_events.c - opening the events: one perf_event_open per event, CPU
 * (and thread), one mmap ring per CPU shared through
 * PERF_EVENT_IOC_SET_OUTPUT, and the errors that say why the kernel
 * refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfsrc.h"

/*
 * Where a ring wakes the poller: fewer wake-ups disturb the workload
 * less, so as full as leaves a quarter of a second of slack at the rate
 * the ring probably fills (the frequency, the events, about 128 bytes a
 * sample with a call chain), between half full (perf's) and three
 * quarters; half with period= (the rate is not known).  The thread that
 * drains the rings never writes, so the slack is only its own wake-up.
 */
static uint32_t wake_mark(const struct perf_src *s, uint64_t ring)
{
	uint64_t per = s->chain == PERF_CHAIN_DWARF ? s->stack_size + 128 :
		       s->chain != PERF_CHAIN_NONE ? 128 : 64;
	uint64_t rate = s->rate * s->nr_events * per, mark = ring / 2;

	if (!s->use_period && rate / 4 < ring / 4)
		mark = ring / 4 * 3;
	else if (!s->use_period && rate / 4 < ring / 2)
		mark = ring - rate / 4;
	return (uint32_t)(mark > 4096 ? mark : 4096);
}

static void attr_init(struct perf_src *s, uint32_t e,
		      struct perf_event_attr *a)
{
	uint64_t ring = (uint64_t)s->pages * (uint64_t)sysconf(_SC_PAGESIZE);

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = s->events[e].type;
	a->config = s->events[e].config;
	a->sample_type = s->sample_type;
	if (s->use_period) {
		a->sample_period = s->rate;
	} else {
		a->freq = 1;
		a->sample_freq = s->rate;
	}
	a->read_format = s->lost_format ? PERF_FORMAT_LOST : 0;
	a->disabled = 1;
	a->sample_id_all = 1;
	a->exclude_kernel = !s->kernel;
	a->exclude_hv = !s->kernel;
	a->exclude_callchain_kernel = !s->kernel;
	if (s->chain == PERF_CHAIN_DWARF) {
		/* the user part comes from unwinding the stack dump */
		a->exclude_callchain_user = 1;
		a->sample_regs_user = PERF_REGS_USER;
		a->sample_stack_user = s->stack_size;
	}
	if (s->mode != PERF_MODE_SYSTEM)
		a->inherit = 1;
	if (s->mode == PERF_MODE_COMMAND)
		a->enable_on_exec = 1;
	a->watermark = 1;
	a->wakeup_watermark = wake_mark(s, ring);
	if (e == 0) {
		/* the sideband, once per CPU (and thread) */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->build_id = 1;
	}
}

static void refusal_error(struct perf_src *s)
{
	int level = paranoid_level();

	s->host->error(s->ctx, "cannot open perf events: permission denied "
		       "(perf_event_paranoid is %d)", level);
	if (s->mode == PERF_MODE_SYSTEM)
		s->host->hint(s->ctx, "recording the whole system needs root "
			      "or CAP_PERFMON, or sysctl "
			      "kernel.perf_event_paranoid=0; or record a "
			      "command with -- CMD");
	else if (s->kernel)
		s->host->hint(s->ctx, "kernel samples need root or "
			      "CAP_PERFMON, or sysctl "
			      "kernel.perf_event_paranoid=1; or add "
			      "kernel=off");
	else
		s->host->hint(s->ctx, "run as the owner of the process, as "
			      "root, or with CAP_PERFMON; see sysctl "
			      "kernel.perf_event_paranoid");
}

static bool not_supported(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV;
}

/*
 * Open event e for (cpu, pid), probing on the first open of each event:
 * build_id and PERF_FORMAT_LOST are dropped on EINVAL (older kernels) and
 * cycles falls back to cpu-clock where there is no hardware PMU.
 */
static int open_probe(struct perf_src *s, uint32_t e, pid_t pid, int cpu)
{
	struct perf_event_attr *a = &s->attrs[e];
	int fd;

	for (;;) {
		fd = perf_event_open(a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0)
			return fd;
		if (fd == -EINVAL && a->build_id) {
			a->build_id = 0;
			continue;
		}
		if (fd == -EINVAL && (a->read_format & PERF_FORMAT_LOST)) {
			s->lost_format = false;
			a->read_format = 0;
			continue;
		}
		if (not_supported(fd) && a->type == PERF_TYPE_HARDWARE &&
		    a->config == PERF_COUNT_HW_CPU_CYCLES) {
			s->host->log(s->ctx, PIPE_LOG_NOTE, "event '%s' is "
				     "not supported here, recording "
				     "'cpu-clock' instead",
				     s->events[e].name);
			s->events[e] = *event_lookup("cpu-clock");
			a->type = PERF_TYPE_SOFTWARE;
			a->config = PERF_COUNT_SW_CPU_CLOCK;
			continue;
		}
		return fd;
	}
}

static int open_error(struct perf_src *s, uint32_t e, pid_t pid, int cpu,
		      int err)
{
	if (err == -EACCES || err == -EPERM) {
		refusal_error(s);
		return err;
	}
	if (not_supported(err)) {
		s->host->error(s->ctx, "cannot open event '%s': not supported "
			       "on this machine", s->events[e].name);
		s->host->hint(s->ctx, "software events work everywhere: "
			      "event=cpu-clock");
		return err;
	}
	if (err == -ESRCH) {
		s->host->error(s->ctx, "cannot attach to tid '%d': no such "
			       "thread", (int)pid);
		return err;
	}
	if (err == -EMFILE || err == -ENFILE) {
		s->host->error(s->ctx, "cannot open event '%s' on cpu '%d': "
			       "%s", s->events[e].name, cpu, strerror(-err));
		s->host->hint(s->ctx, "one file per event, cpu and thread: "
			      "raise 'ulimit -n' or record fewer cpus");
		return err;
	}
	s->host->error(s->ctx, "cannot open event '%s' on cpu '%d': %s",
		       s->events[e].name, cpu, strerror(-err));
	if (err == -EINVAL && !s->use_period)
		s->host->hint(s->ctx, "the kernel may refuse freq=%" PRIu64
			      ": see /proc/sys/kernel/"
			      "perf_event_max_sample_rate", s->rate);
	return err;
}

static int ring_map(struct perf_src *s, struct perf_ring *r, int fd)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);

	r->fd = fd;
	r->map_len = (1 + (size_t)s->pages) * psz;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fd, 0);
	if (r->map == MAP_FAILED) {
		int err = -errno;

		r->map = NULL;
		s->host->error(s->ctx, "cannot map the ring of cpu '%d': %s",
			       r->cpu, strerror(-err));
		if (err == -EPERM || err == -ENOMEM)
			s->host->hint(s->ctx, "use fewer pages= or raise "
				      "/proc/sys/kernel/perf_event_mlock_kb");
		return err;
	}
	r->page = r->map;
	r->data = (const uint8_t *)r->map + psz;
	r->size = (uint64_t)s->pages * psz;
	r->tail = __atomic_load_n(&r->page->data_tail, __ATOMIC_RELAXED);
	r->bounce = malloc(PERF_REC_MAX);
	if (!r->bounce)
		return -ENOMEM;
	return 0;
}

/* attach mode: a dummy event on ourselves owns each CPU's ring, so a
 * target thread that exits leaves no hung-up fd in the poll set. */
static int open_dummy(struct perf_src *s, uint32_t c)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = s->sample_type;
	/* the kernel refuses a stack sample type without its sizes */
	a.sample_regs_user = s->attrs[0].sample_regs_user;
	a.sample_stack_user = s->attrs[0].sample_stack_user;
	a.sample_id_all = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.watermark = 1;
	a.wakeup_watermark = s->attrs[0].wakeup_watermark;
	fd = perf_event_open(&a, 0, s->cpus[c], -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		s->host->error(s->ctx, "cannot open the ring of cpu '%d': %s",
			       s->cpus[c], strerror(-fd));
		return fd;
	}
	s->dummy_fds[c] = fd;
	return ring_map(s, &s->rings[c], fd);
}

uint32_t fd_index(const struct perf_src *s, uint32_t e, uint32_t c,
		  uint32_t t)
{
	return (e * s->nr_cpus + c) * s->nr_targets + t;
}

int open_events(struct perf_src *s)
{
	uint32_t e, c, t, i;
	int fd, ret;
	pid_t pid;

	s->nr_fds = s->nr_events * s->nr_cpus * s->nr_targets;
	if (s->nr_fds > PERF_MAX_FDS) {
		s->host->error(s->ctx, "too many events to open: %u events x "
			       "%u cpus x %u threads", s->nr_events,
			       s->nr_cpus, s->nr_targets);
		s->host->hint(s->ctx, "record fewer cpus= or threads");
		return -E2BIG;
	}
	s->fds = malloc(s->nr_fds * sizeof(*s->fds));
	s->ids = calloc(s->nr_fds, sizeof(*s->ids));
	s->rings = calloc(s->nr_cpus, sizeof(*s->rings));
	if (!s->fds || !s->ids || !s->rings)
		return -ENOMEM;
	for (i = 0; i < s->nr_fds; i++)
		s->fds[i] = -1;
	for (c = 0; c < s->nr_cpus; c++) {
		s->rings[c].cpu = s->cpus[c];
		s->rings[c].fd = -1;
		s->rings[c].last_event = PIPE_EVENT_NONE;
	}
	if (s->mode == PERF_MODE_ATTACH) {
		s->dummy_fds = malloc(s->nr_cpus * sizeof(*s->dummy_fds));
		if (!s->dummy_fds)
			return -ENOMEM;
		for (c = 0; c < s->nr_cpus; c++)
			s->dummy_fds[c] = -1;
	}
	s->lost_format = true;
	for (e = 0; e < s->nr_events; e++)
		attr_init(s, e, &s->attrs[e]);
	for (e = 0; e < s->nr_events; e++) {
		/* a probe on event 0 may have dropped the LOST format */
		if (!s->lost_format)
			s->attrs[e].read_format = 0;
		for (c = 0; c < s->nr_cpus; c++) {
			if (s->mode == PERF_MODE_ATTACH && e == 0) {
				ret = open_dummy(s, c);
				if (ret < 0)
					return ret;
			}
			for (t = 0; t < s->nr_targets; t++) {
				pid = s->targets[t];
				i = fd_index(s, e, c, t);
				fd = open_probe(s, e, pid, s->cpus[c]);
				if (fd < 0)
					return open_error(s, e, pid,
							  s->cpus[c], fd);
				s->fds[i] = fd;
				if (ioctl(fd, PERF_EVENT_IOC_ID, &s->ids[i]) <
				    0) {
					s->host->error(s->ctx, "cannot read "
						       "the id of event '%s': "
						       "%s", s->events[e].name,
						       strerror(errno));
					return -errno;
				}
				if (!s->rings[c].map) {
					ret = ring_map(s, &s->rings[c], fd);
					if (ret < 0)
						return ret;
					continue;
				}
				if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
					  s->rings[c].fd) < 0) {
					s->host->error(s->ctx, "cannot share "
						       "the ring of cpu '%d': "
						       "%s", s->cpus[c],
						       strerror(errno));
					return -errno;
				}
			}
		}
	}
	return 0;
}

int enable_all(struct perf_src *s, unsigned long req)
{
	uint32_t i;

	for (i = 0; i < s->nr_fds; i++) {
		if (s->fds[i] >= 0 && ioctl(s->fds[i], req, 0) < 0 &&
		    req == PERF_EVENT_IOC_ENABLE) {
			s->host->error(s->ctx, "cannot enable the events: %s",
				       strerror(errno));
			return -errno;
		}
	}
	return 0;
}
