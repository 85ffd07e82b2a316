/*
 * src_perf.c - the live `perf` record source: one perf_event_open per
 * event, CPU (and thread) with one mmap ring per CPU shared through
 * PERF_EVENT_IOC_SET_OUTPUT; records are handed out as views into the
 * rings.  Modes: `-- CMD`, the whole system, or running pid=/tid= lists.
 * See docs/perf-source.md.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipe_plugin.h"

#define PERF_MAX_EVENTS 32      /* event= items */
#define PERF_MAX_CPUS 4096      /* matches the metadata's stream limit */
#define PERF_MAX_TARGETS 4096   /* threads of pid=/tid= */
#define PERF_MAX_FDS 65536      /* events x cpus x threads */
#define PERF_SYNTH_MAX (64u << 20) /* bytes of /proc records at start */
#define PERF_REC_MAX 65536      /* perf_event_header.size is 16 bits */
#define PERF_TRAILER 32         /* sample_id_all: TID TIME CPU IDENTIFIER */

/* A named event the user may ask for. */
struct perf_event_name {
	const char *name;  /* as given in event= */
	uint32_t type;     /* PERF_TYPE_HARDWARE or _SOFTWARE */
	uint64_t config;   /* PERF_COUNT_* */
};

static const struct perf_event_name perf_names[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
};

/* One CPU's mmap ring and what went through it. */
struct perf_ring {
	int cpu;                /* CPU number */
	int fd;                 /* the event that owns the mapping */
	void *map;              /* 1 + 2^n pages */
	size_t map_len;         /* bytes mapped */
	struct perf_event_mmap_page *page; /* control page */
	const uint8_t *data;    /* data pages */
	uint64_t size;          /* data bytes, a power of 2 */
	uint64_t tail;          /* consumed up to here (not yet published) */
	uint64_t lost;          /* sum of PERF_RECORD_LOST.lost seen */
	uint64_t throttled;     /* PERF_RECORD_THROTTLE records seen */
	uint64_t last_time;     /* time of the newest record seen, ns */
	uint8_t *bounce;        /* the one record per batch that wraps */
	bool hup;               /* its task exited: left out of the poll set */
	uint64_t last_id;       /* kernel id of the previous record */
	uint32_t last_event;    /* its event index (PIPE_EVENT_NONE: none) */
};

/* Call chains to record. */
enum perf_chain {
	PERF_CHAIN_NONE = 0,  /* the ip alone */
	PERF_CHAIN_FP = 1,    /* the kernel walks frame pointers */
	PERF_CHAIN_DWARF = 2, /* user registers and stack, unwound later */
};

/* callchain=dwarf: default and largest user stack dump (as perf) */
#define PERF_STACK_DEFAULT 8192
#define PERF_STACK_MAX 65528

#if defined(__x86_64__)
/*
 * The user registers recorded for DWARF unwinding on x86_64: the ip, the
 * stack pointer and the callee-saved registers (BX, BP, R12-R15), all a
 * CFI unwinder reads at the interrupted frame of compiled code.  perf
 * records the caller-saved ones too (mask 0xff0fff): they change at every
 * sample and cost a third of the compressed bytes.
 */
#define PERF_REGS_USER UINT64_C(0xf001c2)
#else
#define PERF_REGS_USER UINT64_C(0)
#endif

/* What the recording targets. */
enum perf_mode {
	PERF_MODE_SYSTEM = 0,   /* pid=-1 on every CPU */
	PERF_MODE_COMMAND = 1,  /* the forked `-- CMD` and its children */
	PERF_MODE_ATTACH = 2,   /* running pid=/tid= threads */
};

struct perf_src {
	const struct pipe_host *host;
	struct pipe_ctx *ctx;

	/* parameters */
	struct perf_event_name events[PERF_MAX_EVENTS]; /* to record */
	uint32_t nr_events;
	int32_t *cpus;          /* CPU of each stream */
	uint32_t nr_cpus;
	pid_t *targets;         /* threads (attach) or the child (command) */
	uint32_t nr_targets;
	pid_t *pids;            /* processes of pid= (exit tracking) */
	uint32_t nr_pids;
	bool tids_given;        /* tid= was given (run until stopped) */
	enum perf_chain chain;  /* call chains: none, frame pointers, DWARF */
	uint32_t stack_size;    /* chain=dwarf: user stack bytes per sample */
	bool kernel;            /* samples in the kernel too */
	bool use_period;        /* period= rather than freq= */
	uint64_t rate;          /* frequency in Hz, or the period */
	uint32_t pages;         /* data pages per ring */
	int64_t duration_ns;    /* 0: until stopped */
	enum perf_mode mode;

	/* events */
	struct perf_event_attr attrs[PERF_MAX_EVENTS]; /* as recorded */
	bool lost_format;       /* read_format has PERF_FORMAT_LOST */
	int *fds;               /* [event][cpu][target], -1 when closed */
	uint64_t *ids;          /* kernel id of each fd */
	uint32_t nr_fds;
	int *dummy_fds;         /* attach mode: per-CPU ring owners */
	struct perf_ring *rings; /* one per CPU stream */
	uint64_t sample_type;

	/* reading */
	struct pipe_record *recs; /* the batch handed out */
	size_t recs_cap;
	int cur;                /* ring whose views are out, -1: none */
	uint32_t next;          /* next ring of the current pass */
	bool started;           /* start() succeeded */
	bool stopping;          /* events disabled; drain then end */
	bool final_done;        /* the last lost counts were read */
	uint8_t *final_buf;     /* LOST records made from lost counts */
	struct pipe_record *final_recs;

