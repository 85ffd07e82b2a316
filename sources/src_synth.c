/*
 * src_synth.c - the `synth` record source: deterministic perf-shaped
 * records for tests and benchmarks where perf_event_open is forbidden.
 * Distributions (documented in docs/synth.md): per-CPU sample times step
 * by 1e9/freq ns +-10% uniform jitter; the pid of a sample is drawn with
 * weight 1/(rank+1); callchain depth is uniform in [1, depth]; frames are
 * drawn from a per-process pool of 64 functions with weight 1/(rank+1)
 * (through a 4096-entry table);
 * `kernel` percent of samples start in the kernel.  With binary=PATH the
 * samples of one process land in that real binary's functions in the
 * proportions of split=FUNC:WEIGHT+..., each called from main, so
 * symbolizers can be tested without perf_event_open.  Synth data never
 * backs a size claim.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipe_plugin.h"

#define SYNTH_ID_BASE 1000
#define SYNTH_PID_BASE 1000
#define SYNTH_FUNCS 64
#define SYNTH_BATCH 1024
#define SYNTH_BUF (512u << 10)
#define SYNTH_T0 UINT64_C(1000000000)
#define SYNTH_EXE_BASE UINT64_C(0x555555554000)
#define SYNTH_LIB_BASE UINT64_C(0x7f0000000000)
#define SYNTH_KERNEL_BASE UINT64_C(0xffffffff81000000)
#define SYNTH_MAX_SPLIT 32
#define SYNTH_BIN_PID 4242

struct synth_func {
	uint64_t addr;   /* runtime address of the function's start */
	uint64_t size;   /* bytes */
	double cdf;      /* cumulative share of samples */
};

static const char *const synth_comms[] = {
	"postgres", "nginx", "java", "python3", "redis-server", "sshd",
	"kworker/0:1", "bash",
};

struct synth {
	const struct pipe_host *host; /* borrowed */
	struct pipe_ctx *ctx;         /* borrowed */
	uint64_t rng;                 /* splitmix64 state */
	uint64_t left;                /* samples still to make */
	uint32_t nr_cpus;
	uint32_t nr_pids;
	uint64_t period;              /* ns between samples of one CPU */
	uint32_t depth;               /* max callchain depth */
	uint32_t kernel_pct;          /* percent of kernel samples */
	uint64_t *next_time;          /* per CPU */
	double *pid_cdf;              /* cumulative pid weights */
	double func_cdf[SYNTH_FUNCS]; /* cumulative function weights */
	uint8_t func_pick[4096];      /* the same weights as a lookup table */
	bool sideband_done;
	const char *binary;           /* binary mode: the ELF file */
	uint64_t bin_start, bin_len, bin_pgoff; /* its executable map */
	struct synth_func funcs[SYNTH_MAX_SPLIT];
	uint32_t nr_funcs;
	uint64_t main_addr;           /* caller of every function */
	uint8_t *buf;                 /* records of the current batch */
	size_t used;
	struct pipe_record recs[SYNTH_BATCH];
};

