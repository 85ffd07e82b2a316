/*
 * fixtures.h - the fixture binaries of tests/fixtures/Makefile for unit
 * tests that read ELF files: built (or brought up to date) under
 * $BUILD/tests/fixtures, $TOP and $BUILD set by tests/run.sh.
 */
#ifndef PIPE_TEST_FIXTURES_H
#define PIPE_TEST_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>

/*
 * Build the fixtures; their directory into fx (cap bytes).  Returns 0,
 * 77 (skip: not run by tests/run.sh) or 1 (the build failed), as main
 * returns them.  One test at a time brings them up to date (the lock the
 * e2e cases take too): tests run in parallel, and a binary relinked
 * while another test reads it is half a file.
 */
static inline int fixtures_build(char *fx, size_t cap)
{
	const char *top = getenv("TOP"), *build = getenv("BUILD");
	char cmd[8192];

	if (!top || !build) {
		printf("TOP and BUILD must be set (tests/run.sh sets them)\n");
		return 77;
	}
	snprintf(fx, cap, "%s/tests/fixtures", build);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%.2000s' && flock '%.2000s/.lock' make -s -C "
		 "'%.2000s/tests/fixtures' OUT='%.2000s' >/dev/null", fx, fx,
		 top, fx);
	if (system(cmd) != 0) {
		printf("FAILED building fixtures: %s\n", cmd);
		return 1;
	}
	return 0;
}

#endif
