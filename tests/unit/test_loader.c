/*
 * test_loader.c - the plugin loader against the broken plugins built from
 * tests/plugins/ into $BUILD/tests/plugins/: each refusal's exact message,
 * and the good example sink run through a small fake host.  Also checks
 * that docs/plugins.md carries tests/plugins/good_sink.c verbatim.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "fakehost.h"
#include "harness.h"
#include "loader.h"
#include "params.h"

static char plugdir[512];
static char tmpdir[256];
static const char *build_dir;
static struct pipe_err err;

/* Path of a test plugin (static buffer). */
static const char *plug(const char *name)
{
	static char path[1200];

	snprintf(path, sizeof(path), "%s/%s.so", plugdir, name);
	return path;
}

/* Load and expect failure with exactly "PREFIX'PATH'SUFFIX". */
static void check_refusal(const char *path, uint32_t kind, const char *pre,
			  const char *post, const char *hint)
{
	static struct loaded sentinel; /* loader_open must reset l */
	struct loaded *l = &sentinel;
	char want[4096];
	int ret;

	pipe_err_clear(&err);
	ret = loader_open(&l, path, kind, &err);
	CHECK(ret < 0);
	CHECK(l == NULL);
	snprintf(want, sizeof(want), "%s'%s'%s", pre, path, post);
	CHECK_STR(err.msg, want);
	CHECK_STR(err.hint, hint ? hint : "");
	if (ret == 0)
		loader_close(l);
}

static void test_refusals(void)
{
	char path[2048];
	int fd;

	check_refusal(plug("no_such_plugin"), 0, "cannot load plugin ",
		      ": No such file or directory", NULL);
	snprintf(path, sizeof(path), "%s/text.so", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "hello, world\n", 13) == 13);
	close(fd);
	check_refusal(path, 0, "cannot load plugin ", ": not a shared object",
		      NULL);
	snprintf(path, sizeof(path), "%s/empty.so", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	check_refusal(path, 0, "cannot load plugin ", ": not a shared object",
		      NULL);
	check_refusal(tmpdir, 0, "cannot load plugin ", ": Is a directory",
		      NULL);
	/* an ELF file that is not a shared object: an object file */
	snprintf(path, sizeof(path), "%s/obj/lib/err.o", build_dir);
	check_refusal(path, 0, "cannot load plugin ", ": not a shared object",
		      NULL);

	check_refusal(plug("no_symbol"), 0, "plugin ",
		      " has no 'pipe_plugin' symbol", "define it with "
		      "PIPE_PLUGIN_SINK(...) (or _SOURCE, _CODEC); see "
		      "plugins.md in pipe's documentation (share/doc/pipe)");
	check_refusal(plug("bad_abi_major"), 0, "plugin ",
		      " speaks ABI 1, this pipe speaks ABI 2",
		      "rebuild it against this pipe's pipe_plugin.h");
	check_refusal(plug("bad_abi_minor"), PIPE_KIND_SINK, "plugin ",
		      " needs ABI 2.7, this pipe speaks ABI 2.2",
		      "upgrade pipe, or rebuild the plugin against this "
		      "pipe's pipe_plugin.h");
	check_refusal(plug("bad_kind_missing_ops"), PIPE_KIND_SINK, "plugin ",
		      " is a sink without 'consume' or 'write'", NULL);
	check_refusal(plug("good_sink"), PIPE_KIND_CODEC, "plugin ",
		      " is a sink, not a codec", NULL);
	check_refusal(plug("good_sink"), PIPE_KIND_SOURCE, "plugin ",
		      " is a sink, not a source", NULL);
	check_refusal(plug("undefined_symbol"), 0, "cannot load plugin ",
		      ": undefined symbol: pipe_test_no_such_symbol", NULL);
	/* 2.0's descriptor ends where 2.2's `map` begins */
	snprintf(path, sizeof(path), " has a 16-byte descriptor, ABI 2.0 "
		 "needs at least %zu", offsetof(struct pipe_plugin, map));
	check_refusal(plug("bad_size"), 0, "plugin ", path,
		      "define it with PIPE_PLUGIN_SINK(...) (or _SOURCE, "
		      "_CODEC), which sets the size");
	/* a bad table default names the plugin file */
	pipe_err_clear(&err);
	{
		struct loaded *l;

		CHECK(loader_open(&l, plug("bad_params"), 0, &err) == -EINVAL);
		snprintf(path, sizeof(path), "bad default '30' for 'level' of "
			 "plugin '%s': expected an integer from 1 to 19",
			 plug("bad_params"));
		CHECK_STR(err.msg, path);
	}
}

