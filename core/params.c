/*
 * params.c - parsing `NAME[:ITEM[,ITEM]...]` against a plugin's parameter
 * tables (README, Usage), the typed value parsers, and the `pipe help NAME`
 * text generated from a table.  Messages name the plugin and list what is
 * valid; a table default that does not parse is reported as such.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "grow.h"
#include "params.h"

#define PARAMS_MAX 64         /* parameters over all tables */
#define PARAMS_TEXT_MAX 65536 /* longest argument text */
#define PARAMS_LIST_MAX 1024  /* items of one list value */

#define KIB INT64_C(1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)
#define NS_US INT64_C(1000)
#define NS_MS INT64_C(1000000)
#define NS_S INT64_C(1000000000)

struct arg {
	const struct pipe_param *param; /* borrowed from the plugin's table */
	bool set;                       /* given by defaults or text */
	char *text;                     /* unescaped value; NULL: none */
	int64_t num;                    /* INT/BOOL/SIZE/DURATION/ENUM value */
	char **items;                   /* LIST items, unescaped */
	uint32_t nr_items;
	size_t cap_items;               /* room in items */
};

struct args {
	struct arg *v;  /* one per parameter, table order */
	uint32_t nr;
	const struct arg *positional; /* in v, or NULL */
};

/* What a parse pass is reading, for messages. */
struct pass {
	const char *what;   /* "codec 'zstd'" */
	const char *source; /* "value" or "default" */
	bool seen[PARAMS_MAX]; /* keys given in this pass */
};

/* A character that a backslash escapes inside a value. */
static bool is_escapable(char c)
{
	return c == ',' || c == '+' || c == '=' || c == '\\' || c == ':';
}

/* Length of s[0..len) up to the first unescaped `stop` (len if none). */
static size_t span_to(const char *s, size_t len, char stop)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len && is_escapable(s[i + 1])) {
			i++;
			continue;
		}
		if (s[i] == stop)
			return i;
	}
	return len;
}

/* A malloc'd copy of s[0..len) with escapes removed; a backslash before
 * any other character stays as it is. */
static char *unescape(const char *s, size_t len)
{
	char *out = malloc(len + 1);
	size_t i, n = 0;

	if (!out)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len && is_escapable(s[i + 1]))
			i++;
		out[n++] = s[i];
	}
	out[n] = '\0';
	return out;
}

int params_split(const char *spec, char **name, const char **rest,
		 struct pipe_err *err)
{
	size_t len = strlen(spec);
	size_t n = span_to(spec, len, ':');

	*name = NULL;
	*rest = NULL;
	if (n == 0)
		return pipe_err_set(err, -EINVAL,
				    "missing plugin name in '%s'", spec);
	*name = unescape(spec, n);
	if (!*name)
		return pipe_err_nomem(err, "cannot parse '%s'", spec);
	if (n < len)
		*rest = spec + n + 1;
	return 0;
}

/* ---- value parsers ------------------------------------------------------ */

struct unit {
	const char *suffix;
	int64_t mult;
};

static const struct unit size_units[] = {
	{ "", 1 }, { "K", KIB }, { "M", MIB }, { "G", GIB },
	{ "k", KIB }, { "m", MIB }, { "g", GIB }, { NULL, 0 },
};

static const struct unit duration_units[] = {
	{ "", NS_S }, { "s", NS_S }, { "ms", NS_MS }, { "us", NS_US },
	{ "ns", 1 }, { NULL, 0 },
};

/*
 * DIGITS[.DIGITS]SUFFIX, exact: the value times the unit must be a whole
 * number (at most 9 decimals keeps frac * mult within int64).
 */
static int scaled_parse(const char *s, const struct unit *units,
			int64_t *out)
{
	int64_t whole = 0, frac = 0, pow10 = 1, mult = 0, frac_part;
	int digits = 0, decimals = 0;
	const struct unit *u;

	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		if (whole > (INT64_MAX - (*s - '0')) / 10)
			return -EINVAL;
		whole = whole * 10 + (*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, decimals++) {
			if (decimals == 9)
				return -EINVAL;
			frac = frac * 10 + (*s - '0');
			pow10 *= 10;
		}
		if (decimals == 0)
			return -EINVAL;
	}
	if (digits + decimals == 0)
		return -EINVAL;
	for (u = units; u->suffix; u++) {
		if (!strcmp(s, u->suffix)) {
			mult = u->mult;
			break;
		}
	}
	if (!mult)
		return -EINVAL;
	if ((frac * mult) % pow10)
		return -EINVAL;
	frac_part = frac * mult / pow10;
	if (whole > (INT64_MAX - frac_part) / mult)
		return -EINVAL;
	*out = whole * mult + frac_part;
	return 0;
}