	/* /proc records for tasks alive at the start */
	uint8_t *synth;
	size_t synth_len;
	size_t synth_cap;
	struct pipe_record *synth_recs;
	size_t synth_nr;
	size_t synth_recs_cap;
	bool synth_pending;     /* not handed out yet */

	/* command */
	pid_t child;            /* 0: none */
	int child_pidfd;        /* -1: none */
	bool child_reaped;
	int *pidfds;            /* attach mode: one per pid= process */
	int timerfd;            /* duration=, -1: none */
	int hup_timerfd;        /* drains hung-up rings, -1: none */
	struct timespec deadline; /* CLOCK_MONOTONIC end of duration= */
	bool duration_over;     /* the deadline passed */
};

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
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			   int group_fd, unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			  flags);

	return fd < 0 ? -errno : (int)fd;
}

static int pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
}

/* Read a small text file into buf (NUL-terminated); bytes or -errno. */
static ssize_t read_text(const char *path, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len + 1 < cap) {
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	return (ssize_t)len;
}

static int paranoid_level(void)
{
	char buf[32];
	long v;

	if (read_text("/proc/sys/kernel/perf_event_paranoid", buf,
		      sizeof(buf)) <= 0)
		return 2;
	v = strtol(buf, NULL, 10);
	return (int)v;
}

/* Whether kernel samples are permitted: root, CAP_PERFMON, CAP_SYS_ADMIN
 * or perf_event_paranoid below 2. */
static bool kernel_permitted(void)
{
	char buf[4096];
	const char *p;
	uint64_t caps;

	if (geteuid() == 0 || paranoid_level() < 2)
		return true;
	if (read_text("/proc/self/status", buf, sizeof(buf)) <= 0)
		return false;
	p = strstr(buf, "\nCapEff:");
	if (!p)
		return false;
	caps = strtoull(p + 8, NULL, 16);
	return (caps & (UINT64_C(1) << 38)) || (caps & (UINT64_C(1) << 21));
}

/* Parse a decimal number that must fill the whole text. */
static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* Parse a kernel CPU list "0-3,8" into a bitmap of PERF_MAX_CPUS. */
static void parse_cpu_mask(const char *s, uint8_t *mask)
{
	char *end;
	unsigned long a, b;

	while (*s && *s != '\n') {
		a = strtoul(s, &end, 10);
		if (end == s)
			return;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtoul(s + 1, &end, 10);
			s = end;
		}
		for (; a <= b && a < PERF_MAX_CPUS; a++)
			mask[a / 8] |= (uint8_t)(1u << (a % 8));
		if (*s == ',')
			s++;
	}
}

static bool mask_has(const uint8_t *mask, uint32_t cpu)
{
	return cpu < PERF_MAX_CPUS && (mask[cpu / 8] & (1u << (cpu % 8)));
}

static int cpus_add(struct perf_src *s, uint32_t cpu, const uint8_t *online,
		    const char *online_text)
{
	char path[64];
	uint32_t i;

	for (i = 0; i < s->nr_cpus; i++)
		if (s->cpus[i] == (int32_t)cpu)
			return 0;
	if (!mask_has(online, cpu)) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u",
			 cpu);
		s->host->error(s->ctx, "cannot record on cpu '%u': %s", cpu,
			       access(path, F_OK) == 0 ? "offline"
						       : "no such cpu");
		s->host->hint(s->ctx, "online cpus: %s", online_text);
		return -EINVAL;
	}
	if (s->nr_cpus == PERF_MAX_CPUS)
		return -EINVAL;
	s->cpus[s->nr_cpus++] = (int32_t)cpu;
	return 0;
}

