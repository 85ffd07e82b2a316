/*
 * fuzz_conf.c - the plugins.conf parser: the input is written to a file
 * of this process and read as the first and then as a second conf file
 * (so replacements are exercised), then every entry is looked up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "conf.h"
#include "err.h"
#include "fuzz.h"
#include "pipe_plugin.h"

static char conf_path[64];

static void on_note(const char *line)
{
	(void)line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pipe_err err;
	struct conf *c;
	char names[256];
	FILE *f;
	uint32_t i;

	if (!conf_path[0])
		snprintf(conf_path, sizeof(conf_path),
			 "/tmp/pipe-fuzz-conf.%ld", (long)getpid());
	f = fopen(conf_path, "wb");
	if (!f)
		return 0;
	if (size)
		fwrite(data, 1, size, f);
	fclose(f);
	c = conf_new();
	if (!c)
		goto out;
	if (conf_load_file(c, conf_path, on_note, &err) == 0)
		conf_load_file(c, conf_path, on_note, &err);
	for (i = 0; i < c->nr; i++)
		conf_find(c, c->entries[i].kind, c->entries[i].name);
	conf_names(c, PIPE_KIND_CODEC, names, sizeof(names));
	conf_free(c);
out:
	unlink(conf_path);
	return 0;
}