int params_parse_size(const char *s, int64_t *out)
{
	return scaled_parse(s, size_units, out);
}

int params_parse_duration(const char *s, int64_t *ns)
{
	return scaled_parse(s, duration_units, ns);
}

static int int_parse(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!(*s == '-' || (*s >= '0' && *s <= '9')))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Index of `s` among "a|b|c", or -1. */
static int choice_index(const char *choices, const char *s)
{
	const char *p = choices;
	size_t len = strlen(s);
	int i = 0;

	for (;;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);

		if (n == len && !strncmp(p, s, n))
			return i;
		if (!bar)
			return -1;
		p = bar + 1;
		i++;
	}
}

static bool has_bounds(const struct pipe_param *p)
{
	return p->min != 0 || p->max != 0;
}

static bool in_bounds(const struct pipe_param *p, int64_t v)
{
	return !has_bounds(p) || (v >= p->min && v <= p->max);
}

static void size_format(char *buf, size_t cap, int64_t v)
{
	if (v != 0 && v % GIB == 0)
		snprintf(buf, cap, "%" PRId64 "G", v / GIB);
	else if (v != 0 && v % MIB == 0)
		snprintf(buf, cap, "%" PRId64 "M", v / MIB);
	else if (v != 0 && v % KIB == 0)
		snprintf(buf, cap, "%" PRId64 "K", v / KIB);
	else
		snprintf(buf, cap, "%" PRId64, v);
}

static void duration_format(char *buf, size_t cap, int64_t v)
{
	if (v % NS_S == 0)
		snprintf(buf, cap, "%" PRId64 "s", v / NS_S);
	else if (v % NS_MS == 0)
		snprintf(buf, cap, "%" PRId64 "ms", v / NS_MS);
	else if (v % NS_US == 0)
		snprintf(buf, cap, "%" PRId64 "us", v / NS_US);
	else
		snprintf(buf, cap, "%" PRId64 "ns", v);
}

/* "a|b|c" -> "a, b or c" */
static void choices_format(char *buf, size_t cap, const char *choices)
{
	const char *p = choices, *last = strrchr(choices, '|');
	size_t n = 0;

	buf[0] = '\0';
	while (n < cap) {
		const char *bar = strchr(p, '|');
		int len = bar ? (int)(bar - p) : (int)strlen(p);
		const char *sep = !bar ? "" : bar == last ? " or " : ", ";

		n += (size_t)snprintf(buf + n, cap - n, "%.*s%s", len, p, sep);
		if (!bar)
			break;
		p = bar + 1;
	}
}

/* What a parameter accepts, for "bad value ...: expected WHAT". */
static void expected_format(char *buf, size_t cap, const struct pipe_param *p)
{
	char lo[32], hi[32], list[200];

	switch (p->type) {
	case PIPE_PARAM_INT:
		if (has_bounds(p))
			snprintf(buf, cap, "an integer from %" PRId64
				 " to %" PRId64, p->min, p->max);
		else
			snprintf(buf, cap, "an integer");
		break;
	case PIPE_PARAM_BOOL:
		snprintf(buf, cap, "on or off");
		break;
	case PIPE_PARAM_SIZE:
		if (has_bounds(p)) {
			size_format(lo, sizeof(lo), p->min);
			size_format(hi, sizeof(hi), p->max);
			snprintf(buf, cap, "a size from %s to %s "
				 "(bytes, or K, M, G)", lo, hi);
		} else {
			snprintf(buf, cap, "a size like 4096, 64K, 4M or 1G");
		}
		break;
	case PIPE_PARAM_DURATION:
		if (has_bounds(p)) {
			duration_format(lo, sizeof(lo), p->min);
			duration_format(hi, sizeof(hi), p->max);
			snprintf(buf, cap, "a duration from %s to %s", lo, hi);
		} else {
			snprintf(buf, cap,
				 "a duration like 2.5s, 100ms, 50us or 10ns");
		}
		break;
	case PIPE_PARAM_ENUM:
		choices_format(list, sizeof(list), p->choices);
		snprintf(buf, cap, "%s", list);
		break;
	case PIPE_PARAM_LIST:
		snprintf(buf, cap, "items joined by '+'");
		break;
	case PIPE_PARAM_OUTPUT:
		snprintf(buf, cap, "a file name, or - for standard output");
		break;
	default:
		snprintf(buf, cap, "text");
		break;
	}
}