/* cpus=: items "N" or "N-M"; default every online CPU. */
static int parse_cpus(struct perf_src *s)
{
	static uint8_t none[PERF_MAX_CPUS / 8];
	uint8_t online[PERF_MAX_CPUS / 8];
	const char *const *items;
	char text[4096];
	uint32_t n, i, a, b, c;
	char *dash;
	int ret;

	memset(online, 0, sizeof(online));
	if (read_text("/sys/devices/system/cpu/online", text,
		      sizeof(text)) <= 0) {
		snprintf(text, sizeof(text), "0-%ld",
			 sysconf(_SC_NPROCESSORS_ONLN) - 1);
	}
	parse_cpu_mask(text, online);
	text[strcspn(text, "\n")] = '\0';
	s->cpus = calloc(PERF_MAX_CPUS, sizeof(*s->cpus));
	if (!s->cpus)
		return -ENOMEM;
	n = s->host->arg_list(s->ctx, "cpus", &items);
	if (n == 0) {
		for (c = 0; c < PERF_MAX_CPUS; c++)
			if (mask_has(online, c))
				s->cpus[s->nr_cpus++] = (int32_t)c;
		if (s->nr_cpus == 0 || !memcmp(online, none, sizeof(none))) {
			s->host->error(s->ctx, "cannot find the online cpus: "
				       "'/sys/devices/system/cpu/online' "
				       "unreadable");
			return -ENOENT;
		}
		return 0;
	}
	for (i = 0; i < n; i++) {
		char item[64];

		snprintf(item, sizeof(item), "%s", items[i]);
		dash = strchr(item, '-');
		if (dash)
			*dash = '\0';
		if (parse_u32(item, &a) < 0 ||
		    (dash && parse_u32(dash + 1, &b) < 0) ||
		    (dash && b < a) || strlen(items[i]) >= sizeof(item)) {
			s->host->error(s->ctx, "bad cpu list item '%s': "
				       "expected N or N-M", items[i]);
			s->host->hint(s->ctx, "example: cpus=0-3+8");
			return -EINVAL;
		}
		if (!dash)
			b = a;
		for (c = a; c <= b; c++) {
			ret = cpus_add(s, c, online, text);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static const struct perf_event_name *event_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(perf_names) / sizeof(perf_names[0]); i++)
		if (!strcmp(perf_names[i].name, name))
			return &perf_names[i];
	return NULL;
}

static int parse_events(struct perf_src *s)
{
	const struct perf_event_name *e;
	const char *const *items;
	uint32_t n, i, j;

	n = s->host->arg_list(s->ctx, "event", &items);
	if (n == 0) {
		s->events[0] = *event_lookup("cycles");
		s->nr_events = 1;
		return 0;
	}
	if (n > PERF_MAX_EVENTS) {
		s->host->error(s->ctx, "too many events in 'event=': %u "
			       "(at most %d)", n, PERF_MAX_EVENTS);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		e = event_lookup(items[i]);
		if (!e) {
			s->host->error(s->ctx, "unknown event '%s'", items[i]);
			s->host->hint(s->ctx, "events: cycles, instructions, "
				      "cache-misses, branch-misses, "
				      "cpu-clock, task-clock, page-faults, "
				      "context-switches, cpu-migrations, ...");
			return -EINVAL;
		}
		for (j = 0; j < s->nr_events; j++) {
			if (!strcmp(s->events[j].name, e->name)) {
				s->host->error(s->ctx, "event '%s' given "
					       "twice", e->name);
				return -EINVAL;
			}
		}
		s->events[s->nr_events++] = *e;
	}
	return 0;
}

static int targets_add(struct perf_src *s, pid_t tid)
{
	uint32_t i;

	for (i = 0; i < s->nr_targets; i++)
		if (s->targets[i] == tid)
			return 0;
	if (s->nr_targets == PERF_MAX_TARGETS) {
		s->host->error(s->ctx, "too many threads to attach to "
			       "(at most %d)", PERF_MAX_TARGETS);
		return -E2BIG;
	}
	s->targets[s->nr_targets++] = tid;
	return 0;
}

/* pid=: every thread listed in /proc/PID/task. */
static int add_process(struct perf_src *s, pid_t pid)
{
	char path[64];
	struct dirent *de;
	uint32_t tid;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d) {
		s->host->error(s->ctx, "cannot attach to pid '%d': %s",
			       (int)pid, errno == ENOENT ? "no such process"
							 : strerror(errno));
		return -ESRCH;
	}
	while ((de = readdir(d))) {
		if (parse_u32(de->d_name, &tid) < 0)
			continue;
		ret = targets_add(s, (pid_t)tid);
		if (ret < 0)
			break;
	}
	closedir(d);
	return ret;
}

