/*
 * test_params.c - the parameter parser: positional and key=value items,
 * lists and escapes, every type with its bounds, defaults from the table
 * and from plugins.conf, the exact error messages, and `pipe help` text.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "harness.h"
#include "params.h"
#include "rnd.h"

static const struct pipe_param zstd_params[] = {
	{ .name = "level", .type = PIPE_PARAM_INT,
	  .flags = PIPE_PARAM_POSITIONAL, .def = "3",
	  .help = "compression level", .min = 1, .max = 19 },
	{ .name = "dict", .type = PIPE_PARAM_BOOL, .def = "off",
	  .help = "train a dictionary" },
	{ .name = "dict_size", .type = PIPE_PARAM_SIZE, .def = "32K",
	  .help = "dictionary size", .min = 1024, .max = 4 * 1024 * 1024 },
	{ .name = "dict_file", .type = PIPE_PARAM_STR,
	  .help = "dictionary to use" },
	{ 0 },
};

static const struct pipe_param writer_params[] = {
	{ .name = "block", .type = PIPE_PARAM_SIZE, .def = "64K",
	  .help = "block size" },
	{ .name = "flush", .type = PIPE_PARAM_DURATION, .def = "1s",
	  .help = "flush interval", .min = 1000000, .max = 60000000000 },
	{ .name = "transform", .type = PIPE_PARAM_ENUM, .def = "columns",
	  .choices = "none|columns", .help = "record transform" },
	{ .name = "sort", .type = PIPE_PARAM_LIST, .def = "comm+dso",
	  .help = "sort keys" },
	{ .name = "big", .type = PIPE_PARAM_INT, .help = "unbounded" },
	{ 0 },
};

static const struct pipe_param report_params[] = {
	{ .name = "output", .type = PIPE_PARAM_STR,
	  .flags = PIPE_PARAM_REQUIRED, .help = "where to write" },
	{ .name = "force", .type = PIPE_PARAM_BOOL, .def = "off",
	  .help = "replace" },
	{ 0 },
};

static struct pipe_err err;

/* Parse against zstd + writer tables; NULL on error (message in err). */
static struct args *zstd(const char *defaults, const char *text)
{
	const struct pipe_param *const tables[] = { zstd_params,
						    writer_params };
	struct args *a = NULL;
	int ret;

	pipe_err_clear(&err);
	ret = params_parse(&a, "codec 'zstd'", tables, 2, defaults, text,
			   &err);
	if (ret < 0) {
		if (a)
			printf("FAILED out set on error\n");
		return NULL;
	}
	return a;
}

/* The message of a failing parse, "" if it succeeded. */
static const char *zstd_err(const char *text)
{
	struct args *a = zstd(NULL, text);

	if (a) {
		args_free(a);
		return "";
	}
	return err.msg;
}

static void test_split(void)
{
	const char *rest;
	char *name;

	CHECK(params_split("zstd:9", &name, &rest, &err) == 0);
	CHECK_STR(name, "zstd");
	CHECK_STR(rest, "9");
	free(name);
	CHECK(params_split("report", &name, &rest, &err) == 0);
	CHECK_STR(name, "report");
	CHECK(rest == NULL);
	free(name);
	CHECK(params_split("./my.so:a:b", &name, &rest, &err) == 0);
	CHECK_STR(name, "./my.so");
	CHECK_STR(rest, "a:b");
	free(name);
	CHECK(params_split("./a\\:b.so:x", &name, &rest, &err) == 0);
	CHECK_STR(name, "./a:b.so");
	CHECK_STR(rest, "x");
	free(name);
	CHECK(params_split("file:", &name, &rest, &err) == 0);
	CHECK_STR(rest, "");
	free(name);
	CHECK(params_split(":x", &name, &rest, &err) == -EINVAL);
	CHECK(name == NULL);
	CHECK_STR(err.msg, "missing plugin name in ':x'");
}

