/*
 * harness.h - the unit-test harness: CHECK prints "FAILED file:line what"
 * and counts; main returns test_result() (0 ok, 1 failed, 77 skipped).
 * test_tmpdir makes the scratch directory a test removes at its end.
 */
#ifndef PIPE_TEST_HARNESS_H
#define PIPE_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_checks;

#define CHECK(cond)                                                      \
	do {                                                             \
		test_checks++;                                           \
		if (!(cond)) {                                           \
			test_failures++;                                 \
			printf("FAILED %s:%d %s\n", __FILE__, __LINE__,  \
			       #cond);                                   \
		}                                                        \
	} while (0)

#define CHECK_STR(a, b)                                                  \
	do {                                                             \
		const char *check_a_ = (a), *check_b_ = (b);             \
		test_checks++;                                           \
		if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_)) { \
			test_failures++;                                 \
			printf("FAILED %s:%d %s == %s ('%s' vs '%s')\n", \
			       __FILE__, __LINE__, #a, #b,               \
			       check_a_ ? check_a_ : "(null)",           \
			       check_b_ ? check_b_ : "(null)");          \
		}                                                        \
	} while (0)

static inline int test_result(void)
{
	if (test_checks == 0) {
		printf("FAILED no checks ran\n");
		return 1;
	}
	printf("%d checks, %d failed\n", test_checks, test_failures);
	return test_failures ? 1 : 0;
}

/*
 * A new directory `name`.XXXXXX under $TMPDIR (or /tmp), its path into
 * buf: 0, or -1 after a line saying it could not be made.
 */
static inline int test_tmpdir(char *buf, size_t cap, const char *name)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(buf, cap, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	if (!mkdtemp(buf)) {
		printf("cannot create a temporary directory in '%s'\n",
		       tmp && *tmp ? tmp : "/tmp");
		return -1;
	}
	return 0;
}

/* Remove dir and all below it (a note when that fails). */
static inline void test_tmpdir_remove(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("note: cannot remove %s\n", dir);
}

#endif
