/*
 * err.h - the error a failing core function reports to its caller.
 *
 * The lowest level that knows the subject (file, plugin, option, config
 * line) writes the message once with pipe_err_set(); callers pass the
 * negative errno up unchanged.  cmd/pipe.c prints "pipe: MSG" and the
 * optional "hint: HINT" line.
 */
#ifndef PIPE_ERR_H
#define PIPE_ERR_H

#include <stdarg.h>

struct pipe_err {
	char msg[512];  /* what failed, subject in quotes, cause; no period */
	char hint[256]; /* next step for the user, or empty */
};

/* Set the message (overwrites; clears the hint) and return `code`, a
 * negative errno, so callers can write `return pipe_err_set(...)`. */
int pipe_err_set(struct pipe_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int pipe_err_setv(struct pipe_err *err, int code, const char *fmt,
		  va_list ap) __attribute__((format(printf, 3, 0)));
/* Memory ran out: set "MSG: Cannot allocate memory", fmt saying what
 * could not be done and to what, and return -ENOMEM. */
int pipe_err_nomem(struct pipe_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Set the hint line; returns nothing. */
void pipe_err_hint(struct pipe_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Clear both lines. */
void pipe_err_clear(struct pipe_err *err);
/* Replace control bytes (a file name from a recording may hold escape
 * sequences) with '?' in place: one line, nothing the terminal runs.
 * Messages and hints set above are cleaned already. */
void pipe_err_clean(char *s);
/* Print "pipe: MSG" (or "pipe: failed") and the "hint: HINT" line to
 * standard error. */
void pipe_err_print(const struct pipe_err *err);

#endif