static void test_defaults(void)
{
	const char *const *items;
	struct args *a = zstd(NULL, NULL);

	CHECK(a != NULL);
	if (!a)
		return;
	CHECK(args_int(a, "level") == 3);
	CHECK(!args_is_set(a, "level"));
	CHECK_STR(args_str(a, "level"), "3");
	CHECK(args_int(a, "dict") == 0);
	CHECK(args_int(a, "dict_size") == 32768);
	CHECK(args_str(a, "dict_file") == NULL);
	CHECK(args_int(a, "block") == 65536);
	CHECK(args_int(a, "flush") == 1000000000);
	CHECK(args_int(a, "transform") == 1);
	CHECK(args_list(a, "sort", &items) == 2);
	CHECK_STR(items[0], "comm");
	CHECK_STR(items[1], "dso");
	CHECK(args_int(a, "big") == 0);
	CHECK(args_has(a, "level"));
	CHECK(!args_has(a, "lvl"));
	args_free(a);

	a = zstd(NULL, "");
	CHECK(a != NULL);
	args_free(a);
}

static void test_values(void)
{
	const char *const *items;
	struct args *a;

	a = zstd(NULL, "9,dict=on,dict_size=1M,dict_file=a\\,b\\=c\\\\d\\:e,"
		 "block=4096,flush=2.5s,transform=none,sort=a\\+b+c,"
		 "big=-9223372036854775807");
	CHECK(a != NULL);
	if (!a) {
		printf("  %s\n", err.msg);
		return;
	}
	CHECK(args_int(a, "level") == 9);
	CHECK(args_is_set(a, "level"));
	CHECK(args_int(a, "dict") == 1);
	CHECK(args_int(a, "dict_size") == 1048576);
	CHECK_STR(args_str(a, "dict_file"), "a,b=c\\d:e");
	CHECK(args_int(a, "block") == 4096);
	CHECK(args_int(a, "flush") == 2500000000);
	CHECK(args_int(a, "transform") == 0);
	CHECK(args_list(a, "sort", &items) == 2);
	CHECK_STR(items[0], "a+b");
	CHECK_STR(items[1], "c");
	CHECK(args_int(a, "big") == -INT64_MAX);
	CHECK(!args_is_set(a, "dict_file") == false);
	args_free(a);

	/* a backslash before another character stays */
	a = zstd(NULL, "dict_file=c:\\x\\n");
	CHECK(a && !strcmp(args_str(a, "dict_file"), "c:\\x\\n"));
	args_free(a);
	/* empty text and lists: allowed for STR and LIST */
	a = zstd(NULL, "dict_file=,sort=");
	CHECK(a != NULL);
	if (a) {
		CHECK_STR(args_str(a, "dict_file"), "");
		CHECK(args_list(a, "sort", &items) == 0);
	}
	args_free(a);
	/* key=value as the first item needs no positional */
	a = zstd(NULL, "level=19");
	CHECK(a && args_int(a, "level") == 19);
	args_free(a);
}

/* A text for a size or duration parser and the value it gives. */
struct parse_case {
	const char *text;
	int64_t want; /* REFUSED: the parser returns -EINVAL */
};

#define REFUSED INT64_MIN

/* sizes: bytes, or K, M, G; refused past INT64_MAX */
static const struct parse_case size_cases[] = {
	{ "0", 0 },
	{ "4096", 4096 },
	{ "64K", 65536 },
	{ "64k", 65536 },
	{ "4M", 4194304 },
	{ "1G", 1073741824 },
	{ "1.5K", 1536 },
	{ "0.5", REFUSED },
	{ "", REFUSED },
	{ "K", REFUSED },
	{ "-1", REFUSED },
	{ "1T", REFUSED },
	{ "1KB", REFUSED },
	{ " 1", REFUSED },
	{ "1.", REFUSED },
	{ "9223372036854775807", INT64_MAX },
	{ "9223372036854775808", REFUSED },
	{ "8589934592G", REFUSED },
};

/* durations: seconds, or s, ms, us, ns; refused below 1 ns, past
 * INT64_MAX ns or with another unit */
static const struct parse_case duration_cases[] = {
	{ "2", 2000000000 },
	{ "2s", 2000000000 },
	{ "2.5s", 2500000000 },
	{ ".5", 500000000 },
	{ "100ms", 100000000 },
	{ "1.5ms", 1500000 },
	{ "50us", 50000 },
	{ "10ns", 10 },
	{ "0.000000001s", 1 },
	{ "0.5ns", REFUSED },
	{ "1m", REFUSED },
	{ "1h", REFUSED },
	{ "s", REFUSED },
	{ "1e3", REFUSED },
	{ "99999999999s", REFUSED },
};

