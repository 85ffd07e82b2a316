/*
 * perf_meta.c - the recording's metadata (events, streams, properties) and
 * the records /proc gives for the tasks alive at the start (COMM, FORK,
 * MMAP2), as perf record synthesizes them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "grow.h"
#include "perfsrc.h"

int meta_events(struct perf_src *s)
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

int meta_props(struct perf_src *s)
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

/* Append one record: header, body, then the sample_id_all trailer. */
static int synth_add(struct perf_src *s, uint32_t type, uint16_t misc,
		     const void *body, size_t len, uint32_t pid, uint32_t tid)
{
	struct perf_event_header h;
	size_t size = sizeof(h) + len + PERF_TRAILER;
	uint64_t trailer[4];
	uint8_t *p;
	int ret;

	if (size > UINT16_MAX || len % 8)
		return -EINVAL;
	ret = grow_array(&s->synth, &s->synth_cap, s->synth_len + size, 1,
			 65536, PERF_SYNTH_MAX);
	if (ret < 0)
		return ret;
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

int synth_tasks(struct perf_src *s)
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
