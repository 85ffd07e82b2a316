/*
 * perf_params.c - the perf source's parameters: events by name, CPUs,
 * processes and threads to attach to, call chains, checked against what
 * the kernel permits.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"
#include "perfsrc.h"

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

int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		    int group_fd, unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			  flags);

	return fd < 0 ? -errno : (int)fd;
}

int pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
}

/* Read a small text file into buf (NUL-terminated); bytes or -errno. */
ssize_t read_text(const char *path, char *buf, size_t cap)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = fdio_read_full(fd, buf, cap - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

int paranoid_level(void)
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
int parse_u32(const char *s, uint32_t *out)
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

const struct perf_event_name *event_lookup(const char *name)
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

int perf_configure(struct perf_src *s)
{
	const struct pipe_host *host = s->host;
	struct pipe_ctx *ctx = s->ctx;
	const char *v;
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
	v = host->arg_str(ctx, "wake");
	if (v && strcmp(v, "auto") && strcmp(v, "mark")) {
		host->error(ctx, "bad value '%s' for 'wake': expected auto or "
			    "mark", v);
		host->hint(ctx, "wake=mark wakes at the rings' watermarks "
			   "only, as perf record does");
		return -EINVAL;
	}
	s->wake_mark = v && !strcmp(v, "mark");
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