/* Texts the zstd tables refuse, their message and (when not NULL) hint. */
static const struct err_case {
	const char *text;
	const char *msg;
	const char *hint;
} err_cases[] = {
	{ "lvl=3",
	  "unknown key 'lvl' for codec 'zstd'",
	  "valid keys: level, dict, dict_size, dict_file, block, flush, "
	  "transform, sort, big" },
	{ "x",
	  "bad value 'x' for 'level' of codec 'zstd': expected an integer from "
	  "1 to 19",
	  NULL },
	{ "20",
	  "bad value '20' for 'level' of codec 'zstd': expected an integer "
	  "from 1 to 19",
	  NULL },
	{ "0",
	  "bad value '0' for 'level' of codec 'zstd': expected an integer from "
	  "1 to 19",
	  NULL },
	{ "3x",
	  "bad value '3x' for 'level' of codec 'zstd': expected an integer "
	  "from 1 to 19",
	  NULL },
	{ "big=99999999999999999999",
	  "bad value '99999999999999999999' for 'big' of codec 'zstd': "
	  "expected an integer",
	  NULL },
	{ "dict=maybe",
	  "bad value 'maybe' for 'dict' of codec 'zstd': expected on or off",
	  NULL },
	{ "dict=yes",
	  "bad value 'yes' for 'dict' of codec 'zstd': expected on or off",
	  NULL },
	{ "dict_size=8G",
	  "bad value '8G' for 'dict_size' of codec 'zstd': expected a size "
	  "from 1K to 4M (bytes, or K, M, G)",
	  NULL },
	{ "block=lots",
	  "bad value 'lots' for 'block' of codec 'zstd': expected a size like "
	  "4096, 64K, 4M or 1G",
	  NULL },
	{ "flush=2m",
	  "bad value '2m' for 'flush' of codec 'zstd': expected a duration "
	  "from 1ms to 60s",
	  NULL },
	{ "transform=rle",
	  "bad value 'rle' for 'transform' of codec 'zstd': expected none or "
	  "columns",
	  NULL },
	{ "sort=a++b",
	  "bad value 'a++b' for 'sort' of codec 'zstd': expected items joined "
	  "by '+'",
	  NULL },
	{ "sort=a+",
	  "bad value 'a+' for 'sort' of codec 'zstd': expected items joined by "
	  "'+'",
	  NULL },
	{ "level=",
	  "missing value for 'level' of codec 'zstd'",
	  NULL },
	{ "9,dict",
	  "missing value for 'dict' of codec 'zstd'",
	  "write dict=VALUE" },
	{ "9,7",
	  "unexpected value '7' for codec 'zstd': only the first item may be a "
	  "bare value",
	  NULL },
	{ "dict=on,dict=off",
	  "duplicate key 'dict' for codec 'zstd'",
	  NULL },
	{ "9,level=3",
	  "duplicate key 'level' for codec 'zstd'",
	  "the bare first value is 'level'" },
	{ "9,",
	  "empty item in '9,' for codec 'zstd'",
	  NULL },
	{ ",9",
	  "empty item in ',9' for codec 'zstd'",
	  NULL },
	{ "9,,dict=on",
	  "empty item in '9,,dict=on' for codec 'zstd'",
	  NULL },
	{ "=3",
	  "missing key in '=3' for codec 'zstd'",
	  NULL },
	/* an escaped '=' is no key */
	{ "dict\\=on",
	  "bad value 'dict=on' for 'level' of codec 'zstd': expected an "
	  "integer from 1 to 19",
	  NULL },
};

/* Each case of cases[n] through parse; a failure names the text. */
static void check_parse(int (*parse)(const char *s, int64_t *out),
			const struct parse_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int64_t v = REFUSED;
		int ret = parse(cases[i].text, &v);
		bool ok = cases[i].want == REFUSED ? ret == -EINVAL :
			  ret == 0 && v == cases[i].want;

		CHECK(ok);
		if (!ok)
			printf("  '%s': %d, %" PRId64 "\n", cases[i].text, ret,
			       v);
	}
}

static void test_sizes_durations(void)
{
	check_parse(params_parse_size, size_cases,
		    sizeof(size_cases) / sizeof(size_cases[0]));
	check_parse(params_parse_duration, duration_cases,
		    sizeof(duration_cases) / sizeof(duration_cases[0]));
}

