/*
 * json_out.c - the json sink's output: one fixed buffer written out when
 * full, numbers and escaped strings put straight into it, and the layout
 * (commas, keys, indent) of format=perf and format=lines.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "fdio.h"
#include "jsonw.h"

/* ---- buffered output ---------------------------------------------------- */

static void jout_write_all(struct jout *o, const char *p, size_t n)
{
	int ret;

	if (o->err)
		return;
	ret = fdio_write_all(o->fd, p, n);
	if (ret < 0)
		o->err = -ret;
}

void jout_flush(struct jout *o)
{
	assert(o->fd >= 0 || o->len == 0);
	jout_write_all(o, o->buf, o->len);
	o->len = 0;
}

void jout_put(struct jout *o, const char *p, size_t n)
{
	if (o->len + n > o->cap) {
		jout_flush(o);
		if (n > o->cap) {
			jout_write_all(o, p, n);
			return;
		}
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

void jout_lit(struct jout *o, const char *s)
{
	jout_put(o, s, strlen(s));
}

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

static int u64_digits(uint64_t v)
{
	int n = 1;

	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

void jout_u64(struct jout *o, uint64_t v)
{
	int n = u64_digits(v);
	char *end = jout_reserve(o, 20) + n;

	o->len += (size_t)n;
	while (v >= 100) {
		end -= 2;
		memcpy(end, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(end - 2, digit_pairs + 2 * v, 2);
	else
		end[-1] = (char)('0' + v);
}

void jout_i64(struct jout *o, int64_t v)
{
	if (v < 0) {
		jout_put(o, "-", 1);
		jout_u64(o, (uint64_t)0 - (uint64_t)v);
		return;
	}
	jout_u64(o, (uint64_t)v);
}

void jout_hex(struct jout *o, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char *p = jout_reserve(o, 20);
	int nd = (64 - __builtin_clzll(v | 1) + 3) / 4;
	char *end = p + 3 + nd;

	memcpy(p, "\"0x", 3);
	*end = '"';
	o->len += (size_t)nd + 4;
	while (end - p > 4) {
		end -= 2;
		end[0] = digits[v >> 4 & 15];
		end[1] = digits[v & 15];
		v >>= 8;
	}
	if (end - p > 3)
		end[-1] = digits[v & 15];
}

void jout_str(struct jout *o, const char *str)
{
	const char *s = str ? str : "";
	size_t left = strlen(s);
	char *p;

	p = jout_reserve(o, 1);
	*p = '"';
	o->len++;
	while (left > 0) {
		size_t n = left < JSONW_CHUNK ? left : JSONW_CHUNK, used;

		p = jout_reserve(o, JSONW_OUT_MAX(n));
		o->len += jsonw_chunk(p, s, left, &used);
		s += used;
		left -= used;
	}
	p = jout_reserve(o, 1);
	*p = '"';
	o->len++;
}

/* ---- layout ------------------------------------------------------------- */

void delim(struct json *j, struct jout *o, bool comma, int depth)
{
	static const char tabs[] = "\n\t\t\t\t\t\t\t\t";

	if (comma)
		jout_put(o, ",", 1);
	if (j->pretty)
		jout_put(o, tabs, (size_t)depth + 1);
}

void key(struct json *j, struct jout *o, bool comma, int depth,
	 const char *name)
{
	delim(j, o, comma, depth);
	jout_put(o, "\"", 1);
	jout_lit(o, name);
	if (j->pretty)
		jout_put(o, "\": ", 3);
	else
		jout_put(o, "\":", 2);
}

void time_put(struct json *j, struct jout *o, uint64_t ns)
{
	char frac[10];
	int i;

	if (!j->seconds) {
		jout_i64(o, (int64_t)ns);
		return;
	}
	jout_u64(o, ns / 1000000000u);
	ns %= 1000000000u;
	frac[0] = '.';
	for (i = 9; i >= 1; i--) {
		frac[i] = (char)('0' + ns % 10);
		ns /= 10;
	}
	jout_put(o, frac, 10);
}
