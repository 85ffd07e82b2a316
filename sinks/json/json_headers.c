/*
 * json_headers.c - the json sink's "headers" object: the recording's
 * properties (host, kernel, command line, captured time) and its events,
 * as perf data convert writes them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"

/* ---- headers ------------------------------------------------------------ */

static const char *prop(struct json *j, const char *k)
{
	return j->host->meta_prop(j->ctx, k);
}

/* A property that holds a decimal number, as a JSON number. */
static void key_number_prop(struct json *j, struct jout *o, int depth,
			    const char *name, const char *k)
{
	const char *v = prop(j, k);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || *v == '-')
		return;
	key(j, o, true, depth, name);
	jout_u64(o, n);
}

static void key_string_prop(struct json *j, struct jout *o, int depth,
			    const char *name, const char *k)
{
	const char *v = prop(j, k);

	if (!v)
		return;
	key(j, o, true, depth, name);
	jout_str(o, v);
}

/* A keyed array or object opened: `open` is "[" or "{". */
static void key_open(struct json *j, struct jout *o, int depth,
		     const char *name, const char *open)
{
	key(j, o, true, depth, name);
	jout_put(o, open, 1);
}

/* Its end after nr members (on a line of its own unless empty). */
static void list_close(struct json *j, struct jout *o, int depth,
		       uint32_t nr, const char *close)
{
	if (nr)
		delim(j, o, false, depth);
	jout_put(o, close, 1);
}

/* "captured-on" from the recording's start, as perf's "%FT%TZ" */
static void key_captured_on(struct json *j, struct jout *o, int depth)
{
	const char *v = prop(j, "start_realtime_ns");
	char buf[64], *end;
	unsigned long long ns;
	struct tm tm;
	time_t t;

	if (!v)
		return;
	errno = 0;
	ns = strtoull(v, &end, 10);
	if (errno || *end)
		return;
	t = (time_t)(ns / 1000000000u);
	if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%FT%TZ", &tm))
		return;
	key(j, o, true, depth, "captured-on");
	jout_str(o, buf);
}

/* "cmdline" as perf's array: the property split at spaces. */
static void key_cmdline(struct json *j, struct jout *o, int depth)
{
	const char *v = prop(j, "cmdline");
	bool first = true;
	char word[JSON_CMDLINE_MAX];

	if (!v)
		return;
	key_open(j, o, depth, "cmdline", "[");
	while (*v) {
		size_t n = strcspn(v, " ");

		if (n > 0) {
			if (n >= sizeof(word))
				n = sizeof(word) - 1;
			memcpy(word, v, n);
			word[n] = '\0';
			delim(j, o, !first, depth + 1);
			jout_str(o, word);
			first = false;
		}
		v += strcspn(v, " ");
		v += strspn(v, " ");
	}
	delim(j, o, false, depth);
	jout_put(o, "]", 1);
}

/* "events": the recorded events, which perf's layout leaves out. */
static void key_events(struct json *j, struct jout *o, int depth)
{
	uint32_t i;

	key_open(j, o, depth, "events", "[");
	for (i = 0; i < j->meta->nr_events; i++) {
		const struct pipe_meta_event *e = pipe_meta_event(j->meta, i);

		delim(j, o, i > 0, depth + 1);
		jout_put(o, "{", 1);
		key(j, o, false, depth + 2, "name");
		jout_str(o, e->name);
		if (e->attr) {
			key(j, o, true, depth + 2, "type");
			jout_u64(o, e->attr->type);
			key(j, o, true, depth + 2, "config");
			jout_u64(o, e->attr->config);
			key(j, o, true, depth + 2, e->attr->freq ?
			    "sample_freq" : "sample_period");
			jout_u64(o, e->attr->sample_period);
		}
		delim(j, o, false, depth + 1);
		jout_put(o, "}", 1);
	}
	list_close(j, o, depth, j->meta->nr_events, "]");
}

/* "properties": every metadata property, as text. */
static void key_properties(struct json *j, struct jout *o, int depth)
{
	uint32_t i;

	key_open(j, o, depth, "properties", "{");
	for (i = 0; i < j->meta->nr_props; i++) {
		/* keys come from the recording: escaped like any string */
		delim(j, o, i > 0, depth + 1);
		jout_str(o, j->meta->prop_keys[i]);
		jout_put(o, ": ", j->pretty ? 2 : 1);
		jout_str(o, j->meta->prop_values[i]);
	}
	list_close(j, o, depth, j->meta->nr_props, "}");
}

void headers_put(struct json *j, struct jout *o, int depth)
{
	jout_put(o, "{", 1);
	key(j, o, false, depth + 1, "header-version");
	jout_put(o, "1", 1);
	key_captured_on(j, o, depth + 1);
	key_string_prop(j, o, depth + 1, "hostname", "hostname");
	key_string_prop(j, o, depth + 1, "os-release", "release");
	key_string_prop(j, o, depth + 1, "arch", "arch");
	key_string_prop(j, o, depth + 1, "cpu-desc", "cpu_desc");
	key_string_prop(j, o, depth + 1, "cpuid", "cpuid");
	key_number_prop(j, o, depth + 1, "nrcpus-online", "nr_cpus_online");
	key_number_prop(j, o, depth + 1, "nrcpus-avail", "nr_cpus_avail");
	key_cmdline(j, o, depth + 1);
	key_events(j, o, depth + 1);
	key_properties(j, o, depth + 1);
	delim(j, o, false, depth);
	jout_put(o, "}", 1);
}
