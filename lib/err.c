/*
 * err.c - filling a struct pipe_err (see err.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

void pipe_err_clean(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

int pipe_err_setv(struct pipe_err *err, int code, const char *fmt, va_list ap)
{
	if (!err)
		return code;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	pipe_err_clean(err->msg);
	err->hint[0] = '\0';
	return code;
}

int pipe_err_set(struct pipe_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pipe_err_setv(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int pipe_err_nomem(struct pipe_err *err, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!err)
		return -ENOMEM;
	va_start(ap, fmt);
	pipe_err_setv(err, -ENOMEM, fmt, ap);
	va_end(ap);
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(ENOMEM));
	return -ENOMEM;
}

void pipe_err_hint(struct pipe_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
	pipe_err_clean(err->hint);
}

void pipe_err_clear(struct pipe_err *err)
{
	err->msg[0] = '\0';
	err->hint[0] = '\0';
}

void pipe_err_print(const struct pipe_err *err)
{
	fprintf(stderr, "pipe: %s\n", err->msg[0] ? err->msg : "failed");
	if (err->hint[0])
		fprintf(stderr, "hint: %s\n", err->hint);
}
