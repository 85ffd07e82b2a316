/*
 * mixed.c - the bundled mixed workload for size and speed benchmarks:
 * several processes on every CPU for a fixed time, with deep and shallow
 * stacks and kernel frames.  Usage: mixed [SECONDS]  (default 5).
 *
 * The parent forks five workers and waits for them (all stop at the same
 * deadline, CLOCK_MONOTONIC):
 *   recurse,  CPU workers running the same rounds (cpu_round): recursion
 *   tree      of varying depth (10..100 frames) down to a hash loop, an
 *             even/odd mutual recursion (deep, changing stacks), then a
 *             few fixed call trees (lex -> hash, eval -> add/mul, sort
 *             with a comparator called from libc: shallow stacks)
 *   sys       writes 4 KiB chunks into a pipe read by a forked child
 *             (mixed_sink), maps and touches fresh pages, reads
 *             /proc/self/stat: kernel frames (syscalls, page faults)
 *   spawner   forks a short-lived child every 20 ms (fork, exit and comm
 *             records); each child runs a small call tree for ~5 ms
 *   threads   two threads in one process running the same rounds
 * So 2-CPU machines see 6+ runnable tasks: both CPUs stay busy.  Built with
 * frame pointers (tests/workloads/Makefile) so callchains reach main.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_KIDS 8

static volatile uint64_t mixed_sink;
static double deadline;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- leaves ---- */

static uint64_t leaf_hash(uint64_t x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ULL;
	return x;
}

static uint64_t leaf_mix(uint64_t x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

/* ---- recursion: deep stacks ---- */

static uint64_t rec_down(int depth, uint64_t x)
{
	if (depth == 0)
		return leaf_hash(x, 2000);
	return rec_down(depth - 1, x + (uint64_t)depth) ^ (x & 1);
}

static uint64_t rec_odd(int n, uint64_t x);

static uint64_t rec_even(int n, uint64_t x)
{
	if (n <= 0)
		return leaf_mix(x, 3000);
	return rec_odd(n - 1, x * 3) + 1;
}

static uint64_t rec_odd(int n, uint64_t x)
{
	if (n <= 0)
		return leaf_hash(x, 1000);
	return rec_even(n - 1, x + 7) + 1;
}

/* ---- call trees: shallow stacks ---- */

static uint64_t tree_lex(uint64_t x)
{
	return leaf_hash(x, 500);
}

static uint64_t tree_parse(uint64_t x)
{
	return tree_lex(x) + tree_lex(x + 1);
}

static uint64_t tree_add(uint64_t x)
{
	return leaf_mix(x, 400) + 1;
}

static uint64_t tree_mul(uint64_t x)
{
	return leaf_hash(x, 300) * 3;
}

static uint64_t tree_eval(uint64_t x)
{
	return (x & 1) ? tree_add(x) : tree_mul(tree_add(x));
}

static int tree_cmp(const void *a, const void *b)
{
	uint64_t x = leaf_mix(*(const uint64_t *)a, 4);
	uint64_t y = leaf_mix(*(const uint64_t *)b, 4);

	return x < y ? -1 : x > y;
}

static uint64_t tree_sort(uint64_t x)
{
	uint64_t v[256];
	int i;

	for (i = 0; i < 256; i++)
		v[i] = x + (uint64_t)i * 0x9e3779b97f4a7c15ULL;
	qsort(v, 256, sizeof(v[0]), tree_cmp);
	return v[0] ^ v[255];
}

static uint64_t tree_step(uint64_t x, uint64_t r)
{
	switch (r % 3) {
	case 0:
		return tree_parse(x);
	case 1:
		return tree_eval(x);
	default:
		return tree_sort(x);
	}
}

/* ---- the CPU workers ---- */

/*
 * One round of deep and shallow work.  Every CPU worker runs the same
 * rounds (from its own seed), so the mix of stacks per CPU-second does
 * not depend on how the scheduler shares the CPUs between workers; only
 * the worker's own frames near main differ.
 */
static uint64_t cpu_round(uint64_t *s, uint64_t x)
{
	int i;

	x += rec_down(10 + (int)(rnd(s) % 91), x);
	x += rec_even(5 + (int)(rnd(s) % 40), x);
	for (i = 0; i < 4; i++)
		x = tree_step(x, rnd(s));
	return x;
}

static void work_recurse(void)
{
	uint64_t s = 0x1234567ULL, x = 0;

	while (now_s() < deadline)
		x = cpu_round(&s, x);
	mixed_sink = x;
}

static void work_tree(void)
{
	uint64_t s = 0xabcdefULL, x = 1;

	while (now_s() < deadline)
		x = cpu_round(&s, x);
	mixed_sink = x;
}

static void *thread_tree(void *arg)
{
	(void)arg;
	work_tree();
	return NULL;
}

static void work_threads(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, thread_tree, NULL) != 0) {
		work_tree();
		return;
	}
	work_tree();
	pthread_join(t, NULL);
}