static void arg_reset(struct arg *a)
{
	uint32_t i;

	free(a->text);
	a->text = NULL;
	for (i = 0; i < a->nr_items; i++)
		free(a->items[i]);
	free(a->items);
	a->items = NULL;
	a->nr_items = 0;
	a->cap_items = 0;
	a->num = 0;
}

/* Split the raw (escaped) list value into unescaped items. */
static int list_parse(struct arg *a, const char *raw, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return 0;
	for (;;) {
		size_t n = span_to(raw + off, len - off, '+');

		if (n == 0 || a->nr_items == PARAMS_LIST_MAX)
			return -EINVAL;
		if (grow_array(&a->items, &a->cap_items,
			       (size_t)a->nr_items + 1, sizeof(*a->items), 8,
			       PARAMS_LIST_MAX) < 0)
			return -ENOMEM;
		a->items[a->nr_items] = unescape(raw + off, n);
		if (!a->items[a->nr_items])
			return -ENOMEM;
		a->nr_items++;
		off += n;
		if (off == len)
			return 0;
		off++;  /* the '+' */
		if (off == len)
			return -EINVAL;
	}
}

/* Check and store one value, raw[0..len) still escaped. */
static int value_parse(struct arg *a, const char *raw, size_t len,
		       const struct pass *ps, struct pipe_err *err)
{
	const struct pipe_param *p = a->param;
	char expected[256];
	int ret = 0;

	arg_reset(a);
	a->text = unescape(raw, len);
	if (!a->text)
		return pipe_err_nomem(err, "cannot parse the arguments of %s",
				      ps->what);
	if (len == 0 && p->type != PIPE_PARAM_STR &&
	    p->type != PIPE_PARAM_LIST && p->type != PIPE_PARAM_OUTPUT)
		return pipe_err_set(err, -EINVAL,
				    "missing value for '%s' of %s", p->name,
				    ps->what);
	switch (p->type) {
	case PIPE_PARAM_STR:
		break;
	case PIPE_PARAM_OUTPUT:
		if (!*a->text)
			ret = -EINVAL;
		break;
	case PIPE_PARAM_BOOL:
		if (!strcmp(a->text, "on"))
			a->num = 1;
		else if (!strcmp(a->text, "off"))
			a->num = 0;
		else
			ret = -EINVAL;
		break;
	case PIPE_PARAM_INT:
	case PIPE_PARAM_SIZE:
	case PIPE_PARAM_DURATION:
		ret = p->type == PIPE_PARAM_INT ? int_parse(a->text, &a->num) :
		      p->type == PIPE_PARAM_SIZE ?
			params_parse_size(a->text, &a->num) :
			params_parse_duration(a->text, &a->num);
		if (!ret && !in_bounds(p, a->num))
			ret = -EINVAL;
		break;
	case PIPE_PARAM_ENUM:
		a->num = choice_index(p->choices, a->text);
		if (a->num < 0)
			ret = -EINVAL;
		break;
	case PIPE_PARAM_LIST:
		ret = list_parse(a, raw, len);
		if (ret == -ENOMEM)
			return pipe_err_nomem(err, "cannot parse the "
					      "arguments of %s", ps->what);
		break;
	default:
		assert(!"parameter type checked by params_check_table");
	}
	if (ret < 0) {
		expected_format(expected, sizeof(expected), p);
		return pipe_err_set(err, -EINVAL,
				    "bad %s '%s' for '%s' of %s: expected %s",
				    ps->source, a->text, p->name, ps->what,
				    expected);
	}
	return 0;
}

/* ---- args --------------------------------------------------------------- */

static struct arg *args_find(const struct args *a, const char *name,
			     size_t len)
{
	uint32_t i;

	for (i = 0; i < a->nr; i++) {
		const char *n = a->v[i].param->name;

		if (strlen(n) == len && !strncmp(n, name, len))
			return &a->v[i];
	}
	return NULL;
}

void args_free(struct args *a)
{
	uint32_t i;

	if (!a)
		return;
	for (i = 0; i < a->nr; i++)
		arg_reset(&a->v[i]);
	free(a->v);
	free(a);
}

