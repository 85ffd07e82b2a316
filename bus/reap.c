/*
 * reap.c - ending the command's whole process tree on failure.  The
 * children of pipe are read from /proc/self/task/TID/children; with
 * PR_SET_CHILD_SUBREAPER orphans join them as their parents die.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reap.h"

#define REAP_MAX 1024   /* children handled per round */
#define REAP_ROUNDS 64  /* rounds of orphans before giving up */

int reap_adopt(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* The children of every thread of pipe; returns how many. */
static int children(int *pids, int cap)
{
	char path[320], buf[4096];
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < cap) {
		FILE *f;
		char *p, *end;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children",
			 de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (n < cap && fgets(buf, sizeof(buf), f)) {
			for (p = buf; n < cap; p = end) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				if (v > 0)
					pids[n++] = (int)v;
			}
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* Has pid exited (a zombie waiting to be reaped, or gone)? */
static bool is_dead(int pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	bool dead = true;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	if (fgets(buf, sizeof(buf), f)) {
		/* the state follows the ')' that ends the command name */
		p = strrchr(buf, ')');
		dead = p && (p[2] == 'Z' || p[2] == 'X');
	}
	fclose(f);
	return dead;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Wait up to grace_ms for every one of pids to exit. */
static void wait_dead(const int *pids, int n, int grace_ms)
{
	int waited, i;

	for (waited = 0; waited < grace_ms; waited += 10) {
		for (i = 0; i < n && is_dead(pids[i]); i++)
			;
		if (i == n)
			return;
		sleep_ms(10);
	}
}

/* SIGTERM the children; *n of them are in pids afterwards. */
static void term_wait(int *pids, int *n, int grace_ms)
{
	int i;

	*n = children(pids, REAP_MAX);
	for (i = 0; i < *n; i++)
		kill(pids[i], SIGTERM);
	wait_dead(pids, *n, grace_ms);
}

void reap_terminate(int grace_ms)
{
	int pids[REAP_MAX];
	int n;

	term_wait(pids, &n, grace_ms);
}

void reap_all(int grace_ms)
{
	int pids[REAP_MAX];
	int round, n, i, reaped;

	for (round = 0; round < REAP_ROUNDS; round++) {
		term_wait(pids, &n, grace_ms);
		for (i = 0, reaped = 0; i < n; i++) {
			if (!is_dead(pids[i]))
				kill(pids[i], SIGKILL);
			if (waitpid(pids[i], NULL, 0) == pids[i])
				reaped++;
		}
		if (reaped == 0)
			return;
	}
}