/* ---- syscalls: kernel frames ---- */

static void sink_drain(int fd)
{
	char buf[4096];
	uint64_t x = 0;
	ssize_t n;

	prctl(PR_SET_NAME, "mixed_sink");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		x = leaf_hash(x + (uint64_t)buf[0] + (uint64_t)n, 50);
	mixed_sink = x;
}

static void sys_pages(void)
{
	size_t len = 64 * 4096, i;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (i = 0; i < len; i += 4096)
		p[i] = (char)i;
	munmap(p, len);
}

static void sys_stat(void)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY);

	if (fd < 0)
		return;
	if (read(fd, buf, sizeof(buf)) > 0)
		mixed_sink += (uint64_t)buf[0];
	close(fd);
}

static void sys_write(int fd, const char *buf)
{
	if (write(fd, buf, 4096) < 0)
		mixed_sink++;
}

static void work_sys(void)
{
	char buf[4096];
	int fds[2];
	pid_t kid;
	int i;

	memset(buf, 'x', sizeof(buf));
	if (pipe(fds) < 0)
		return;
	kid = fork();
	if (kid == 0) {
		close(fds[1]);
		sink_drain(fds[0]);
		_exit(0);
	}
	close(fds[0]);
	while (now_s() < deadline) {
		for (i = 0; i < 16; i++)
			sys_write(fds[1], buf);
		sys_pages();
		sys_stat();
		mixed_sink = leaf_mix(mixed_sink, 2000);
	}
	close(fds[1]);
	if (kid > 0)
		waitpid(kid, NULL, 0);
}

/* ---- short-lived children: fork, exit, comm ---- */

static void child_run(uint64_t seed)
{
	double end = now_s() + 0.005;
	uint64_t x = seed;

	prctl(PR_SET_NAME, "mixed_child");
	while (now_s() < end)
		x = tree_step(x, x >> 3);
	mixed_sink = x;
}

static void work_spawner(void)
{
	uint64_t n = 0;
	pid_t kid;

	while (now_s() < deadline) {
		kid = fork();
		if (kid == 0) {
			child_run(++n);
			_exit(0);
		}
		if (kid > 0)
			waitpid(kid, NULL, 0);
		n++;
		mixed_sink = rec_down(30, leaf_hash(n, 20000));
		usleep(15000);
	}
}

/* ---- main ---- */

struct worker {
	const char *name; /* comm of the worker process */
	void (*run)(void);
};

static const struct worker workers[] = {
	{ "mixed_recurse", work_recurse },
	{ "mixed_tree", work_tree },
	{ "mixed_sys", work_sys },
	{ "mixed_spawner", work_spawner },
	{ "mixed_threads", work_threads },
};

int main(int argc, char **argv)
{
	double secs = argc > 1 ? strtod(argv[1], NULL) : 5;
	size_t nr = sizeof(workers) / sizeof(workers[0]), i;
	pid_t kids[MAX_KIDS];
	int status, rc = 0;

	if (!(secs > 0 && secs < 86400)) {
		fprintf(stderr, "usage: mixed [SECONDS], 0 < SECONDS "
			"< 86400\n");
		return 2;
	}
	deadline = now_s() + secs;
	for (i = 0; i < nr; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("mixed: fork");
			rc = 1;
			break;
		}
		if (kids[i] == 0) {
			prctl(PR_SET_NAME, workers[i].name);
			workers[i].run();
			_exit(0);
		}
	}
	nr = i;
	for (i = 0; i < nr; i++) {
		if (waitpid(kids[i], &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			rc = 1;
	}
	return rc;
}