static void keys_format(char *buf, size_t cap, const struct args *a)
{
	size_t n = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < a->nr && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "",
				      a->v[i].param->name);
}

static void hint_keys(const struct args *a, struct pipe_err *err)
{
	char keys[240];

	keys_format(keys, sizeof(keys), a);
	pipe_err_hint(err, "valid keys: %s", keys);
}

/* A bare item (no '='): the positional value if first, else an error. */
static int bare_item(struct args *a, struct arg *positional, bool first,
		     const char *raw, size_t len, struct pass *ps,
		     struct pipe_err *err)
{
	struct arg *named = args_find(a, raw, len);

	if (first && positional) {
		uint32_t idx = (uint32_t)(positional - a->v);

		ps->seen[idx] = true;
		positional->set = true;
		return value_parse(positional, raw, len, ps, err);
	}
	if (named) {
		pipe_err_set(err, -EINVAL, "missing value for '%s' of %s",
			     named->param->name, ps->what);
		pipe_err_hint(err, "write %s=VALUE", named->param->name);
		return -EINVAL;
	}
	if (a->nr == 0) {
		pipe_err_set(err, -EINVAL, "unexpected value '%.*s': %s takes "
			     "no parameters", (int)len, raw, ps->what);
		return -EINVAL;
	}
	if (first)
		pipe_err_set(err, -EINVAL, "unexpected value '%.*s' for %s: "
			     "it has no positional parameter", (int)len, raw,
			     ps->what);
	else
		pipe_err_set(err, -EINVAL, "unexpected value '%.*s' for %s: "
			     "only the first item may be a bare value",
			     (int)len, raw, ps->what);
	hint_keys(a, err);
	return -EINVAL;
}

/* One ITEM: key=value, or a bare value. */
static int item_parse(struct args *a, struct arg *positional, bool first,
		      const char *raw, size_t len, struct pass *ps,
		      struct pipe_err *err)
{
	size_t klen = span_to(raw, len, '=');
	struct arg *arg;
	uint32_t idx;

	if (klen == len)
		return bare_item(a, positional, first, raw, len, ps, err);
	if (klen == 0)
		return pipe_err_set(err, -EINVAL,
				    "missing key in '%.*s' for %s", (int)len,
				    raw, ps->what);
	arg = args_find(a, raw, klen);
	if (!arg) {
		pipe_err_set(err, -EINVAL, "unknown key '%.*s' for %s",
			     (int)klen, raw, ps->what);
		hint_keys(a, err);
		return -EINVAL;
	}
	idx = (uint32_t)(arg - a->v);
	if (ps->seen[idx]) {
		pipe_err_set(err, -EINVAL, "duplicate key '%s' for %s",
			     arg->param->name, ps->what);
		if (arg == positional)
			pipe_err_hint(err, "the bare first value is '%s'",
				      arg->param->name);
		return -EINVAL;
	}
	ps->seen[idx] = true;
	arg->set = true;
	return value_parse(arg, raw + klen + 1, len - klen - 1, ps, err);
}

/* Apply one argument text (defaults or the command line's). */
static int text_apply(struct args *a, struct arg *positional,
		      const char *text, struct pass *ps, struct pipe_err *err)
{
	size_t len = strlen(text), off = 0;
	bool first = true;

	if (len == 0)
		return 0;
	if (len > PARAMS_TEXT_MAX)
		return pipe_err_set(err, -EINVAL,
				    "arguments of %s are too long (%zu bytes, "
				    "at most %d)", ps->what, len,
				    PARAMS_TEXT_MAX);
	for (;;) {
		size_t n = span_to(text + off, len - off, ',');
		int ret;

		if (n == 0)
			return pipe_err_set(err, -EINVAL, "empty item in '%s' "
					    "for %s", text, ps->what);
		ret = item_parse(a, positional, first, text + off, n, ps, err);
		if (ret < 0)
			return ret;
		first = false;
		off += n;
		if (off == len)
			return 0;
		off++;  /* the ',' */
		if (off == len)
			return pipe_err_set(err, -EINVAL, "empty item in '%s' "
					    "for %s", text, ps->what);
	}
}

/* Fill a->v from the tables, table defaults parsed. */
static int args_build(struct args *a, const char *what,
		      const struct pipe_param *const *tables,
		      uint32_t nr_tables, struct arg **positional,
		      struct pipe_err *err)
{
	struct pass ps = { .what = what, .source = "default" };
	uint32_t t, i;
	int ret;

