/*
 * burn.c - a CPU-bound workload with a known call graph for profiling
 * tests: main -> burn_run -> burn_outer -> burn_leaf_a / burn_leaf_b.
 * Usage: burn [MILLISECONDS [THREADS]]: each thread burns that much CPU
 * time (not wall time, so a loaded machine gives the same samples); 0 runs
 * until killed.  Built with frame pointers so callchains reach main.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long burn_sink;

unsigned long burn_mix(unsigned long x);
unsigned long burn_leaf_a(unsigned long x);
unsigned long burn_leaf_b(unsigned long x);
unsigned long burn_outer(unsigned long x);
void *burn_run(void *arg);

/* called once per leaf so that gcc gives the leaves a frame pointer
 * (gcc 12 drops it in true leaf functions despite the flags) */
unsigned long burn_mix(unsigned long x)
{
	return x ^ (x >> 31);
}

unsigned long burn_leaf_a(unsigned long x)
{
	int i;

	for (i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return burn_mix(x);
}

unsigned long burn_leaf_b(unsigned long x)
{
	int i;

	for (i = 0; i < 10000; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return burn_mix(x);
}

unsigned long burn_outer(unsigned long x)
{
	return burn_leaf_b(burn_leaf_a(x));
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void *burn_run(void *arg)
{
	double ms = *(const double *)arg;
	double end = now_ms() + ms;
	unsigned long x = 1;

	while (ms <= 0 || now_ms() < end)
		x = burn_outer(x);
	burn_sink = x;
	return NULL;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? strtod(argv[1], NULL) : 1000;
	int threads = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 1;
	pthread_t tids[64];
	int i;

	if (threads < 1 || threads > 64) {
		fprintf(stderr, "burn: threads must be 1..64\n");
		return 2;
	}
	for (i = 1; i < threads; i++)
		pthread_create(&tids[i], NULL, burn_run, &ms);
	burn_run(&ms);
	for (i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
