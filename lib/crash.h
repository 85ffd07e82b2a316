/*
 * crash.h - a plugin that crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT) ends pipe with one line naming the plugin, its file and the
 * call in flight, stops the recorded command as Ctrl-C would, removes the
 * temporary files of unfinished overwrites, and exits 1.  Crashes outside
 * any plugin call go to the handler that was there before (the default,
 * or a sanitizer's).
 */
#ifndef PIPE_CRASH_H
#define PIPE_CRASH_H

#include <sys/types.h>

/* The plugin call in flight on one thread; strings borrowed. */
struct crash_site {
	const char *what; /* "sink 'csv'", or NULL: no plugin call */
	const char *path; /* the plugin's file */
	const char *call; /* "sample" */
};

/* Set this thread's call in flight; returns the one it replaces, to be
 * given back to crash_leave. */
struct crash_site crash_enter(const char *what, const char *path,
			      const char *call);
void crash_leave(struct crash_site prev);
/* Install the handlers, and an alternate signal stack for this thread
 * (so a stack overflow is reported too).  0 or a negative errno. */
int crash_install(void);
/* A worker thread's own alternate stack, and its release at the end. */
void crash_thread_begin(void);
void crash_thread_end(void);
/* The command run after --, stopped on a crash (0: none). */
void crash_set_command(pid_t pid);
/* Temporary files removed on a crash (the path is borrowed until
 * crash_tmp_del). */
void crash_tmp_add(const char *path);
void crash_tmp_del(const char *path);

#endif