static void test_errors(void)
{
	size_t i;

	for (i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		CHECK_STR(zstd_err(err_cases[i].text), err_cases[i].msg);
		if (err_cases[i].hint)
			CHECK_STR(err.hint, err_cases[i].hint);
	}
}

static void test_required_positionless(void)
{
	const struct pipe_param *const tables[] = { report_params };
	const struct pipe_param empty[] = { { 0 } };
	const struct pipe_param *const none[] = { empty };
	struct args *a = NULL;

	CHECK(params_parse(&a, "sink 'report'", tables, 1, NULL, "force=on",
			   &err) == -EINVAL);
	CHECK(a == NULL);
	CHECK_STR(err.msg, "missing value for 'output' of sink 'report'");
	CHECK(params_parse(&a, "sink 'report'", tables, 1, NULL,
			   "x.txt", &err) == -EINVAL);
	CHECK_STR(err.msg, "unexpected value 'x.txt' for sink 'report': it "
		  "has no positional parameter");
	CHECK_STR(err.hint, "valid keys: output, force");
	CHECK(params_parse(&a, "sink 'report'", tables, 1, NULL,
			   "output=r.txt", &err) == 0);
	CHECK(a && !strcmp(args_str(a, "output"), "r.txt"));
	args_free(a);
	/* a required value from plugins.conf defaults counts */
	CHECK(params_parse(&a, "sink 'report'", tables, 1, "output=d.txt",
			   NULL, &err) == 0);
	CHECK(a && args_is_set(a, "output"));
	args_free(a);

	CHECK(params_parse(&a, "sink 'null'", none, 1, NULL, "x", &err) ==
	      -EINVAL);
	CHECK_STR(err.msg, "unexpected value 'x': sink 'null' takes no "
		  "parameters");
	CHECK(params_parse(&a, "sink 'null'", none, 1, NULL, "", &err) == 0);
	args_free(a);
	/* a NULL table is a plugin without parameters */
	CHECK(params_parse(&a, "sink 'null'", (const struct pipe_param *
	      const[]){ NULL }, 1, NULL, NULL, &err) == 0);
	args_free(a);
}

static void test_conf_defaults(void)
{
	struct args *a;

	/* defaults first, then the command line overrides them */
	a = zstd("7,dict=on", "dict=off");
	CHECK(a != NULL);
	if (a) {
		CHECK(args_int(a, "level") == 7);
		CHECK(args_int(a, "dict") == 0);
		CHECK(args_is_set(a, "level"));
	}
	args_free(a);
	a = zstd("7", "12");
	CHECK(a && args_int(a, "level") == 12);
	args_free(a);
	a = zstd("7", "level=12");
	CHECK(a && args_int(a, "level") == 12);
	args_free(a);
	a = zstd("lvl=7", "12");
	CHECK(a == NULL);
	CHECK_STR(err.msg, "unknown key 'lvl' for codec 'zstd'");
	CHECK_STR(err.hint, "in the default arguments 'lvl=7' from "
		  "plugins.conf");
}

/* A table params_check_table refuses with msg. */
static void check_bad_table(const struct pipe_param *table, const char *msg)
{
	CHECK(params_check_table(table, "plugin 'x.so'", &err) == -EINVAL);
	CHECK_STR(err.msg, msg);
}

