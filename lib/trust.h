/*
 * trust.h - opening files pipe does not control (files a recording names,
 * plugins, plugins.conf) without hanging on a FIFO or device, and the
 * ownership rules for the files that decide which code pipe runs
 * (docs/reliability.md "Plugin and config trust").
 */
#ifndef PIPE_TRUST_H
#define PIPE_TRUST_H

#include <stdbool.h>
#include <sys/stat.h>

struct pipe_err;

/*
 * Open `path` read-only and close-on-exec without blocking (O_NONBLOCK,
 * so a FIFO or a device never hangs pipe) and require a regular file.
 * Returns the fd (the caller closes it; reads block as usual on a regular
 * file) with *st filled, or a negative errno with "WHAT 'PATH': cause"
 * in err (-EINVAL: "not a regular file").  `what` is a message prefix
 * such as "cannot load plugin".
 */
int trust_open(const char *path, const char *what, struct stat *st,
	       struct pipe_err *err);

/*
 * Does pipe run with more privilege than its user's files deserve: set-id
 * or file capabilities (the kernel's AT_SECURE), or as root?
 */
bool trust_is_privileged(void);

/*
 * Ownership of a file that decides which code pipe runs (`what` names it
 * in the message: "plugin", "plugins.conf"): owned by root or by the
 * effective user (by root alone under set-id or file capabilities, where
 * the effective user is the unprivileged one), and when privileged
 * writable by neither group nor others.  0, or -EPERM with the message
 * "WHAT 'PATH' is ..." and a hint.
 */
int trust_check_owner(const struct stat *st, const char *what,
		      const char *path, struct pipe_err *err);

#endif
