/*
 * check.c - `pipe check-plugin` (see check.h).  Each run happens in a
 * child process, in a temporary directory, with its standard output
 * counted: a plugin that crashes, hangs or writes files cannot harm the
 * report, which the parent prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "conf.h"
#include "err.h"
#include "loader.h"
#include "params.h"
#include "run.h"

#define CHECK_SAMPLES "synth:4000,pids=3,cpus=2"
#define CHECK_TIMEOUT_S 60

struct check {
	const struct conf *conf;
	const struct loaded *lp;
	const char *spec;     /* what the user gave: PATH[:ARGS] */
	const char *path;     /* PATH alone */
	bool has_args;        /* ARGS given */
	int out;              /* the report: our standard output */
	uint32_t breaches;    /* refused host calls over every run */
};

static void say(const struct check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(const struct check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdprintf(c->out, fmt, ap);
	va_end(ap);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One pipeline; says how it went.  0 when it succeeded. */
static int check_pipeline(struct check *c, const char *label,
			  struct run_opts *o)
{
	struct pipe_err err = { { 0 }, { 0 } };
	uint32_t breaches = 0;
	double t0 = now_s();
	int code;

	o->conf = c->conf;
	o->quiet = true;
	o->breaches = &breaches;
	code = run_pipeline(o, &err);
	c->breaches += breaches;
	if (code != 0) {
		if (err.msg[0])
			pipe_err_print(&err);
		say(c, "  %s: FAILED (exit %d)\n", label, code);
		return -1;
	}
	say(c, "  %s: ok in %.2f s\n", label, now_s() - t0);
	return 0;
}

static int check_sink(struct check *c)
{
	const char *sinks[1] = { c->spec };
	struct run_opts o = { .source = CHECK_SAMPLES, .sinks = sinks,
			      .nr_sinks = 1 };

	return check_pipeline(c, "ran as the only sink of -s " CHECK_SAMPLES,
			      &o);
}

/* Records and digest of a pipe file read through spec. */
static int scan(struct check *c, const char *spec, struct scan_result *r)
{
	struct pipe_err err = { { 0 }, { 0 } };
	int ret = run_scan_spec(c->conf, spec, 0, r, &err);

	if (ret < 0)
		pipe_err_print(&err);
	return ret;
}

static int check_codec(struct check *c)
{
	const char *sinks[1] = { "file:codec.dat" }, *ref[1] = { "file:ref.dat" };
	struct run_opts o = { .source = CHECK_SAMPLES, .codec = c->spec,
			      .sinks = sinks, .nr_sinks = 1 };
	struct run_opts r = { .source = CHECK_SAMPLES, .codec = "none",
			      .sinks = ref, .nr_sinks = 1 };
	struct scan_result a = { 0 }, b = { 0 };
	struct pipe_err err = { { 0 }, { 0 } };
	FILE *f;
	int ret;

	if (check_pipeline(c, "compressed -s " CHECK_SAMPLES " into a pipe "
			   "file", &o) < 0 ||
	    check_pipeline(c, "the same with -c none, for reference", &r) < 0)
		return -1;
	/* the reader finds codecs by id in plugins.conf: add this one */
	f = fopen("check.conf", "w");
	if (!f)
		return -1;
	fprintf(f, "codec %s %s\n", c->lp->plugin->name, c->path);
	if (fclose(f) == EOF ||
	    conf_load_file((struct conf *)c->conf, "check.conf", NULL,
			   &err) < 0) {
		pipe_err_print(&err);
		return -1;
	}
	ret = scan(c, "file:codec.dat", &a);
	if (ret == 0)
		ret = scan(c, "file:ref.dat", &b);
	if (ret == 0 && (a.st.records != b.st.records ||
			 strcmp(a.digest, b.digest))) {
		say(c, "  decompressed: FAILED: %" PRIu64 " records, digest %s;"
		    " want %" PRIu64 ", %s\n", a.st.records, a.digest,
		    b.st.records, b.digest);
		ret = -1;
	} else if (ret == 0) {
		say(c, "  decompressed: the same %" PRIu64 " records (digest "
		    "%s), %" PRIu64 " blocks\n", a.st.records, a.digest,
		    a.st.blocks);
	}
	scan_result_release(&a);
	scan_result_release(&b);
	return ret;
}

static int check_byte_source(struct check *c)
{
	const char *sinks[1] = { "file:in.dat" };
	struct run_opts o = { .source = CHECK_SAMPLES, .sinks = sinks,
			      .nr_sinks = 1 };
	struct scan_result a = { 0 }, b = { 0 };
	char spec[4200];
	int ret;

	if (check_pipeline(c, "recorded -s " CHECK_SAMPLES " into in.dat",
			   &o) < 0)
		return -1;
	snprintf(spec, sizeof(spec), "%s%s", c->spec,
		 c->has_args ? "" : ":in.dat");
	ret = scan(c, spec, &a);
	if (ret == 0)
		ret = scan(c, "file:in.dat", &b);
	if (ret == 0 && (a.st.records != b.st.records ||
			 strcmp(a.digest, b.digest))) {
		say(c, "  read: FAILED: %" PRIu64 " records, digest %s; the "
		    "file source reads %" PRIu64 ", %s\n", a.st.records,
		    a.digest, b.st.records, b.digest);
		ret = -1;
	} else if (ret == 0) {
		say(c, "  read in.dat: %" PRIu64 " records, the digest of the "
		    "file source (%s)\n", a.st.records, a.digest);
	}
	scan_result_release(&a);
	scan_result_release(&b);
	return ret;
}

static int check_record_source(struct check *c)
{
	static char sleep_cmd[] = "sleep", sleep_arg[] = "0.3";
	static char *const cmd[] = { sleep_cmd, sleep_arg, NULL };
	const char *sinks[1] = { "null:print=off" };
	struct run_opts o = { .source = c->spec, .sinks = sinks,
			      .nr_sinks = 1 };

	if (c->lp->plugin->flags & PIPE_PLUGIN_LIVE)
		o.command = cmd;
	return check_pipeline(c, o.command ? "recorded 'sleep 0.3' into -k "
			      "null" : "read to its end into -k null", &o);
}

/* In the child: run, then say how much went to standard output. */
static int check_child(struct check *c, const char *dir)
{
	const struct pipe_plugin *p = c->lp->plugin;
	struct stat st;
	int fd, ret;

	c->out = dup(STDOUT_FILENO);
	if (c->out < 0 || chdir(dir) < 0)
		return 1;
	fd = open("stdout", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		return 1;
	close(fd);
	if (p->kind == PIPE_KIND_SINK)
		ret = check_sink(c);
	else if (p->kind == PIPE_KIND_CODEC)
		ret = check_codec(c);
	else if (p->flags & PIPE_PLUGIN_BYTES)
		ret = check_byte_source(c);
	else
		ret = check_record_source(c);
	fflush(stdout);
	if (stat("stdout", &st) == 0 && st.st_size)
		say(c, "  standard output: %lld bytes\n",
		    (long long)st.st_size);
	if (c->breaches)
		say(c, "  contract: %u host calls refused or parameters "
		    "undeclared (see the lines above)\n", c->breaches);
	else
		say(c, "  contract: no breach seen\n");
	return ret < 0 || c->breaches ? 1 : 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Wait for the child, at most CHECK_TIMEOUT_S; its exit status. */
static int wait_child(pid_t pid)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int st, i;

	for (i = 0; i < CHECK_TIMEOUT_S * 20; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	printf("  did not finish within %d s: killed\n", CHECK_TIMEOUT_S);
	return -1;
}

static void describe(const struct check *c)
{
	const struct pipe_plugin *p = c->lp->plugin;
	const struct pipe_param *t;

	printf("  %s '%s', version %s, ABI %u.%u, %s\n",
	       loader_kind_name(p->kind), p->name,
	       p->version ? p->version : "(none)", p->abi >> 16,
	       p->abi & 0xffff,
	       p->kind == PIPE_KIND_SINK && (p->flags & PIPE_PLUGIN_BYTES) ?
	       "byte sink" :
	       p->kind == PIPE_KIND_SINK && p->consume ? "batch sink" :
	       p->kind == PIPE_KIND_SINK ? "per-record sink" :
	       p->kind == PIPE_KIND_SOURCE && (p->flags & PIPE_PLUGIN_BYTES) ?
	       "byte source" : p->kind == PIPE_KIND_SOURCE ?
	       ((p->flags & PIPE_PLUGIN_LIVE) ? "live record source" :
		"record source") : "codec");
	printf("  parameters:");
	for (t = p->params; t && t->name; t++)
		printf(" %s", t->name);
	printf("%s\n", p->params && p->params[0].name ? "" : " (none)");
}

int check_plugin(const struct conf *conf, const char *spec)
{
	struct pipe_err err = { { 0 }, { 0 } };
	struct check c = { .conf = conf, .spec = spec };
	struct loaded *lp;
	char dir[] = "/tmp/pipe-check.XXXXXX";
	const char *rest;
	char *path;
	pid_t pid;
	int st;

	if (params_split(spec, &path, &rest, &err) < 0) {
		pipe_err_print(&err);
		return 1;
	}
	c.path = path;
	c.has_args = rest != NULL;
	printf("pipe check-plugin %s\n", spec);
	if (loader_open(&lp, path, 0, &err) < 0) {
		printf("  load: FAILED\n");
		fflush(stdout);
		pipe_err_print(&err);
		free(path);
		return 1;
	}
	c.lp = lp;
	printf("  load: ok (dlopen, descriptor, functions, parameter table)\n");
	describe(&c);
	fflush(stdout);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "pipe: cannot create a directory for the check:"
			" %s\n", strerror(errno));
		st = 1;
		goto out;
	}
	pid = fork();
	if (pid == 0)
		_exit(check_child(&c, dir));
	st = pid < 0 ? -1 : wait_child(pid);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	st = st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	printf("verdict: %s\n", st == 0 ? "ok" : "FAILED");
out:
	loader_close(lp);
	free(path);
	return st;
}