static int parse_targets(struct perf_src *s)
{
	const char *const *pids, *const *tids;
	uint32_t np, nt, i, v;
	char path[64];
	int ret;

	np = s->host->arg_list(s->ctx, "pid", &pids);
	nt = s->host->arg_list(s->ctx, "tid", &tids);
	if (np + nt == 0)
		return 0;
	if (s->host->command(s->ctx)) {
		s->host->error(s->ctx, "cannot use pid= or tid= with a "
			       "command");
		s->host->hint(s->ctx, "attach to running processes, or "
			      "record a command, not both");
		return -EINVAL;
	}
	s->targets = calloc(PERF_MAX_TARGETS, sizeof(*s->targets));
	s->pids = calloc(np + 1, sizeof(*s->pids));
	if (!s->targets || !s->pids)
		return -ENOMEM;
	s->mode = PERF_MODE_ATTACH;
	s->tids_given = nt > 0;
	for (i = 0; i < np; i++) {
		if (parse_u32(pids[i], &v) < 0 || v == 0 || v > INT_MAX) {
			s->host->error(s->ctx, "bad pid '%s': expected a "
				       "process id", pids[i]);
			return -EINVAL;
		}
		ret = add_process(s, (pid_t)v);
		if (ret < 0)
			return ret;
		s->pids[s->nr_pids++] = (pid_t)v;
	}
	for (i = 0; i < nt; i++) {
		if (parse_u32(tids[i], &v) < 0 || v == 0 || v > INT_MAX) {
			s->host->error(s->ctx, "bad tid '%s': expected a "
				       "thread id", tids[i]);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "/proc/%u", v);
		if (access(path, F_OK) < 0) {
			s->host->error(s->ctx, "cannot attach to tid '%u': "
				       "no such thread", v);
			return -ESRCH;
		}
		ret = targets_add(s, (pid_t)v);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Check and keep the parameters. */
/*
 * callchain=fp|dwarf[:SIZE]|off ("on" is fp).  The kernel takes a stack
 * size that is a multiple of 8 and below 64 KiB, as perf checks it.
 */
static int parse_chain(struct perf_src *s)
{
	const char *v = s->host->arg_str(s->ctx, "callchain");
	unsigned long long size = PERF_STACK_DEFAULT;
	char *end;

	if (strcmp(v, "fp") == 0 || strcmp(v, "on") == 0) {
		s->chain = PERF_CHAIN_FP;
		return 0;
	}
	if (strcmp(v, "off") == 0) {
		s->chain = PERF_CHAIN_NONE;
		return 0;
	}
	if (strncmp(v, "dwarf", 5) != 0 || (v[5] != '\0' && v[5] != ':'))
		goto bad;
	if (v[5] == ':') {
		errno = 0;
		size = strtoull(v + 6, &end, 10);
		if (errno || end == v + 6)
			goto bad;
		if (*end == 'K' || *end == 'k') {
			size *= 1024;
			end++;
		}
		if (*end != '\0')
			goto bad;
	}
	if (size == 0 || size > PERF_STACK_MAX || size % 8 != 0) {
		s->host->error(s->ctx, "bad stack size in 'callchain=%s': "
			       "not a multiple of 8 from 8 to %u", v,
			       PERF_STACK_MAX);
		s->host->hint(s->ctx, "try callchain=dwarf:8K (the default) "
			      "or dwarf:16K");
		return -EINVAL;
	}
	if (PERF_REGS_USER == 0) {
		s->host->error(s->ctx, "cannot record 'callchain=dwarf' on this "
			       "architecture: only x86_64 is supported");
		s->host->hint(s->ctx, "use callchain=fp");
		return -EINVAL;
	}
	s->chain = PERF_CHAIN_DWARF;
	s->stack_size = (uint32_t)size;
	return 0;
bad:
	s->host->error(s->ctx, "bad value '%s' for 'callchain': expected fp, "
		       "dwarf, dwarf:SIZE or off", v);
	s->host->hint(s->ctx, "callchain=dwarf:8K records 8 KiB of user stack "
		      "per sample, unwound when read");
	return -EINVAL;
}

static int perf_configure(struct perf_src *s)
{
	const struct pipe_host *host = s->host;
	struct pipe_ctx *ctx = s->ctx;
	int64_t pages;
	int ret;

	ret = parse_events(s);
	if (ret < 0)
		return ret;
	if (host->arg_is_set(ctx, "freq") && host->arg_is_set(ctx, "period")) {
		host->error(ctx, "cannot use both 'freq=' and 'period='");
		host->hint(ctx, "give one: freq=HZ samples per second, "
			   "period=N every N events");
		return -EINVAL;
	}
	s->use_period = host->arg_is_set(ctx, "period");
	s->rate = (uint64_t)(s->use_period ? host->arg_int(ctx, "period")
					   : host->arg_is_set(ctx, "freq")
					   ? host->arg_int(ctx, "freq") : 4000);
	ret = parse_chain(s);
	if (ret < 0)
		return ret;
	pages = host->arg_int(ctx, "pages");
	if (pages < 1 || (pages & (pages - 1))) {
		host->error(ctx, "bad value '%" PRId64 "' for 'pages': not a "
			    "power of 2", pages);
		host->hint(ctx, "try pages=64, 128 or 256");
		return -EINVAL;
	}
	s->pages = (uint32_t)pages;
	s->duration_ns = host->arg_is_set(ctx, "duration")
				 ? host->arg_int(ctx, "duration") : 0;
	if (host->arg_is_set(ctx, "duration") && s->duration_ns <= 0) {
		host->error(ctx, "bad value '%s' for 'duration': not above 0",
			    host->arg_str(ctx, "duration"));
		host->hint(ctx, "leave duration= out to record until stopped");
		return -EINVAL;
	}
	ret = parse_cpus(s);
	if (ret < 0)
		return ret;
	ret = parse_targets(s);
	if (ret < 0)
		return ret;
	if (host->command(ctx))
		s->mode = PERF_MODE_COMMAND;
	if (host->arg_is_set(ctx, "kernel")) {
		s->kernel = host->arg_int(ctx, "kernel") != 0;
	} else {
		s->kernel = kernel_permitted();
		/* whole-system recording is refused there anyway */
		if (!s->kernel && s->mode != PERF_MODE_SYSTEM)
			host->log(ctx, PIPE_LOG_NOTE, "kernel samples off: "
				  "perf_event_paranoid is %d and pipe lacks "
				  "CAP_PERFMON", paranoid_level());
	}
	return 0;
}

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

/* ---- opening the events ------------------------------------------------ */

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
	/* wake the poller at half full, as perf does: fewer wake-ups
	 * disturb the workload less, and half a ring is the slack */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(ring / 2 > 4096 ? ring / 2 : 4096);
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

static uint32_t fd_index(const struct perf_src *s, uint32_t e, uint32_t c,
			 uint32_t t)
{
	return (e * s->nr_cpus + c) * s->nr_targets + t;
}

static int open_events(struct perf_src *s)
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

static int enable_all(struct perf_src *s, unsigned long req)
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

/* ---- metadata ------------------------------------------------------------ */

static int meta_events(struct perf_src *s)
{
	uint64_t *ids;
	uint32_t e, c, t, n;
	int ret = 0;

	ids = malloc(s->nr_cpus * s->nr_targets * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (e = 0; e < s->nr_events && ret >= 0; e++) {
		n = 0;
		for (c = 0; c < s->nr_cpus; c++)
			for (t = 0; t < s->nr_targets; t++)
				ids[n++] = s->ids[fd_index(s, e, c, t)];
		ret = s->host->meta_add_event(s->ctx, &s->attrs[e],
					      s->events[e].name, ids, n);
	}
	free(ids);
	if (ret < 0)
		return ret;
	return s->host->meta_set_streams(s->ctx, s->nr_cpus, s->cpus);
}

static int set_prop(struct perf_src *s, const char *key, const char *fmt,
		    ...) PIPE_PRINTF(3, 4);

static int set_prop(struct perf_src *s, const char *key, const char *fmt,
		    ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return s->host->meta_set_prop(s->ctx, key, buf);
}

/* _text from /proc/kallsyms, 0 when hidden (kptr_restrict). */
static uint64_t kernel_text(void)
{
	char line[512];
	uint64_t addr = 0;
	char *end;
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		end = strchr(line, ' ');
		if (!end || strncmp(end, " T _text\n", 9))
			continue;
		addr = strtoull(line, NULL, 16);
		break;
	}
	fclose(f);
	return addr;
}

/* The GNU build-id note in /sys/kernel/notes as hex, or "" */
static void kernel_build_id(char *hex, size_t cap)
{
	uint8_t buf[4096];
	uint32_t namesz, descsz, type;
	size_t off = 0, i, len;
	ssize_t n;
	int fd;

	hex[0] = '\0';
	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return;
	len = (size_t)n;
	while (off + 12 <= len) {
		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		off += 12;
		if (namesz > len || descsz > len)
			return;
		if (off + ((namesz + 3) & ~3u) + descsz > len)
			return;
		if (type == 3 && namesz == 4 &&
		    !memcmp(buf + off, "GNU", 4)) {
			off += 4;
			for (i = 0; i < descsz && 2 * i + 2 < cap; i++)
				snprintf(hex + 2 * i, 3, "%02x", buf[off + i]);
			return;
		}
		off += ((namesz + 3) & ~3u) + ((descsz + 3) & ~3u);
	}
}

static int meta_props(struct perf_src *s)
{
	char *const *argv = s->host->command(s->ctx);
	struct utsname u;
	struct timespec ts;
	char cmdline[4096];
	char hex[128];
	size_t len = 0;
	uint64_t text;
	int ret = 0;

	if (uname(&u) == 0) {
		ret |= s->host->meta_set_prop(s->ctx, "hostname", u.nodename);
		ret |= s->host->meta_set_prop(s->ctx, "release", u.release);
		ret |= s->host->meta_set_prop(s->ctx, "arch", u.machine);
	}
	ret |= set_prop(s, "nr_cpus_online", "%ld",
			sysconf(_SC_NPROCESSORS_ONLN));
	if (argv) {
		cmdline[0] = '\0';
		for (; *argv && len + 1 < sizeof(cmdline); argv++) {
			len += (size_t)snprintf(cmdline + len,
						sizeof(cmdline) - len, "%s%s",
						len ? " " : "", *argv);
		}
		ret |= s->host->meta_set_prop(s->ctx, "cmdline", cmdline);
	}
	text = kernel_text();
	if (text)
		ret |= set_prop(s, "kernel_text", "0x%" PRIx64, text);
	kernel_build_id(hex, sizeof(hex));
	if (hex[0])
		ret |= s->host->meta_set_prop(s->ctx, "kernel_build_id", hex);
	ret |= s->host->meta_set_prop(s->ctx, "clock", "perf");
	ret |= set_prop(s, s->use_period ? "period" : "freq", "%" PRIu64,
			s->rate);
	clock_gettime(CLOCK_REALTIME, &ts);
	ret |= set_prop(s, "start_realtime_ns", "%" PRIu64,
			(uint64_t)ts.tv_sec * 1000000000u +
				(uint64_t)ts.tv_nsec);
	return ret < 0 ? -EINVAL : 0;
}

/* ---- /proc records for tasks alive at the start -------------------------- */

/* Append one record: header, body, then the sample_id_all trailer. */
static int synth_add(struct perf_src *s, uint32_t type, uint16_t misc,
		     const void *body, size_t len, uint32_t pid, uint32_t tid)
{
	struct perf_event_header h;
	size_t size = sizeof(h) + len + PERF_TRAILER;
	uint64_t trailer[4];
	uint8_t *p;

	if (size > UINT16_MAX || len % 8)
		return -EINVAL;
	if (s->synth_len + size > s->synth_cap) {
		size_t cap = s->synth_cap ? s->synth_cap * 2 : 65536;

		if (cap > PERF_SYNTH_MAX)
			return -E2BIG;
		p = realloc(s->synth, cap);
		if (!p)
			return -ENOMEM;
		s->synth = p;
		s->synth_cap = cap;
	}
	h.type = type;
	h.misc = misc;
	h.size = (uint16_t)size;
	trailer[0] = (uint64_t)pid | ((uint64_t)tid << 32);
	trailer[1] = 0; /* time: before every recorded record */
	trailer[2] = (uint32_t)s->cpus[0];
	trailer[3] = s->ids[0];
	p = s->synth + s->synth_len;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), body, len);
	memcpy(p + sizeof(h) + len, trailer, sizeof(trailer));
	s->synth_len += size;
	s->synth_nr++;
	return 0;
}

