/*
 * trust.c - opening untrusted files without blocking, and perf's rule for
 * files that decide what code runs: owned by the user or root (perf
 * ignores a ~/.perfconfig or /tmp/perf-PID.map owned by anyone else),
 * tightened when pipe is privileged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "trust.h"

int trust_open(const char *path, const char *what, struct stat *st,
	       struct pipe_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return pipe_err_set(err, -errno, "%s '%s': %s", what, path,
				    strerror(errno));
	if (fstat(fd, st) < 0) {
		int e = errno;

		close(fd);
		return pipe_err_set(err, -e, "%s '%s': %s", what, path,
				    strerror(e));
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return pipe_err_set(err, S_ISDIR(st->st_mode) ? -EISDIR :
				    -EINVAL, "%s '%s': %s", what, path,
				    S_ISDIR(st->st_mode) ? strerror(EISDIR) :
				    "not a regular file");
	}
	return fd;
}

static bool is_secure(void)
{
	return getauxval(AT_SECURE) != 0;
}

bool trust_is_privileged(void)
{
	return is_secure() || geteuid() == 0;
}

int trust_check_owner(const struct stat *st, const char *what,
		      const char *path, struct pipe_err *err)
{
	bool secure = is_secure();

	if (st->st_uid != 0 && (secure || st->st_uid != geteuid())) {
		pipe_err_set(err, -EPERM, "%s '%s' is owned by uid %u, not by "
			     "%s", what, path, (unsigned)st->st_uid,
			     secure ? "root" : "you or root");
		pipe_err_hint(err, "%s", secure ?
			      "a set-id or capability-holding pipe uses only "
			      "files owned by root" :
			      "chown it, or use a copy of your own");
		return -EPERM;
	}
	if (trust_is_privileged() && (st->st_mode & (S_IWGRP | S_IWOTH))) {
		pipe_err_set(err, -EPERM, "%s '%s' is writable by %s", what,
			     path, st->st_mode & S_IWOTH ? "everyone" :
			     "its group");
		pipe_err_hint(err, "a privileged pipe uses only files no one "
			      "else can change: chmod go-w it");
		return -EPERM;
	}
	return 0;
}