static void test_bad_tables(void)
{
	const struct pipe_param bad_def[] = {
		{ .name = "level", .type = PIPE_PARAM_INT, .def = "30",
		  .help = "h", .min = 1, .max = 19 },
		{ 0 },
	};
	const struct pipe_param two_pos[] = {
		{ .name = "a", .type = PIPE_PARAM_STR,
		  .flags = PIPE_PARAM_POSITIONAL, .help = "h" },
		{ .name = "b", .type = PIPE_PARAM_STR,
		  .flags = PIPE_PARAM_POSITIONAL, .help = "h" },
		{ 0 },
	};
	const struct pipe_param bad_name[] = {
		{ .name = "Level", .type = PIPE_PARAM_INT, .help = "h" },
		{ 0 },
	};
	const struct pipe_param no_choices[] = {
		{ .name = "mode", .type = PIPE_PARAM_ENUM, .help = "h" },
		{ 0 },
	};
	const struct pipe_param bad_type[] = {
		{ .name = "mode", .type = 99, .help = "h" },
		{ 0 },
	};
	const struct pipe_param twice[] = {
		{ .name = "a", .type = PIPE_PARAM_STR, .help = "h" },
		{ .name = "a", .type = PIPE_PARAM_STR, .help = "h" },
		{ 0 },
	};

	CHECK(params_check_table(zstd_params, "plugin 'x.so'", &err) == 0);
	CHECK(params_check_table(writer_params, "plugin 'x.so'", &err) == 0);
	CHECK(params_check_table(NULL, "plugin 'x.so'", &err) == 0);
	check_bad_table(bad_def, "bad default '30' for 'level' of plugin "
			"'x.so': expected an integer from 1 to 19");
	check_bad_table(two_pos, "plugin 'x.so' has 2 positional "
			"parameters, at most 1");
	check_bad_table(bad_name, "plugin 'x.so' has a bad parameter "
			"'Level': names use a-z, 0-9 and '_'");
	check_bad_table(no_choices, "plugin 'x.so' has a bad parameter "
			"'mode': an enum needs choices");
	check_bad_table(bad_type, "plugin 'x.so' has a bad parameter "
			"'mode': unknown type");
	check_bad_table(twice, "plugin 'x.so' has the parameter 'a' twice");
}

static void test_help(void)
{
	const struct pipe_param long_params[] = {
		{ .name = "mode", .type = PIPE_PARAM_ENUM,
		  .choices = "ffffffffff|gggggggggg|hhhhhhhhhh",
		  .def = "gggggggggg", .help = "pick one" },
		{ .name = "file", .type = PIPE_PARAM_STR,
		  .flags = PIPE_PARAM_POSITIONAL, .help = "the input" },
		{ 0 },
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		CHECK(f != NULL);
		return;
	}
	params_help(f, zstd_params);
	params_help(f, writer_params);
	params_help(f, report_params);
	params_help(f, NULL);
	params_help(f, long_params);
	fclose(f);
	CHECK_STR(buf,
		  "  [level=]1..19     compression level (default 3)\n"
		  "  dict=on|off       train a dictionary (default off)\n"
		  "  dict_size=1K..4M  dictionary size (default 32K)\n"
		  "  dict_file=TEXT    dictionary to use\n"
		  "  block=SIZE              block size (default 64K)\n"
		  "  flush=1ms..60s          flush interval (default 1s)\n"
		  "  transform=none|columns  record transform (default "
		  "columns)\n"
		  "  sort=A+B+...            sort keys (default comm+dso)\n"
		  "  big=N                   unbounded\n"
		  "  output=TEXT   where to write (required)\n"
		  "  force=on|off  replace (default off)\n"
		  "  (no parameters)\n"
		  "  mode=ffffffffff|gggggggggg|hhhhhhhhhh\n"
		  "               pick one (default gggggggggg)\n"
		  "  [file=]TEXT  the input\n");
	free(buf);
}

/* Random texts from the characters that matter: every parse either
 * succeeds or fails with a message, and never touches memory it should
 * not (the ASan build checks that). */
static void test_random(void)
{
	static const char alphabet[] = "ab1k=,+\\:.-9sm";
	const struct pipe_param *const tables[] = { zstd_params,
						    writer_params };
	uint32_t seed = 12345;
	int round, bad = 0, ok = 0;

	for (round = 0; round < 20000; round++) {
		char text[24];
		struct args *a = NULL;
		size_t n, i;
		int ret;

		n = (rnd_lcg32(&seed) >> 16) % sizeof(text);
		for (i = 0; i < n; i++) {
			text[i] = alphabet[(rnd_lcg32(&seed) >> 16) %
					   (sizeof(alphabet) - 1)];
		}
		text[n] = '\0';
		err.msg[0] = '\0';
		ret = params_parse(&a, "codec 'zstd'", tables, 2, NULL, text,
				   &err);
		if (ret == 0 && a) {
			ok++;
		} else if (ret != -EINVAL || a || !err.msg[0]) {
			bad++;
			printf("  '%s': %d '%s'\n", text, ret, err.msg);
		}
		args_free(a);
	}
	CHECK(bad == 0);
	CHECK(ok > 0);
}

int main(void)
{
	test_split();
	test_defaults();
	test_values();
	test_sizes_durations();
	test_errors();
	test_required_positionless();
	test_conf_defaults();
	test_bad_tables();
	test_help();
	test_random();
	return test_result();
}