/* Copy a string NUL-padded to a multiple of 8 bytes; returns bytes. */
static size_t pad_str(uint8_t *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	size_t len;

	if (n + 1 > cap)
		n = cap - 1;
	len = (n + 1 + 7) & ~(size_t)7;
	memset(dst, 0, len);
	memcpy(dst, src, n);
	return len;
}

static int synth_comm(struct perf_src *s, uint32_t pid, uint32_t tid,
		      const char *comm)
{
	uint8_t body[8 + 24];
	size_t len;

	memcpy(body, &pid, 4);
	memcpy(body + 4, &tid, 4);
	len = pad_str(body + 8, 24, comm);
	return synth_add(s, PERF_RECORD_COMM, 0, body, 8 + len, pid, tid);
}

static int synth_fork(struct perf_src *s, uint32_t pid, uint32_t ppid,
		      uint32_t tid, uint32_t ptid)
{
	uint32_t body[6] = { pid, ppid, tid, ptid, 0, 0 };

	return synth_add(s, PERF_RECORD_FORK, 0, body, sizeof(body), pid, tid);
}

/* One executable line of /proc/PID/maps as an MMAP2 record. */
static int synth_map(struct perf_src *s, uint32_t pid, char *line)
{
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	uint8_t body[56 + PATH_MAX + 8];
	char perms[8];
	uint32_t prot = 0, flags;
	uint64_t v;
	int pos = 0;
	char *path;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end,
		   perms, &pgoff, &maj, &min, &ino, &pos) < 7 || pos == 0)
		return 0;
	if (perms[2] != 'x')
		return 0;
	path = line + pos;
	path[strcspn(path, "\n")] = '\0';
	if (!*path)
		path = (char *)"//anon";
	prot |= perms[0] == 'r' ? PROT_READ : 0;
	prot |= perms[1] == 'w' ? PROT_WRITE : 0;
	prot |= PROT_EXEC;
	flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	memcpy(body, &pid, 4);
	memcpy(body + 4, &pid, 4);
	v = start;
	memcpy(body + 8, &v, 8);
	v = end - start;
	memcpy(body + 16, &v, 8);
	v = pgoff;
	memcpy(body + 24, &v, 8);
	memcpy(body + 32, &maj, 4);
	memcpy(body + 36, &min, 4);
	v = ino;
	memcpy(body + 40, &v, 8);
	v = 0;
	memcpy(body + 48, &v, 8);
	memcpy(body + 56, &prot, 4);
	memcpy(body + 60, &flags, 4);
	len = pad_str(body + 64, sizeof(body) - 64, path);
	return synth_add(s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body,
			 64 + len, pid, pid);
}

