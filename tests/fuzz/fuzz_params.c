/*
 * fuzz_params.c - the parameter parser (`NAME[:ITEM[,ITEM]...]`, escapes,
 * sizes, durations, lists, enums) on a table with every type, with the
 * input split at its first NUL into plugins.conf defaults and the
 * command-line text.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fuzz.h"
#include "params.h"

static const struct pipe_param fuzz_table[] = {
	{ "path", PIPE_PARAM_STR, PIPE_PARAM_POSITIONAL, NULL, "a path",
	  NULL, 0, 0 },
	{ "level", PIPE_PARAM_INT, 0, "3", "an int", NULL, -50, 19 },
	{ "force", PIPE_PARAM_BOOL, 0, "off", "a bool", NULL, 0, 0 },
	{ "mode", PIPE_PARAM_ENUM, 0, "auto", "an enum", "auto|on|off", 0,
	  0 },
	{ "block", PIPE_PARAM_SIZE, 0, "256K", "a size", NULL, 4096,
	  4 << 20 },
	{ "flush", PIPE_PARAM_DURATION, 0, "1s", "a duration", NULL, 0, 0 },
	{ "cpus", PIPE_PARAM_LIST, 0, NULL, "a list", NULL, 0, 0 },
	{ NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct pipe_param *const tables[] = { fuzz_table };
	const char *text, *rest, *const *items;
	char *buf, *name = NULL;
	struct args *a = NULL;
	struct pipe_err err;
	int64_t v;

	buf = malloc(size + 2);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	buf[size + 1] = 0;
	/* defaults before the first NUL, the text after it */
	text = buf + strlen(buf) + 1;
	if (params_parse(&a, "sink 'fuzz'", tables, 1, buf, text, &err) == 0) {
		args_str(a, "path");
		args_int(a, "level");
		args_int(a, "block");
		args_int(a, "flush");
		args_list(a, "cpus", &items);
		args_free(a);
	}
	if (params_split(text, &name, &rest, &err) == 0)
		free(name);
	params_parse_size(buf, &v);
	params_parse_duration(buf, &v);
	free(buf);
	return 0;
}
