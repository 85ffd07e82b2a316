/*
 * reap.h - the command's descendants: pipe becomes their subreaper, so a
 * command's orphaned children come back to pipe instead of init, and a
 * failed run ends and waits for all of them, as perf record ends its
 * workload (docs/reliability.md).
 */
#ifndef PIPE_REAP_H
#define PIPE_REAP_H

/* Make orphaned descendants pipe's children; 0 or negative errno. */
int reap_adopt(void);

/*
 * SIGTERM every child of pipe and give them up to `grace_ms` to exit;
 * none is reaped (a plugin may wait for its own child).
 */
void reap_terminate(int grace_ms);

/*
 * Round after round, SIGTERM every child of pipe (the orphans of the
 * last round among them), SIGKILL those alive after `grace_ms`, and reap
 * them, until none is left.
 */
void reap_all(int grace_ms);

#endif