/* The parent pid from /proc/PID/stat (after the comm's last ')'). */
static uint32_t read_ppid(uint32_t pid)
{
	char path[64], buf[1024];
	const char *p;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1 || ppid < 0)
		return 0;
	return (uint32_t)ppid;
}

static void read_comm(const char *path, char *comm, size_t cap)
{
	if (read_text(path, comm, cap) <= 0)
		snprintf(comm, cap, ":%s", "unknown");
	comm[strcspn(comm, "\n")] = '\0';
}

/*
 * FORK and COMM for every thread of pid, MMAP2 for its executable maps.
 * A process that exits while we read it is skipped: it left nothing.
 */
static int synth_process(struct perf_src *s, uint32_t pid)
{
	char path[96], comm[32];
	struct dirent *de;
	uint32_t tid, ppid;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	DIR *d;
	int ret = 0;

	ppid = read_ppid(pid);
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) && ret >= 0) {
		if (parse_u32(de->d_name, &tid) < 0)
			continue;
		ret = synth_fork(s, pid, tid == pid ? ppid : pid, tid,
				 tid == pid ? ppid : pid);
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
		read_comm(path, comm, sizeof(comm));
		if (ret >= 0)
			ret = synth_comm(s, pid, tid, comm);
	}
	closedir(d);
	if (ret < 0)
		return ret;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0 && ret >= 0)
		ret = synth_map(s, pid, line);
	free(line);
	fclose(f);
	return ret;
}

/* The process (thread group) of a thread, from /proc/TID/status. */
static uint32_t read_tgid(uint32_t tid)
{
	char path[64], buf[4096];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return tid;
	p = strstr(buf, "\nTgid:");
	return p ? (uint32_t)strtoul(p + 6, NULL, 10) : tid;
}

/* Every process that an attached thread belongs to, once. */
static int synth_attached(struct perf_src *s)
{
	uint32_t *done, nr = 0, i, j, tgid;
	int ret = 0;

	done = malloc(s->nr_targets * sizeof(*done));
	if (!done)
		return -ENOMEM;
	for (i = 0; i < s->nr_targets && ret >= 0; i++) {
		tgid = read_tgid((uint32_t)s->targets[i]);
		for (j = 0; j < nr && done[j] != tgid; j++)
			;
		if (j < nr)
			continue;
		done[nr++] = tgid;
		ret = synth_process(s, tgid);
	}
	free(done);
	return ret;
}

static int synth_tasks(struct perf_src *s)
{
	struct dirent *de;
	uint32_t pid, i;
	size_t off;
	DIR *d;
	int ret = 0;

	if (s->mode == PERF_MODE_COMMAND)
		return 0; /* the kernel reports the exec itself */
	if (s->mode == PERF_MODE_ATTACH) {
		ret = synth_attached(s);
	} else {
		d = opendir("/proc");
		if (!d) {
			s->host->log(s->ctx, PIPE_LOG_WARN, "cannot read "
				     "'/proc': %s; existing tasks will have "
				     "no names", strerror(errno));
			return 0;
		}
		while ((de = readdir(d)) && ret >= 0) {
			if (parse_u32(de->d_name, &pid) < 0)
				continue;
			ret = synth_process(s, pid);
		}
		closedir(d);
	}
	if (ret == -E2BIG) {
		s->host->log(s->ctx, PIPE_LOG_WARN, "over %u MiB of existing "
			     "tasks: the rest of /proc is not recorded",
			     PERF_SYNTH_MAX >> 20);
	} else if (ret < 0) {
		s->host->error(s->ctx, "cannot describe the running tasks: "
			       "%s", strerror(-ret));
		return ret;
	}
	if (s->synth_nr == 0)
		return 0;
	s->synth_recs = malloc(s->synth_nr * sizeof(*s->synth_recs));
	if (!s->synth_recs)
		return -ENOMEM;
	for (off = 0, i = 0; i < s->synth_nr; i++) {
		const struct perf_event_header *h =
			(const void *)(s->synth + off);

		s->synth_recs[i].hdr = h;
		s->synth_recs[i].time = 0;
		s->synth_recs[i].stream = PIPE_STREAM_SIDEBAND;
		s->synth_recs[i].event = 0;
		off += h->size;
	}
	s->synth_pending = true;
	return 0;
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
static void begin_stop(struct perf_src *s)
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
static bool should_end(struct perf_src *s)
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

/* ---- reading ------------------------------------------------------------ */

static bool is_sideband(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_NAMESPACES:
	case PERF_RECORD_KSYMBOL:
	case PERF_RECORD_BPF_EVENT:
	case PERF_RECORD_CGROUP:
	case PERF_RECORD_TEXT_POKE:
		return true;
	default:
		return false;
	}
}