static const struct pipe_param synth_params[] = {
	{ "samples", PIPE_PARAM_INT, PIPE_PARAM_POSITIONAL, "100000",
	  "number of samples to make", NULL, 0, INT64_C(1000000000000) },
	{ "seed", PIPE_PARAM_INT, 0, "1", "random seed", NULL, 0, INT64_MAX },
	{ "cpus", PIPE_PARAM_INT, 0, "2", "CPU streams", NULL, 1, 1024 },
	{ "pids", PIPE_PARAM_INT, 0, "4", "processes", NULL, 1, 10000 },
	{ "freq", PIPE_PARAM_INT, 0, "4000", "samples per second per CPU",
	  NULL, 1, 1000000 },
	{ "depth", PIPE_PARAM_INT, 0, "16", "largest callchain depth", NULL,
	  1, 127 },
	{ "kernel", PIPE_PARAM_INT, 0, "10", "percent of kernel samples",
	  NULL, 0, 100 },
	{ "binary", PIPE_PARAM_STR, 0, NULL,
	  "put samples into this ELF binary's functions (one process)",
	  NULL, 0, 0 },
	{ "split", PIPE_PARAM_LIST, 0, NULL,
	  "with binary=: FUNC:WEIGHT items, the share of samples of each",
	  NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static uint64_t rnd(struct synth *s)
{
	uint64_t z = (s->rng += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static double rnd01(struct synth *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

static uint32_t pick(const double *cdf, uint32_t n, double u)
{
	uint32_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void make_cdf(double *cdf, uint32_t n)
{
	double sum = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		sum += 1.0 / (i + 1);
	for (i = 0; i < n; i++)
		cdf[i] = (i ? cdf[i - 1] : 0) + 1.0 / (i + 1) / sum;
	cdf[n - 1] = 1.0;
}

/* The load base the kernel would pick: PIEs high, fixed binaries at 0. */
static uint64_t load_base(const GElf_Ehdr *eh)
{
	return eh->e_type == ET_DYN ? SYNTH_EXE_BASE : 0;
}

static int find_exec_map(struct synth *s, Elf *elf, uint64_t base)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n) < 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		s->bin_start = base + (ph.p_vaddr & ~UINT64_C(0xfff));
		s->bin_pgoff = ph.p_offset & ~UINT64_C(0xfff);
		s->bin_len = ((ph.p_vaddr & 0xfff) + ph.p_memsz + 0xfff) &
			     ~UINT64_C(0xfff);
		return 0;
	}
	return -EINVAL;
}

/* Address and size of function `name` from .symtab (else .dynsym). */
static bool find_func(Elf *elf, const char *name, uint64_t *addr,
		      uint64_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; d && i < n; i++) {
			GElf_Sym sym;
			const char *sn;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			sn = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (sn && !strcmp(sn, name)) {
				*addr = sym.st_value;
				*size = sym.st_size ? sym.st_size : 1;
				return true;
			}
		}
	}
	return false;
}

static int parse_split(struct synth *s, Elf *elf, uint64_t base)
{
	const char *const *items;
	uint32_t n = s->host->arg_list(s->ctx, "split", &items), i;
	double total = 0, w[SYNTH_MAX_SPLIT];
	uint64_t size;

	if (!n) {
		s->host->error(s->ctx, "binary= needs split=FUNC:WEIGHT+...");
		return -EINVAL;
	}
	if (n > SYNTH_MAX_SPLIT) {
		s->host->error(s->ctx, "split= has %u items, at most %d", n,
			       SYNTH_MAX_SPLIT);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		const char *colon = strchr(items[i], ':');
		char name[256];
		char *end;

		if (!colon || colon == items[i] ||
		    (size_t)(colon - items[i]) >= sizeof(name)) {
			s->host->error(s->ctx, "bad split item '%s': expected FUNC:WEIGHT",
				       items[i]);
			return -EINVAL;
		}
		memcpy(name, items[i], (size_t)(colon - items[i]));
		name[colon - items[i]] = '\0';
		w[i] = strtod(colon + 1, &end);
		if (*end || !(w[i] > 0)) {
			s->host->error(s->ctx, "bad weight in split item '%s'",
				       items[i]);
			return -EINVAL;
		}
		if (!find_func(elf, name, &s->funcs[i].addr, &size)) {
			s->host->error(s->ctx, "no function '%s' in '%s'", name,
				       s->binary);
			return -EINVAL;
		}
		s->funcs[i].addr += base;
		s->funcs[i].size = size;
		total += w[i];
	}
	for (i = 0; i < n; i++)
		s->funcs[i].cdf = (i ? s->funcs[i - 1].cdf : 0) + w[i] / total;
	s->funcs[n - 1].cdf = 1.0;
	s->nr_funcs = n;
	if (find_func(elf, "main", &s->main_addr, &size))
		s->main_addr += base + size / 2;
	return 0;
}

static int load_binary(struct synth *s)
{
	GElf_Ehdr eh;
	Elf *elf = NULL;
	int fd, ret = -EINVAL;

	elf_version(EV_CURRENT);
	fd = open(s->binary, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		s->host->error(s->ctx, "cannot open '%s': %s", s->binary,
			       strerror(errno));
		return ret;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		s->host->error(s->ctx, "cannot read '%s': not an ELF file",
			       s->binary);
		goto out;
	}
	if (find_exec_map(s, elf, load_base(&eh)) < 0) {
		s->host->error(s->ctx, "cannot read '%s': no executable segment",
			       s->binary);
		goto out;
	}
	ret = parse_split(s, elf, load_base(&eh));
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static void synth_close(void *state)
{
	struct synth *s = state;

	free(s->next_time);
	free(s->pid_cdf);
	free(s->buf);
}

static int synth_open(const struct pipe_host *host, struct pipe_ctx *ctx,
		      void **state)
{
	struct synth *s = *state; /* zeroed by the host (state_size) */
	uint32_t i;

	s->host = host;
	s->ctx = ctx;
	s->rng = (uint64_t)host->arg_int(ctx, "seed");
	s->left = (uint64_t)host->arg_int(ctx, "samples");
	s->nr_cpus = (uint32_t)host->arg_int(ctx, "cpus");
	s->nr_pids = (uint32_t)host->arg_int(ctx, "pids");
	s->period = 1000000000u / (uint64_t)host->arg_int(ctx, "freq");
	s->depth = (uint32_t)host->arg_int(ctx, "depth");
	s->kernel_pct = (uint32_t)host->arg_int(ctx, "kernel");
	s->next_time = calloc(s->nr_cpus, sizeof(*s->next_time));
	s->pid_cdf = calloc(s->nr_pids, sizeof(*s->pid_cdf));
	s->buf = malloc(SYNTH_BUF);
	if (!s->next_time || !s->pid_cdf || !s->buf) {
		synth_close(s);
		return -ENOMEM;
	}
	make_cdf(s->pid_cdf, s->nr_pids);
	make_cdf(s->func_cdf, SYNTH_FUNCS);
	for (i = 0; i < 4096; i++)
		s->func_pick[i] = (uint8_t)pick(s->func_cdf, SYNTH_FUNCS,
						(i + 0.5) / 4096.0);
	s->binary = host->arg_str(ctx, "binary");
	if (s->binary) {
		int ret = load_binary(s);

		if (ret < 0) {
			synth_close(s);
			return ret;
		}
	}
	for (i = 0; i < s->nr_cpus; i++)
		s->next_time[i] = SYNTH_T0 + rnd(s) % s->period;
	return 0;
}

static int synth_start(void *state)
{
	struct synth *s = state;
	struct perf_event_attr attr;
	int32_t *cpus = calloc(s->nr_cpus, sizeof(*cpus));
	uint64_t *ids = calloc(s->nr_cpus, sizeof(*ids));
	uint32_t i;
	int ret;

	if (!cpus || !ids) {
		free(cpus);
		free(ids);
		return -ENOMEM;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = s->period;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			   PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			   PERF_SAMPLE_CALLCHAIN;
	attr.sample_id_all = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.task = 1;
	for (i = 0; i < s->nr_cpus; i++) {
		cpus[i] = (int32_t)i;
		ids[i] = SYNTH_ID_BASE + i;
	}
	ret = s->host->meta_add_event(s->ctx, &attr, "cpu-clock", ids,
				      s->nr_cpus);
	if (ret >= 0)
		ret = s->host->meta_set_streams(s->ctx, s->nr_cpus, cpus);
	if (ret >= 0)
		ret = s->host->meta_set_prop(s->ctx, "hostname", "synth");
	if (ret >= 0)
		ret = s->host->meta_set_prop(s->ctx, "source", "synth");
	free(cpus);
	free(ids);
	return ret < 0 ? ret : 0;
}

/* Reserve a record of `size` bytes (8-aligned) in the batch buffer. */
/* Reserve a record of `size` bytes (8-aligned) in the batch buffer. */
static struct perf_event_header *rec_new(struct synth *s, uint32_t type,
					 uint16_t misc, size_t size)
{
	struct perf_event_header *h;

	h = (struct perf_event_header *)(s->buf + s->used);
	memset(h, 0, size);
	h->type = type;
	h->misc = misc;
	h->size = (uint16_t)size;
	s->used += size;
	return h;
}

static void put64(uint8_t **p, uint64_t v)
{
	memcpy(*p, &v, 8);
	*p += 8;
}

static void put32x2(uint8_t **p, uint32_t a, uint32_t b)
{
	put64(p, (uint64_t)a | ((uint64_t)b << 32));
}

/* sample_id_all trailer: TID, TIME, CPU, IDENTIFIER */
static void put_trailer(uint8_t **p, uint32_t pid, uint64_t time, uint32_t cpu)
{
	put32x2(p, pid, pid);
	put64(p, time);
	put32x2(p, cpu, 0);
	put64(p, SYNTH_ID_BASE + cpu);
}

static size_t name_room(const char *name)
{
	return (strlen(name) + 1 + 7) & ~(size_t)7;
}

static void add_mmap2_at(struct synth *s, uint32_t pid, uint64_t start,
			 uint64_t len, uint64_t pgoff, const char *path,
			 size_t *nr);

static void add_comm(struct synth *s, uint32_t pid, const char *comm,
		     uint64_t time, size_t *nr)
{
	size_t size = 8 + 8 + name_room(comm) + 32;
	struct perf_event_header *h = rec_new(s, PERF_RECORD_COMM, 0, size);
	uint8_t *p = (uint8_t *)(h + 1);

	put32x2(&p, pid, pid);
	memcpy(p, comm, strlen(comm));
	p += name_room(comm);
	put_trailer(&p, pid, time, 0);
	s->recs[*nr] = (struct pipe_record){ h, time, PIPE_STREAM_SIDEBAND, 0 };
	(*nr)++;
}

static void add_mmap2(struct synth *s, uint32_t pid, uint64_t start,
		      uint64_t len, const char *path, uint64_t time, size_t *nr)
{
	(void)time;
	add_mmap2_at(s, pid, start, len, 0, path, nr);
}

static void add_mmap2_at(struct synth *s, uint32_t pid, uint64_t start,
			 uint64_t len, uint64_t pgoff, const char *path,
			 size_t *nr)
{
	const uint64_t time = 0;
	size_t size = 8 + 8 + 24 + 8 + 16 + 8 + name_room(path) + 32;
	struct perf_event_header *h = rec_new(s, PERF_RECORD_MMAP2,
					      PERF_RECORD_MISC_USER, size);
	uint8_t *p = (uint8_t *)(h + 1);

	put32x2(&p, pid, pid);
	put64(&p, start);
	put64(&p, len);
	put64(&p, pgoff);
	put32x2(&p, 8, 1);       /* maj, min */
	put64(&p, 1000 + start % 97); /* ino */
	put64(&p, 0);            /* ino_generation */
	put32x2(&p, 5, 2);       /* PROT_READ|PROT_EXEC, MAP_PRIVATE */
	memcpy(p, path, strlen(path));
	p += name_room(path);
	put_trailer(&p, pid, time, 0);
	s->recs[*nr] = (struct pipe_record){ h, time, PIPE_STREAM_SIDEBAND, 0 };
	(*nr)++;
}

static size_t make_sideband(struct synth *s)
{
	size_t nr = 0;
	uint32_t i;
	char path[64];

	if (s->binary) {
		const char *slash = strrchr(s->binary, '/');
		char comm[16];

		snprintf(comm, sizeof(comm), "%s", slash ? slash + 1 : s->binary);
		add_comm(s, SYNTH_BIN_PID, comm, 0, &nr);
		add_mmap2_at(s, SYNTH_BIN_PID, s->bin_start, s->bin_len,
			     s->bin_pgoff, s->binary, &nr);
		return nr;
	}
	for (i = 0; i < s->nr_pids && nr + 3 <= SYNTH_BATCH &&
		    s->used + 600 < SYNTH_BUF; i++) {
		uint32_t pid = SYNTH_PID_BASE + i;
		const char *comm = synth_comms[i % (sizeof(synth_comms) /
						    sizeof(synth_comms[0]))];

		add_comm(s, pid, comm, 0, &nr);
		snprintf(path, sizeof(path), "/usr/bin/%s", comm);
		add_mmap2(s, pid, SYNTH_EXE_BASE, 1u << 20, path, 0, &nr);
		add_mmap2(s, pid, SYNTH_LIB_BASE, 4u << 20,
			  "/usr/lib/x86_64-linux-gnu/libc.so.6", 0, &nr);
	}
	return nr;
}

static uint64_t func_addr(struct synth *s, uint32_t pid, bool kernel)
{
	uint64_t r = rnd(s), base;
	uint32_t f = s->func_pick[r & 4095];

	/* one random draw: 12 bits pick the function, 8 the offset */
	if (kernel)
		return SYNTH_KERNEL_BASE + f * 0x400 + ((r >> 12) & 0xff);
	base = (f & 1) ? SYNTH_LIB_BASE : SYNTH_EXE_BASE;
	return base + ((f * 2654435761u + pid) % 4096) * 0x80 +
	       ((r >> 12) & 0x3f);
}

static void add_sample(struct synth *s, uint32_t cpu, size_t *nr)
{
	uint32_t pid = SYNTH_PID_BASE + pick(s->pid_cdf, s->nr_pids, rnd01(s));
	uint32_t depth = 1 + (uint32_t)(rnd(s) % s->depth);
	bool kernel = rnd(s) % 100 < s->kernel_pct;
	uint32_t kdepth = kernel ? 1 + depth / 3 : 0;
	uint64_t nr_cc = depth + 1 + (kernel ? kdepth + 1 : 0);
	size_t size = 8 + 8 * 7 + 8 * nr_cc;
	uint64_t time = s->next_time[cpu];
	struct perf_event_header *h;
	uint8_t *p, *first_ip;
	uint32_t i;

	h = rec_new(s, PERF_RECORD_SAMPLE,
		    kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
		    size);
	p = (uint8_t *)(h + 1);
	put64(&p, SYNTH_ID_BASE + cpu);
	first_ip = p;
	put64(&p, 0); /* ip, set from the first frame below */
	put32x2(&p, pid, pid);
	put64(&p, time);
	put32x2(&p, cpu, 0);
	put64(&p, s->period);
	put64(&p, nr_cc);
	if (kernel) {
		put64(&p, PERF_CONTEXT_KERNEL);
		for (i = 0; i < kdepth; i++)
			put64(&p, func_addr(s, pid, true));
	}
	put64(&p, PERF_CONTEXT_USER);
	for (i = 0; i < depth; i++)
		put64(&p, func_addr(s, pid, false));
	/* the ip repeats the first frame after the context marker */
	memcpy(first_ip, (uint8_t *)(h + 1) + 8 * 8, 8);
	s->recs[*nr] = (struct pipe_record){ h, time, cpu, 0 };
	(*nr)++;
	s->next_time[cpu] += s->period - s->period / 10 +
			     rnd(s) % (s->period / 5 + 1);
}

/* Binary mode: one frame in a split function, called from main. */
static void add_bin_sample(struct synth *s, uint32_t cpu, size_t *nr)
{
	uint32_t f = 0;
	double u = rnd01(s);
	size_t size = 8 + 8 * 7 + 8 * 3;
	uint64_t time = s->next_time[cpu], ip;
	struct perf_event_header *h;
	uint8_t *p;

	while (f + 1 < s->nr_funcs && s->funcs[f].cdf < u)
		f++;
	ip = s->funcs[f].addr + rnd(s) % s->funcs[f].size;
	h = rec_new(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, size);
	p = (uint8_t *)(h + 1);
	put64(&p, SYNTH_ID_BASE + cpu);
	put64(&p, ip);
	put32x2(&p, SYNTH_BIN_PID, SYNTH_BIN_PID);
	put64(&p, time);
	put32x2(&p, cpu, 0);
	put64(&p, s->period);
	put64(&p, 3);
	put64(&p, PERF_CONTEXT_USER);
	put64(&p, ip);
	put64(&p, s->main_addr);
	s->recs[*nr] = (struct pipe_record){ h, time, cpu, 0 };
	(*nr)++;
	s->next_time[cpu] += s->period;
}

static int synth_read(void *state, struct pipe_batch *out)
{
	struct synth *s = state;
	size_t nr = 0;

	s->used = 0;
	if (!s->sideband_done) {
		nr = make_sideband(s);
		s->sideband_done = true;
	}
	while (s->left && nr < SYNTH_BATCH && s->used + 1200 < SYNTH_BUF) {
		uint32_t cpu = 0, i;

		for (i = 1; i < s->nr_cpus; i++)
			if (s->next_time[i] < s->next_time[cpu])
				cpu = i;
		if (s->binary)
			add_bin_sample(s, cpu, &nr);
		else
			add_sample(s, cpu, &nr);
		s->left--;
	}
	if (!nr)
		return PIPE_EOF;
	out->recs = s->recs;
	out->nr = nr;
	out->flags = PIPE_BATCH_ROUND_END;
	return 0;
}

PIPE_PLUGIN_SOURCE(
	.name = "synth",
	.summary = "deterministic perf-shaped records for tests",
	.version = "1",
	.params = synth_params,
	.state_size = sizeof(struct synth),
	.open = synth_open,
	.close = synth_close,
	.start = synth_start,
	.read = synth_read
);
