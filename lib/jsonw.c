/*
 * jsonw.c - JSON strings from any bytes (see jsonw.h): escapes, and
 * U+FFFD for each byte that does not start a valid UTF-8 sequence.
 */
#include <string.h>

#include "jsonw.h"

size_t jsonw_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;          /* overlong */
	else if (c == 0xed)
		hi = 0x9f;          /* surrogates */
	else if (c == 0xf0)
		lo = 0x90;          /* overlong */
	else if (c == 0xf4)
		hi = 0x8f;          /* above U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* Write one byte of s that needs escaping (or an invalid UTF-8 byte) to
 * p; returns the bytes written (at most 6). */
static size_t escape_byte(char *p, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";

	if (c >= 0x80) {
		memcpy(p, "\xef\xbf\xbd", 3);
		return 3;
	}
	p[0] = '\\';
	switch (c) {
	case '"':
	case '\\':
		p[1] = (char)c;
		return 2;
	case '\n':
		p[1] = 'n';
		return 2;
	case '\t':
		p[1] = 't';
		return 2;
	case '\r':
		p[1] = 'r';
		return 2;
	case '\b':
		p[1] = 'b';
		return 2;
	case '\f':
		p[1] = 'f';
		return 2;
	default:
		memcpy(p + 1, "u00", 3);
		p[4] = hex[c >> 4];
		p[5] = hex[c & 15];
		return 6;
	}
}

size_t jsonw_chunk(char *dst, const char *str, size_t len, size_t *used)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = len < JSONW_CHUNK ? len : JSONW_CHUNK, i = 0;
	char *p = dst;

	/* never split a UTF-8 sequence between chunks */
	while (n < len && n > JSONW_CHUNK - 4 && (s[n] & 0xc0) == 0x80)
		n--;
	while (i < n) {
		unsigned char c = s[i];
		size_t k;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*p++ = (char)c;
			i++;
			continue;
		}
		if (c >= 0x80) {
			k = jsonw_utf8_len(s + i, n - i);
			if (k) {
				memcpy(p, s + i, k);
				p += k;
				i += k;
				continue;
			}
		}
		p += escape_byte(p, c);
		i++;
	}
	*used = i;
	return (size_t)(p - dst);
}

void jsonw_fputs(FILE *f, const char *s)
{
	char buf[JSONW_OUT_MAX(JSONW_CHUNK)];
	size_t left = s ? strlen(s) : 0;

	putc('"', f);
	while (left > 0) {
		size_t used, n = jsonw_chunk(buf, s, left, &used);

		fwrite(buf, 1, n, f);
		s += used;
		left -= used;
	}
	putc('"', f);
}