	*positional = NULL;
	for (t = 0; t < nr_tables; t++) {
		const struct pipe_param *p = tables[t];

		for (; p && p->name; p++) {
			if (a->nr == PARAMS_MAX)
				return pipe_err_set(err, -EINVAL, "%s has more "
						    "than %d parameters", what,
						    PARAMS_MAX);
			a->v[a->nr].param = p;
			if (t == 0 && (p->flags & PIPE_PARAM_POSITIONAL) &&
			    !*positional)
				*positional = &a->v[a->nr];
			a->nr++;
		}
	}
	for (i = 0; i < a->nr; i++) {
		const char *def = a->v[i].param->def;

		if (!def)
			continue;
		ret = value_parse(&a->v[i], def, strlen(def), &ps, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int params_parse(struct args **out, const char *what,
		 const struct pipe_param *const *tables, uint32_t nr_tables,
		 const char *defaults, const char *text, struct pipe_err *err)
{
	struct pass ps = { .what = what, .source = "value" };
	struct arg *positional;
	struct args *a;
	uint32_t i;
	int ret;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (a)
		a->v = calloc(PARAMS_MAX, sizeof(*a->v));
	if (!a || !a->v) {
		ret = pipe_err_nomem(err, "cannot parse the arguments of %s",
				     what);
		goto out_free;
	}
	ret = args_build(a, what, tables, nr_tables, &positional, err);
	if (ret < 0)
		goto out_free;
	a->positional = positional;
	if (defaults) {
		ret = text_apply(a, positional, defaults, &ps, err);
		if (ret < 0) {
			pipe_err_hint(err, "in the default arguments '%s' from "
				      "plugins.conf", defaults);
			goto out_free;
		}
		memset(ps.seen, 0, sizeof(ps.seen));
	}
	if (text) {
		ret = text_apply(a, positional, text, &ps, err);
		if (ret < 0)
			goto out_free;
	}
	for (i = 0; i < a->nr; i++) {
		const struct pipe_param *p = a->v[i].param;

		if ((p->flags & PIPE_PARAM_REQUIRED) && !a->v[i].set) {
			ret = pipe_err_set(err, -EINVAL, "missing value for "
					   "'%s' of %s", p->name, what);
			goto out_free;
		}
	}
	*out = a;
	return 0;

out_free:
	args_free(a);
	return ret;
}

static const struct arg *arg_get(const struct args *a, const char *name)
{
	const struct arg *arg = args_find(a, name, strlen(name));

	assert(arg && "parameter name not in the plugin's tables");
	return arg;
}

const char *args_positional(const struct args *a)
{
	if (!a->positional || !a->positional->set)
		return NULL;
	return a->positional->text;
}

bool args_has(const struct args *a, const char *name)
{
	return args_find(a, name, strlen(name)) != NULL;
}

const char *args_str(const struct args *a, const char *name)
{
	return arg_get(a, name)->text;
}

int64_t args_int(const struct args *a, const char *name)
{
	return arg_get(a, name)->num;
}

bool args_is_set(const struct args *a, const char *name)
{
	return arg_get(a, name)->set;
}

uint32_t args_list(const struct args *a, const char *name,
		   const char *const **items)
{
	const struct arg *arg = arg_get(a, name);

	*items = (const char *const *)arg->items;
	return arg->nr_items;
}

/* ---- tables ------------------------------------------------------------- */

static bool name_is_valid(const char *s)
{
	if (!*s || strlen(s) > 32)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || *s == '_' ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static int param_check(const struct pipe_param *p, const char *what,
		       struct pipe_err *err)
{
	const char *why = NULL;

	if (!name_is_valid(p->name))
		why = "names use a-z, 0-9 and '_'";
	else if (p->type < PIPE_PARAM_STR || p->type > PIPE_PARAM_OUTPUT)
		why = "unknown type";
	else if (p->type == PIPE_PARAM_ENUM &&
		 (!p->choices || !*p->choices))
		why = "an enum needs choices";
	else if (has_bounds(p) && p->min > p->max)
		why = "min is above max";
	else if (!p->help)
		why = "no help text";
	if (!why)
		return 0;
	return pipe_err_set(err, -EINVAL, "%s has a bad parameter '%.32s': %s",
			    what, p->name, why);
}

int params_check_table(const struct pipe_param *table, const char *what,
		       struct pipe_err *err)
{
	const struct pipe_param *const tables[] = { table };
	const struct pipe_param *p;
	struct arg *positional;
	struct args a = { 0 };
	uint32_t n = 0, nr_positional = 0, i, j;
	int ret;

	for (p = table; p && p->name; p++, n++) {
		if (n == PARAMS_MAX)
			return pipe_err_set(err, -EINVAL, "%s has more than %d "
					    "parameters", what, PARAMS_MAX);
		ret = param_check(p, what, err);
		if (ret < 0)
			return ret;
		if (p->flags & PIPE_PARAM_POSITIONAL)
			nr_positional++;
		for (j = 0; j < n; j++)
			if (!strcmp(table[j].name, p->name))
				return pipe_err_set(err, -EINVAL, "%s has the "
						    "parameter '%s' twice",
						    what, p->name);
	}
	if (nr_positional > 1)
		return pipe_err_set(err, -EINVAL, "%s has %u positional "
				    "parameters, at most 1", what,
				    nr_positional);
	a.v = calloc(PARAMS_MAX, sizeof(*a.v));
	if (!a.v)
		return pipe_err_nomem(err, "cannot check %s", what);
	ret = args_build(&a, what, tables, 1, &positional, err);
	for (i = 0; i < a.nr; i++)
		arg_reset(&a.v[i]);
	free(a.v);
	return ret;
}

/* ---- help --------------------------------------------------------------- */

/* The value part of the left column: "1..19", "on|off", "SIZE". */
static void type_format(char *buf, size_t cap, const struct pipe_param *p)
{
	char lo[32], hi[32];

	switch (p->type) {
	case PIPE_PARAM_INT:
		if (has_bounds(p))
			snprintf(buf, cap, "%" PRId64 "..%" PRId64, p->min,
				 p->max);
		else
			snprintf(buf, cap, "N");
		break;
	case PIPE_PARAM_BOOL:
		snprintf(buf, cap, "on|off");
		break;
	case PIPE_PARAM_SIZE:
	case PIPE_PARAM_DURATION:
		if (!has_bounds(p)) {
			snprintf(buf, cap, p->type == PIPE_PARAM_SIZE ?
				 "SIZE" : "TIME");
			break;
		}
		if (p->type == PIPE_PARAM_SIZE) {
			size_format(lo, sizeof(lo), p->min);
			size_format(hi, sizeof(hi), p->max);
		} else {
			duration_format(lo, sizeof(lo), p->min);
			duration_format(hi, sizeof(hi), p->max);
		}
		snprintf(buf, cap, "%s..%s", lo, hi);
		break;
	case PIPE_PARAM_ENUM:
		snprintf(buf, cap, "%s", p->choices);
		break;
	case PIPE_PARAM_LIST:
		snprintf(buf, cap, "A+B+...");
		break;
	case PIPE_PARAM_OUTPUT:
		snprintf(buf, cap, "FILE");
		break;
	default:
		snprintf(buf, cap, "TEXT");
		break;
	}
}

/* The left column: "name=TYPE", or "[name=]TYPE" for the positional one. */
static void spec_format(char *buf, size_t cap, const struct pipe_param *p)
{
	char type[160];

	type_format(type, sizeof(type), p);
	if (p->flags & PIPE_PARAM_POSITIONAL)
		snprintf(buf, cap, "[%s=]%s", p->name, type);
	else
		snprintf(buf, cap, "%s=%s", p->name, type);
}

#define HELP_COL_MAX 28 /* a longer left column puts help on its own line */

void params_help(FILE *f, const struct pipe_param *table)
{
	const struct pipe_param *p;
	char spec[256];
	int width = 0;

	if (!table || !table->name) {
		fprintf(f, "  (no parameters)\n");
		return;
	}
	for (p = table; p->name; p++) {
		int n;

		spec_format(spec, sizeof(spec), p);
		n = (int)strlen(spec);
		if (n <= HELP_COL_MAX && n > width)
			width = n;
	}
	for (p = table; p->name; p++) {
		spec_format(spec, sizeof(spec), p);
		if ((int)strlen(spec) > width)
			fprintf(f, "  %s\n  %-*s  ", spec, width, "");
		else
			fprintf(f, "  %-*s  ", width, spec);
		fprintf(f, "%s", p->help ? p->help : "");
		if (p->flags & PIPE_PARAM_REQUIRED)
			fprintf(f, " (required)");
		else if (p->def && *p->def)
			fprintf(f, " (default %s)", p->def);
		fprintf(f, "\n");
	}
}
