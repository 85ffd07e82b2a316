/*
 * test_pltgot.c - stubs in .plt.got (x86-64: calls through GLOB_DAT
 * slots) named NAME@plt, at the addresses and with the names objdump
 * gives them, in 8-byte and 16-byte (IBT) layouts, stripped or not.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfsyms.h"
#include "err.h"
#include "fixtures.h"
#include "harness.h"
#include "symtab.h"

static char fx[1024]; /* fixture dir */

/* Every stub objdump labels in .plt.got of `name`; returns the count. */
static int check_binary(const char *name)
{
	char path[1200], cmd[2600], line[512], want[400];
	struct symtab *t = NULL;
	struct pipe_err err;
	unsigned long long a;
	uint32_t idx;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fx, name);
	CHECK(elfsyms_read_plt(path, &t, &err) == 0);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt.got '%s' 2>/dev/null",
		 path);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx <%399[^>]>:", &a, want) != 2)
			continue;
		n++;
		CHECK(t && symtab_find(t, a, &idx));
		if (!t || !symtab_find(t, a, &idx))
			continue;
		CHECK_STR(symtab_name(t, idx), want);
		CHECK(symtab_start(t, idx) == a);
	}
	if (f)
		pclose(f);
	symtab_free(t);
	return n;
}

int main(void)
{
	int ret = fixtures_build(fx, sizeof(fx));

	if (ret != 0)
		return ret;
	if (system("objdump --version >/dev/null 2>&1") != 0) {
		printf("SKIP: no objdump (binutils)\n");
		return 77;
	}
	/* fxn_loop, fxn_id and __cxa_finalize */
	CHECK(check_binary("fx_pltgot") == 3);
	CHECK(check_binary("fx_pltgot_ibt") == 3);
	/* every PIE gcc links has __cxa_finalize there */
	CHECK(check_binary("fx_pie") >= 1);
	CHECK(check_binary("fx_names_stripped") >= 1);
	CHECK(check_binary("libfxn.so") >= 1);
	return test_result();
}