static int recs_reserve(struct perf_src *s, size_t n)
{
	struct pipe_record *p;
	size_t cap;

	if (n <= s->recs_cap)
		return 0;
	cap = s->recs_cap ? s->recs_cap : 1024;
	while (cap < n)
		cap *= 2;
	p = realloc(s->recs, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->recs = p;
	s->recs_cap = cap;
	return 0;
}

/* The event of a kernel id; consecutive records mostly share one. */
static uint32_t ring_event(struct perf_src *s, struct perf_ring *r,
			   uint64_t id)
{
	if (id != r->last_id || r->last_event == PIPE_EVENT_NONE) {
		r->last_id = id;
		r->last_event = s->host->event_of_id(s->ctx, id);
	}
	return r->last_event;
}

/* Fill in a record's event, time and stream; count LOST and THROTTLE. */
static void record_fill(struct perf_src *s, struct perf_ring *r,
			uint32_t stream, struct pipe_record *rec)
{
	const struct perf_event_header *h = rec->hdr;
	const uint8_t *p = (const uint8_t *)h;
	struct pipe_sample_id sid = PIPE_INIT(sid);
	uint64_t id, v;

	rec->stream = is_sideband(h->type) ? PIPE_STREAM_SIDEBAND : stream;
	rec->event = PIPE_EVENT_NONE;
	rec->time = 0;
	if (h->size < sizeof(*h) + 8)
		return;
	if (h->type == PERF_RECORD_SAMPLE) {
		memcpy(&id, p + sizeof(*h), 8);
		rec->event = ring_event(s, r, id);
		/* our sample_type: IDENTIFIER IP TID, then TIME */
		if (h->size >= sizeof(*h) + 32)
			memcpy(&rec->time, p + sizeof(*h) + 24, 8);
	} else {
		memcpy(&id, p + h->size - 8, 8);
		rec->event = ring_event(s, r, id);
		if (s->host->decode_sample_id(s->ctx, rec, &sid) == 0)
			rec->time = sid.time;
		if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 16) {
			memcpy(&v, p + sizeof(*h) + 8, 8);
			r->lost += v;
		} else if (h->type == PERF_RECORD_THROTTLE) {
			r->throttled++;
		}
	}
	if (rec->time > r->last_time)
		r->last_time = rec->time;
}

/*
 * Take every record between tail and head of ring c as views; a record
 * that wraps the ring end is copied to the bounce buffer (at most one
 * does, as the range is at most the ring size).  The tail is published
 * at the next read, so the views stay valid until then.
 */
static int ring_take(struct perf_src *s, uint32_t c, uint64_t head,
		     struct pipe_batch *out)
{
	struct perf_ring *r = &s->rings[c];
	const struct perf_event_header *h;
	uint64_t tail = r->tail, off, size, first;
	bool bounced = false;
	size_t n = 0;
	int ret;

	if (head - tail > r->size) {
		s->host->error(s->ctx, "ring of cpu '%d' overran: head %" PRIu64
			       ", tail %" PRIu64, r->cpu, head, tail);
		return -EIO;
	}
	ret = recs_reserve(s, (size_t)((head - tail) / 8));
	if (ret < 0)
		return ret;
	while (tail != head) {
		off = tail & (r->size - 1);
		h = (const void *)(r->data + off);
		size = h->size;
		if (size < sizeof(*h) || size % 8 || size > head - tail ||
		    (off + size > r->size && bounced)) {
			s->host->error(s->ctx, "bad record in the ring of cpu "
				       "'%d': size %" PRIu64 " at %" PRIu64,
				       r->cpu, size, tail);
			return -EIO;
		}
		if (off + size > r->size) {
			first = r->size - off;
			memcpy(r->bounce, r->data + off, first);
			memcpy(r->bounce + first, r->data, size - first);
			h = (const void *)r->bounce;
			bounced = true;
		}
		s->recs[n].hdr = h;
		record_fill(s, r, c, &s->recs[n]);
		n++;
		tail += size;
	}
	r->tail = tail;
	s->cur = (int)c;
	out->recs = s->recs;
	out->nr = n;
	out->flags = 0;
	return 0;
}

static uint64_t ring_head(const struct perf_ring *r)
{
	return __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
}

/* Publish the tail of the ring whose views the previous read handed out. */
static void release_views(struct perf_src *s)
{
	struct perf_ring *r;

	if (s->cur < 0)
		return;
	r = &s->rings[s->cur];
	__atomic_store_n(&r->page->data_tail, r->tail, __ATOMIC_RELEASE);
	s->cur = -1;
}

