/*
 * test_pltgot.c - stubs in .plt.got (x86-64: calls through GLOB_DAT
 * slots) named NAME@plt, at the addresses and with the names objdump
 * gives them, in 8-byte and 16-byte (IBT) layouts, stripped or not; and
 * the PLT stub of a local IFUNC (an IRELATIVE relocation, which objdump
 * labels *ABS*+0xRESOLVER@plt) named after the IFUNC symbol nm shows at
 * that address.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfplt.h"
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
	CHECK(elfplt_read(path, &t, &err) == 0);
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

static void test_ifunc(void)
{
	char path[1200], cmd[2600], line[512], want[400];
	struct symtab *t = NULL;
	struct pipe_err err;
	unsigned long long a, at;
	uint32_t idx;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/fx_ifunc", fx);
	CHECK(elfplt_read(path, &t, &err) == 0 && t);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt '%s' 2>/dev/null",
		 path);
	f = popen(cmd, "r");
	while (t && f && fgets(line, sizeof(line), f)) {
		char nm_cmd[1600], name[256] = "";
		FILE *g;

		/* the stub, not the header (<*ABS*+0x...@plt-0x10>) */
		if (!strstr(line, "@plt>:") ||
		    sscanf(line, "%llx <*ABS*+%llx@plt>:", &a, &at) != 2)
			continue;
		snprintf(nm_cmd, sizeof(nm_cmd), "nm '%s' | awk '$1 ~ "
			 "/^0*%llx$/ && $2 == \"i\" { print $3 }'", path,
			 at);
		g = popen(nm_cmd, "r");
		if (g && !fgets(name, sizeof(name), g))
			name[0] = '\0';
		if (g)
			pclose(g);
		name[strcspn(name, "\n")] = '\0';
		CHECK_STR(name, "fx_ifunc");
		snprintf(want, sizeof(want), "%s@plt", name);
		CHECK(symtab_find(t, a, &idx));
		CHECK_STR(symtab_name(t, idx), want);
		n++;
	}
	if (f)
		pclose(f);
	CHECK(n == 1);
	symtab_free(t);
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
	test_ifunc();
	return test_result();
}
