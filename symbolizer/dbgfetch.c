/*
 * dbgfetch.c - debuginfod through libdebuginfod (see dbgfetch.h).  The
 * library brings the HTTP client (libcurl), the server list, the cache
 * and its cleaning, and the negative cache of misses; this file bounds
 * each transfer in time and stops it on Ctrl-C from the progress
 * callback, which the library calls while the transfer runs.  It is
 * opened with dlopen only when DEBUGINFOD_URLS names a server: linked,
 * its thirty libraries (libcurl, TLS, Kerberos) would cost every pipe
 * command some milliseconds of start-up.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dbgfetch.h"

#if HAVE_DEBUGINFOD
#include <elfutils/debuginfod.h>

/* the library's functions this file calls, from dlsym */
struct dbgfetch_lib {
	void *handle;              /* dlopen's; never closed */
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	void (*set_user_data)(debuginfod_client *c, void *data);
	void (*set_progressfn)(debuginfod_client *c,
			       debuginfod_progressfn_t fn);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id,
			      int len, char **path);
};

struct dbgfetch {
	struct dbgfetch_opts opts;
	struct dbgfetch_lib lib;
	debuginfod_client *client;
	uint64_t deadline;         /* CLOCK_MONOTONIC ns of this transfer */
	bool timed_out;            /* the progress callback cut it: time */
	bool stopped;              /* ... or Ctrl-C */
	bool unreachable;          /* no more fetches this run */
	uint32_t nr_found;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Ctrl-C: pipe blocks SIGINT and SIGTERM and reads them from a signalfd
 * in its loop, so one that came during the transfer is still pending. */
static bool stop_asked(const struct dbgfetch *f)
{
	sigset_t set;

	if (f->opts.interrupted && *f->opts.interrupted)
		return true;
	if (sigpending(&set) < 0)
		return false;
	return sigismember(&set, SIGINT) == 1 ||
	       sigismember(&set, SIGTERM) == 1;
}

/* dlsym's object pointer into a function pointer of the same size */
static bool lib_sym(void *handle, const char *name, void *fn, size_t size)
{
	void *sym = dlsym(handle, name);

	if (!sym || size != sizeof(sym))
		return false;
	memcpy(fn, &sym, size);
	return true;
}

/* The fetcher that owns client c, from its user data: the progress
 * callback gets nothing else, so the library (open already) is looked
 * up again for the getter. */
static struct dbgfetch *fetch_of(debuginfod_client *c)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *(*get)(debuginfod_client *) = NULL;
	struct dbgfetch *f = NULL;

	if (!h)
		return NULL;
	if (lib_sym(h, "debuginfod_get_user_data", &get, sizeof(get)))
		f = get(c);
	dlclose(h);
	return f;
}

static int on_progress(debuginfod_client *c, long done, long total)
{
	struct dbgfetch *f = fetch_of(c);

	(void)done;
	(void)total;
	if (!f)
		return 0;
	if (stop_asked(f)) {
		f->stopped = true;
		return 1;
	}
	if (now_ns() > f->deadline) {
		f->timed_out = true;
		return 1;
	}
	return 0;
}

/* 0, or 1 when the library cannot be opened (nothing is fetched then) */
static int lib_open(struct dbgfetch_lib *l)
{
	l->handle = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!l->handle)
		return 1;
	if (lib_sym(l->handle, "debuginfod_begin", &l->begin,
		    sizeof(l->begin)) &&
	    lib_sym(l->handle, "debuginfod_end", &l->end, sizeof(l->end)) &&
	    lib_sym(l->handle, "debuginfod_set_user_data",
		    &l->set_user_data, sizeof(l->set_user_data)) &&
	    lib_sym(l->handle, "debuginfod_set_progressfn",
		    &l->set_progressfn, sizeof(l->set_progressfn)) &&
	    lib_sym(l->handle, "debuginfod_find_debuginfo",
		    &l->find_debuginfo, sizeof(l->find_debuginfo)))
		return 0;
	dlclose(l->handle);
	l->handle = NULL;
	return 1;
}

int dbgfetch_new(struct dbgfetch **out, const struct dbgfetch_opts *o)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct dbgfetch *f;
	int ret;

	*out = NULL;
	if (!urls || !urls[strspn(urls, " \t")])
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->opts = *o;
	ret = lib_open(&f->lib);
	if (ret > 0) {
		if (f->opts.warn)
			f->opts.warn(f->opts.opaque, "debuginfod: cannot open "
				     "libdebuginfod.so.1: nothing is fetched");
		free(f);
		return 0;
	}
	f->client = f->lib.begin();
	if (!f->client) {
		free(f);
		return -ENOMEM;
	}
	f->lib.set_user_data(f->client, f);
	f->lib.set_progressfn(f->client, on_progress);
	*out = f;
	return 0;
}

void dbgfetch_free(struct dbgfetch *f)
{
	if (!f)
		return;
	f->lib.end(f->client);
	/* the library stays loaded: libcurl and its TLS libraries keep
	 * process-wide state that must not be unmapped under them */
	free(f);
}

static void fetch_warn(struct dbgfetch *f, const char *hex, const char *why)
{
	char line[512];

	if (!f->opts.warn)
		return;
	snprintf(line, sizeof(line), "debuginfod: no debug file for build-id "
		 "%s: %s", hex, why);
	f->opts.warn(f->opts.opaque, line);
}

int dbgfetch_debuginfo(struct dbgfetch *f, const uint8_t *id, uint32_t len,
		       char *path, size_t cap)
{
	char hex[2 * 64 + 1], *got = NULL;
	uint32_t i;
	int fd;

	if (!f || len == 0 || len > 64)
		return -ENOENT;
	if (f->unreachable)
		return -ECANCELED;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	f->timed_out = false;
	f->stopped = false;
	f->deadline = now_ns() + f->opts.timeout_ns;
	fd = f->lib.find_debuginfo(f->client, id, (int)len, &got);
	if (fd >= 0) {
		close(fd);
		snprintf(path, cap, "%s", got);
		free(got);
		f->nr_found++;
		return 0;
	}
	free(got);
	if (f->stopped) {
		f->unreachable = true;
		return -EINTR;
	}
	if (f->timed_out) {
		f->unreachable = true;
		fetch_warn(f, hex, "the transfer took longer than "
			   "debuginfod_timeout=; no more fetches this run");
		return -ETIMEDOUT;
	}
	if (fd == -ENOENT)
		return -ENOENT;
	/* the servers cannot be reached (or refuse): do not wait on them
	 * again for every binary */
	f->unreachable = true;
	fetch_warn(f, hex, strerror(-fd));
	return fd;
}

uint32_t dbgfetch_nr_found(const struct dbgfetch *f)
{
	return f ? f->nr_found : 0;
}

#else /* pipe built without libdebuginfod: nothing is ever fetched */

int dbgfetch_new(struct dbgfetch **out, const struct dbgfetch_opts *o)
{
	(void)o;
	*out = NULL;
	return 0;
}

void dbgfetch_free(struct dbgfetch *f)
{
	(void)f;
}

int dbgfetch_debuginfo(struct dbgfetch *f, const uint8_t *id, uint32_t len,
		       char *path, size_t cap)
{
	(void)f;
	(void)id;
	(void)len;
	(void)path;
	(void)cap;
	return -ENOENT;
}

uint32_t dbgfetch_nr_found(const struct dbgfetch *f)
{
	(void)f;
	return 0;
}

#endif