/*
 * After the last drain: a LOST record per CPU for samples the kernel
 * counted lost (PERF_FORMAT_LOST) but never reported with a LOST record.
 */
static int final_lost(struct perf_src *s, struct pipe_batch *out)
{
	uint64_t vals[2], lost;
	uint32_t c, e, t, n = 0;
	uint8_t *p;

	s->final_done = true;
	if (!s->lost_format)
		return 0;
	s->final_buf = calloc(s->nr_cpus, 64);
	s->final_recs = calloc(s->nr_cpus, sizeof(*s->final_recs));
	if (!s->final_buf || !s->final_recs)
		return -ENOMEM;
	for (c = 0; c < s->nr_cpus; c++) {
		struct perf_ring *r = &s->rings[c];
		struct perf_event_header h;
		uint64_t body[6];

		lost = 0;
		for (e = 0; e < s->nr_events; e++) {
			for (t = 0; t < s->nr_targets; t++) {
				int fd = s->fds[fd_index(s, e, c, t)];

				if (read(fd, vals, sizeof(vals)) ==
				    (ssize_t)sizeof(vals))
					lost += vals[1];
			}
		}
		if (lost <= r->lost)
			continue;
		h.type = PERF_RECORD_LOST;
		h.misc = 0;
		h.size = sizeof(h) + sizeof(body);
		body[0] = s->ids[fd_index(s, 0, c, 0)];
		body[1] = lost - r->lost;
		body[2] = UINT64_C(0xffffffffffffffff); /* pid, tid unknown */
		body[3] = r->last_time;
		body[4] = (uint32_t)r->cpu;
		body[5] = body[0];
		r->lost = lost;
		p = s->final_buf + 64 * n;
		memcpy(p, &h, sizeof(h));
		memcpy(p + sizeof(h), body, sizeof(body));
		s->final_recs[n].hdr = (const void *)p;
		s->final_recs[n].time = r->last_time;
		s->final_recs[n].stream = c;
		s->final_recs[n].event = 0;
		n++;
	}
	out->recs = s->final_recs;
	out->nr = n;
	out->flags = PIPE_BATCH_ROUND_END;
	return 0;
}

/*
 * The rings of a command are owned by events of its first task; once that
 * task exits they poll as hung up forever.  Leave them out of the poll set
 * and drain them on a 100 ms timer instead; the child's pidfd says when
 * to end.
 */
static void mark_hangups(struct perf_src *s)
{
	struct itimerspec its;
	struct pollfd pfd;
	uint32_t c;

	if (s->mode != PERF_MODE_COMMAND)
		return;
	for (c = 0; c < s->nr_cpus; c++) {
		if (s->rings[c].hup)
			continue;
		pfd.fd = s->rings[c].fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP))
			s->rings[c].hup = true;
		if (!s->rings[c].hup || s->hup_timerfd >= 0)
			continue;
		memset(&its, 0, sizeof(its));
		its.it_value.tv_nsec = 100000000;
		its.it_interval.tv_nsec = 100000000;
		s->hup_timerfd = timerfd_create(CLOCK_MONOTONIC,
						TFD_CLOEXEC | TFD_NONBLOCK);
		/* without the timer the host's own timeout still drains it */
		if (s->hup_timerfd >= 0 &&
		    timerfd_settime(s->hup_timerfd, 0, &its, NULL) < 0) {
			close(s->hup_timerfd);
			s->hup_timerfd = -1;
		}
	}
}

static int perf_read(void *state, struct pipe_batch *out)
{
	struct perf_src *s = state;
	uint32_t c;
	int ret;

	out->recs = NULL;
	out->nr = 0;
	out->flags = 0;
	release_views(s);
	if (!s->started)
		return -EINVAL;
	if (s->synth_pending) {
		s->synth_pending = false;
		out->recs = s->synth_recs;
		out->nr = s->synth_nr;
		return 0;
	}
	if (s->next == 0 && !s->stopping && should_end(s))
		begin_stop(s);
	if (s->next == 0 && s->hup_timerfd >= 0) {
		uint64_t ticks;

		if (read(s->hup_timerfd, &ticks, sizeof(ticks)) < 0)
			ticks = 0; /* not due yet: EAGAIN */
	}
	for (c = s->next; c < s->nr_cpus; c++) {
		uint64_t head = ring_head(&s->rings[c]);

		if (head == s->rings[c].tail)
			continue;
		ret = ring_take(s, c, head, out);
		if (ret < 0)
			return ret;
		/* the pass ends here if the rings after c are empty */
		for (s->next = c + 1; s->next < s->nr_cpus; s->next++)
			if (ring_head(&s->rings[s->next]) !=
			    s->rings[s->next].tail)
				break;
		if (s->next == s->nr_cpus) {
			s->next = 0;
			out->flags |= PIPE_BATCH_ROUND_END;
		}
		return 0;
	}
	s->next = 0;
	if (!s->stopping) {
		mark_hangups(s);
		return -EAGAIN;
	}
	if (!s->final_done) {
		ret = final_lost(s, out);
		if (ret < 0 || out->nr)
			return ret;
	}
	return PIPE_EOF;
}

static int perf_fds(void *state, int *fds, uint32_t cap)
{
	struct perf_src *s = state;
	uint32_t n = 0, i;

	for (i = 0; s->rings && i < s->nr_cpus && n < cap; i++)
		if (s->rings[i].fd >= 0 && !s->rings[i].hup)
			fds[n++] = s->rings[i].fd;
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