/* Run `fn(state)` with stdout going to a file; its output into out. */
static int capture(int (*fn)(void *), void *state, char *out, size_t cap)
{
	char path[512];
	int fd, saved, ret;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stdout", tmpdir);
	fflush(stdout);
	saved = dup(1);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (saved < 0 || fd < 0)
		return -errno;
	dup2(fd, 1);
	ret = fn(state);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	n = pread(fd, out, cap - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	return ret;
}

static void test_good_sink(const char *text, const char *want)
{
	const struct perf_event_header recs[3] = {
		{ PERF_RECORD_SAMPLE, 0, 8 },
		{ PERF_RECORD_COMM, 0, 8 },
		{ PERF_RECORD_SAMPLE, 0, 8 },
	};
	struct pipe_record views[3];
	struct pipe_batch batch = { .recs = views, .nr = 3 };
	struct pipe_ctx ctx = { 0 };
	const struct pipe_plugin *p;
	struct loaded *l = NULL;
	void *state = NULL;
	char out[256];
	int i;

	CHECK(loader_open(&l, plug("good_sink"), PIPE_KIND_SINK, &err) == 0);
	if (!l) {
		printf("  %s\n", err.msg);
		return;
	}
	p = l->plugin;
	CHECK_STR(p->name, "count");
	CHECK_STR(l->path, plug("good_sink"));
	CHECK(fakehost_args(&ctx, p, text) == 0);
	for (i = 0; i < 3; i++)
		views[i] = (struct pipe_record){ .hdr = &recs[i] };
	CHECK(p->open(&fakehost, &ctx, &state) == 0);
	CHECK(p->consume(state, &batch) == 0);
	CHECK(p->consume(state, &batch) == 0);
	CHECK(capture(p->finish, state, out, sizeof(out)) == 0);
	CHECK_STR(out, want);
	p->close(state);
	fakehost_release(&ctx);
	loader_close(l);
}

static void test_fail_open(void)
{
	struct pipe_ctx ctx = { 0 };
	struct loaded *l = NULL;
	void *state = NULL;

	CHECK(loader_open(&l, plug("fail_open"), PIPE_KIND_SINK, &err) == 0);
	if (!l)
		return;
	CHECK(l->plugin->open(&fakehost, &ctx, &state) < 0);
	CHECK_STR(ctx.err, "cannot frobnicate 'x': no reason");
	loader_close(l);
}

/* A bare file name is never looked up in the library path. */
static void test_bare_name(void)
{
	struct loaded *l = NULL;
	char old[4096];

	CHECK(getcwd(old, sizeof(old)) != NULL);
	CHECK(chdir(plugdir) == 0);
	CHECK(loader_open(&l, "good_sink.so", 0, &err) == 0);
	CHECK(l && !strcmp(l->path, "good_sink.so"));
	loader_close(l);
	loader_close(NULL);
	CHECK(loader_open(&l, "libc.so.6", 0, &err) == -ENOENT);
	CHECK_STR(err.msg, "cannot load plugin 'libc.so.6': No such file or "
		  "directory");
	CHECK(chdir(old) == 0);
	CHECK_STR(loader_kind_name(PIPE_KIND_SOURCE), "source");
	CHECK_STR(loader_kind_name(PIPE_KIND_CODEC), "codec");
	CHECK_STR(loader_kind_name(PIPE_KIND_SINK), "sink");
}

/* Read a whole file into a malloc'd string, or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)len + 1);
		if (buf) {
			n = fread(buf, 1, (size_t)len, f);
			buf[n] = '\0';
		}
	}
	fclose(f);
	return buf;
}

static void test_docs_in_sync(const char *top)
{
	char path[1024];
	char *doc, *src;

	snprintf(path, sizeof(path), "%s/docs/plugins.md", top);
	doc = slurp(path);
	snprintf(path, sizeof(path), "%s/examples/counter/counter.c", top);
	src = slurp(path);
	CHECK(doc != NULL);
	CHECK(src != NULL);
	if (doc && src && !strstr(doc, src))
		printf("docs/plugins.md does not hold "
		       "examples/counter/counter.c verbatim\n");
	CHECK(doc && src && strstr(doc, src) != NULL);
	free(doc);
	free(src);
}

/*
 * Plugins pipe must not trust: a FIFO is refused at once (never waited
 * on); run as root (privileged), a plugin owned by another user or
 * writable by group or others is refused before dlopen runs its code.
 */
static void test_untrusted(void)
{
	char path[600], cmd[2000];
	struct loaded *l;

	snprintf(path, sizeof(path), "%s/fifo.so", tmpdir);
	CHECK(mkfifo(path, 0600) == 0);
	check_refusal(path, 0, "cannot load plugin ", ": not a regular file",
		      NULL);
	if (geteuid() != 0) {
		printf("note: not root: ownership checks not run\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/theirs.so", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", plug("good_sink"), path);
	CHECK(system(cmd) == 0);
	CHECK(chown(path, 65534, 65534) == 0);
	check_refusal(path, 0, "plugin ", " is owned by uid 65534, not by "
		      "you or root", "chown it, or use a copy of your own");
	CHECK(chown(path, 0, 0) == 0);
	CHECK(chmod(path, 0775) == 0);
	check_refusal(path, 0, "plugin ", " is writable by its group",
		      "a privileged pipe uses only files no one else can "
		      "change: chmod go-w it");
	CHECK(chmod(path, 0755) == 0);
	pipe_err_clear(&err);
	CHECK(loader_open(&l, path, 0, &err) == 0);
	loader_close(l);
}

int main(void)
{
	const char *top = getenv("TOP") ? getenv("TOP") : ".";
	struct stat st;

	build_dir = getenv("BUILD") ? getenv("BUILD") : "build";
	snprintf(plugdir, sizeof(plugdir), "%s/tests/plugins", build_dir);
	if (stat(plug("good_sink"), &st) < 0) {
		printf("FAILED %s: %s\n", plug("good_sink"), strerror(errno));
		printf("hint: run make tests\n");
		return 1;
	}
	if (test_tmpdir(tmpdir, sizeof(tmpdir), "pipe-loader") < 0)
		return 77;
	test_refusals();
	test_good_sink(NULL, "6 records\n");
	test_good_sink("samples,samples=on", "4 samples\n");
	test_fail_open();
	test_bare_name();
	test_untrusted();
	test_docs_in_sync(top);
	test_tmpdir_remove(tmpdir);
	return test_result();
}
