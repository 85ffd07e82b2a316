/*
 * jsonw.h - JSON strings from any bytes: the one escaper behind every
 * JSON pipe prints (`pipe info --json`, the json sink).
 *
 * Quotes, backslashes and control characters are escaped; each byte that
 * does not start a valid UTF-8 sequence becomes U+FFFD, so the text is
 * valid JSON and valid UTF-8 whatever a recording holds.
 */
#ifndef PIPE_JSONW_H
#define PIPE_JSONW_H

#include <stddef.h>
#include <stdio.h>

#define JSONW_CHUNK 1024 /* input bytes one jsonw_chunk call takes at most */
#define JSONW_OUT_MAX(n) (6 * (n)) /* bytes n input bytes become at most */

/*
 * Escape the start of s (len bytes, at most JSONW_CHUNK of them) into dst,
 * which has room for JSONW_OUT_MAX(min(len, JSONW_CHUNK)) bytes, without
 * quotes.  Returns the
 * bytes written and sets *used to the bytes of s consumed: a valid UTF-8
 * sequence is never split between two calls.
 */
size_t jsonw_chunk(char *dst, const char *s, size_t len, size_t *used);

/* The length of the valid UTF-8 sequence that starts s (n bytes
 * readable, n > 0): 2 to 4, or 0 when s[0] starts none (ASCII
 * included). */
size_t jsonw_utf8_len(const unsigned char *s, size_t n);

/* Write s as a quoted JSON string to f; NULL writes "". */
void jsonw_fputs(FILE *f, const char *s);

#endif
