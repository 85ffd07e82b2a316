/*
 * pipe.c - the `pipe` command: parses the command line and hands the
 * work to core (run.h, conf.h, loader.h).  The only place that exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "conf.h"
#include "err.h"
#include "hostopts.h"
#include "jsonw.h"
#include "loader.h"
#include "meta.h"
#include "params.h"
#include "run.h"
#include "train.h"

#define PIPE_VERSION "0.1.0"
#define MAX_SINKS 32

static const char usage_text[] =
	"usage: pipe -s SOURCE[:ARGS] [-c CODEC[:ARGS]] -k SINK[:ARGS]"
	" [-k SINK...] [-q] [-v] [-- COMMAND ARGS...]\n"
	"       pipe plugins            list the plugins of plugins.conf\n"
	"       pipe help NAME|PATH.so  parameters of plugin NAME\n"
	"       pipe check-plugin PATH.so[:ARGS]\n"
	"                               load a plugin, run it on a synthetic recording,\n"
	"                               report what it did and any contract breach\n"
	"       pipe info [--json] [--scan] FILE\n"
	"                               summary of a pipe file (--scan: decode every block)\n"
	"       pipe train -s file:A.dat [-c zstd[:ARGS]] -o DICT [--size N] [--force]\n"
	"                               train a shared dictionary for -c zstd:dict_file=DICT\n"
	"       pipe verify [--threads N] FILE\n"
	"                               check every block, print the digest\n"
	"\n"
	"  pipe -s perf -c zstd:9 -k file:out.dat -- ./my-program\n"
	"  pipe -s perf -k file:out.dat            (whole system, until Ctrl-C)\n"
	"  pipe -s file:out.dat -k report\n"
	"  pipe -s file:out.dat -k json:out.json\n";

/*
 * Make sure fds 0-2 are open, as gnulib's stdopen (coreutils) does: a
 * closed one gets /dev/null in the opposite mode, so that pipe's own
 * messages fail instead of landing in the next file it opens (the
 * recording).  False when that is impossible.
 */
static bool std_fds_open(void)
{
	int fd, got;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* the lowest free fd: this one, as the lower ones are open */
		got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
		if (got != fd) {
			if (got >= 0)
				close(got);
			return false;
		}
	}
	return true;
}

/*
 * What was printed on stdout must have got there (a full disk, a closed
 * pipe): otherwise one message and exit 1, as coreutils' close_stdout.
 */
static int stdout_done(int code)
{
	int e = fflush(stdout) != 0 ? errno : 0;

	if (!e && !ferror(stdout))
		return code;
	fprintf(stderr, "pipe: cannot write to stdout: %s\n",
		e ? strerror(e) : "write error");
	return 1;
}

/* A value from a file on the terminal: control bytes as \xHH. */
static void print_clean(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static void print_err(const struct pipe_err *err)
{
	pipe_err_print(err);
}

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pipe: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nhint: see 'pipe --help'\n");
	exit(2);
}

static void conf_note(const char *line)
{
	fprintf(stderr, "pipe: %s\n", line);
}

static void conf_note_quiet(const char *line)
{
	(void)line;
}

/* -q anywhere before "--" silences notes, those of plugins.conf too */
static bool wants_quiet(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-q"))
			return true;
	return false;
}

/* plugins.conf beside the binary (in-tree build), or the installed one:
 * its path into path[PATH_MAX + 32], or false when neither is there */
static bool builtin_conf(char *path)
{
	static const char *const rel[] = { "plugins.conf",
					   "../lib/pipe/plugins.conf" };
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t i;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	slash[1] = '\0';
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, PATH_MAX + 32, "%s%s", exe, rel[i]);
		if (access(path, R_OK) == 0)
			return true;
	}
	return false;
}

static struct conf *load_conf(bool quiet)
{
	struct pipe_err err = { { 0 }, { 0 } };
	struct conf *conf;
	char builtin[PATH_MAX + 32];
	int ret = conf_load(&conf, builtin_conf(builtin) ? builtin : NULL,
			    quiet ? conf_note_quiet : conf_note, &err);

	if (ret < 0) {
		print_err(&err);
		exit(1);
	}
	return conf;
}

/* The default arguments of a plugins.conf line parse against the
 * plugin's table and the host's options for it. */
static int conf_args_check(const struct conf_entry *e, const struct loaded *lp,
			   struct pipe_err *err)
{
	const struct pipe_param *tables[1 + HOSTOPTS_MAX] = { lp->plugin->params };
	struct args *a;
	char what[160];
	uint32_t nr;
	int ret;

	if (!e->args)
		return 0;
	nr = 1 + hostopts_tables(lp->plugin->kind, lp->plugin->flags,
				 tables + 1, NULL);
	snprintf(what, sizeof(what), "%s '%s'", loader_kind_name(e->kind),
		 e->name);
	ret = params_parse(&a, what, tables, nr, e->args, NULL, err);
	if (ret == 0)
		args_free(a);
	return ret;
}

static int cmd_plugins(const struct conf *conf)
{
	uint32_t i;

	for (i = 0; i < conf->nr; i++) {
		const struct conf_entry *e = &conf->entries[i];
		struct pipe_err err = { { 0 }, { 0 } };
		struct loaded *lp;

		if (loader_open(&lp, e->path, e->kind, &err) < 0) {
			printf("%-6s %-8s BROKEN: %s\n", loader_kind_name(e->kind),
			       e->name, err.msg);
			continue;
		}
		if (conf_args_check(e, lp, &err) < 0) {
			printf("%-6s %-8s BROKEN: %s (default arguments)\n",
			       loader_kind_name(e->kind), e->name, err.msg);
			loader_close(lp);
			continue;
		}
		printf("%-6s %-8s %s%s\n", loader_kind_name(e->kind), e->name,
		       lp->plugin->summary ? lp->plugin->summary : "",
		       (lp->plugin->flags & PIPE_PLUGIN_BYTES) ? " (bytes)" : "");
		loader_close(lp);
	}
	return 0;
}

/* The help of one loaded plugin: its table, then the host's options;
 * `path` (may be NULL) when it was named by its file. */
static void help_plugin(const struct loaded *lp, const char *name,
			const char *path)
{
	const struct pipe_plugin *p = lp->plugin;
	const struct pipe_param *host[HOSTOPTS_MAX];
	const char *title[HOSTOPTS_MAX];
	uint32_t nr, i;

	printf("%s %s%s%s%s: %s\n", loader_kind_name(p->kind), name,
	       path ? " (" : "", path ? path : "", path ? ")" : "",
	       p->summary ? p->summary : "");
	if (p->params && p->params[0].name)
		params_help(stdout, p->params);
	nr = hostopts_tables(p->kind, p->flags, host, title);
	for (i = 0; i < nr; i++) {
		printf("  %s:\n", title[i]);
		params_help(stdout, host[i]);
	}
	printf("\n");
}

static int cmd_help(const struct conf *conf, const char *name)
{
	static const uint32_t kinds[] = { PIPE_KIND_SOURCE, PIPE_KIND_CODEC,
					  PIPE_KIND_SINK };
	struct pipe_err err = { { 0 }, { 0 } };
	struct loaded *lp;
	int found = 0, bad = 0;
	size_t k;

	if (strchr(name, '/')) {
		if (loader_open(&lp, name, 0, &err) < 0) {
			print_err(&err);
			return 1;
		}
		help_plugin(lp, lp->plugin->name, name);
		loader_close(lp);
		return 0;
	}
	for (k = 0; k < 3; k++) {
		const struct conf_entry *e = conf_find(conf, kinds[k], name);

		if (!e)
			continue;
		found++;
		if (loader_open(&lp, e->path, kinds[k], &err) < 0) {
			print_err(&err);
			bad++;
			continue;
		}
		help_plugin(lp, name, NULL);
		loader_close(lp);
	}
	if (!found) {
		fprintf(stderr, "pipe: no plugin named '%s'\n", name);
		fprintf(stderr, "hint: 'pipe plugins' lists them; a plugin "
			"file is named by its path, as ./x.so\n");
		return 1;
	}
	return bad ? 1 : 0;
}

/* How `pipe info --json` writes a value. */
enum kv_kind {
	KV_TEXT,   /* a JSON string */
	KV_NUMBER, /* unquoted */
};

struct kv {
	const char *key;
	char val[512];
	enum kv_kind kind;
};

static int cmd_info(const struct conf *conf, const char *path, bool json,
		    bool scan)
{
	struct pipe_err err = { { 0 }, { 0 } };
	struct scan_result r;
	const struct pipe_meta *m;
	struct kv kv[64 + 256];
	size_t n = 0, i;
	uint32_t e;
	double secs;
	bool scanned;

	if (run_info(conf, path, scan, &r, &scanned, &err) < 0) {
		print_err(&err);
		return 1;
	}
	if (scanned && !scan)
		fprintf(stderr, "pipe: '%s' has no valid END and index: "
			"every block was read to count\n", path);
	m = meta_view(r.meta);
	if (!m) {
		pipe_err_nomem(&err, "cannot read '%s'", path);
		print_err(&err);
		scan_result_release(&r);
		return 1;
	}
	secs = r.st.t_last > r.st.t_first ?
		(double)(r.st.t_last - r.st.t_first) / 1e9 : 0.0;
#define KV(k, kind_, ...) do { kv[n].key = (k); kv[n].kind = (kind_); \
	snprintf(kv[n].val, sizeof(kv[n].val), __VA_ARGS__); n++; } while (0)
	KV("records", KV_NUMBER, "%llu", (unsigned long long)r.st.records);
	KV("samples", KV_NUMBER, "%llu", (unsigned long long)r.st.samples);
	KV("lost", KV_NUMBER, "%llu", (unsigned long long)r.st.lost);
	KV("throttled", KV_NUMBER, "%llu", (unsigned long long)r.st.throttles);
	KV("dropped_blocks", KV_NUMBER, "%llu",
	   (unsigned long long)r.st.dropped_blocks);
	KV("dropped_lost", KV_NUMBER, "%llu",
	   (unsigned long long)r.st.dropped_lost);
	KV("file", KV_TEXT, "%s", path);
	KV("file_bytes", KV_NUMBER, "%llu", (unsigned long long)r.file_size);
	KV("raw_bytes", KV_NUMBER, "%llu", (unsigned long long)r.st.raw_bytes);
	KV("blocks", KV_NUMBER, "%llu", (unsigned long long)r.st.blocks);
	KV("duration_s", KV_NUMBER, "%.6f", secs);
	KV("streams", KV_NUMBER, "%u", m->nr_streams);
	KV("recovered", KV_TEXT, "%s", r.st.recovered ? "yes" : "no");
	KV("damaged_blocks", KV_NUMBER, "%llu",
	   (unsigned long long)r.st.blocks_damaged);
	KV("damaged_records", KV_NUMBER, "%llu",
	   (unsigned long long)r.st.records_damaged);
	KV("torn_bytes", KV_NUMBER, "%llu",
	   (unsigned long long)r.st.torn_bytes);
	KV("counted_from", KV_TEXT, "%s", scanned ? "blocks" : "end");
	kv[n].key = "events";
	kv[n].kind = KV_TEXT;
	kv[n].val[0] = '\0';
	for (e = 0; e < m->nr_events; e++) {
		size_t l = strlen(kv[n].val);

		snprintf(kv[n].val + l, sizeof(kv[n].val) - l, "%s%s",
			 e ? "," : "", pipe_meta_event(m, e)->name);
	}
	n++;
	for (e = 0; e < m->nr_props && n < sizeof(kv) / sizeof(kv[0]); e++)
		KV(m->prop_keys[e], KV_TEXT, "%s", m->prop_values[e]);
#undef KV
	if (json)
		putchar('{');
	for (i = 0; i < n; i++) {
		if (!json) {
			print_clean(kv[i].key);
			fputs(": ", stdout);
			print_clean(kv[i].val);
			putchar('\n');
			continue;
		}
		if (i)
			putchar(',');
		jsonw_fputs(stdout, kv[i].key);
		putchar(':');
		if (kv[i].kind == KV_NUMBER)
			fputs(kv[i].val, stdout);
		else
			jsonw_fputs(stdout, kv[i].val);
	}
	if (json)
		printf("}\n");
	scan_result_release(&r);
	return 0;
}

static int cmd_verify(const struct conf *conf, const char *path,
		      uint32_t threads)
{
	struct pipe_err err = { { 0 }, { 0 } };
	struct scan_result r;
	bool bad;

	if (run_scan(conf, path, threads, &r, &err) < 0) {
		print_err(&err);
		return 1;
	}
	bad = r.st.blocks_damaged || r.st.torn_bytes || r.st.recovered ||
	      r.st.trailing_bytes || r.out_of_order;
	printf("records: %llu\nsamples: %llu\nlost: %llu\nblocks: %llu\n"
	       "damaged_blocks: %llu\ntorn_bytes: %llu\nout_of_order: %llu\n"
	       "digest: %s\nstatus: %s\n",
	       (unsigned long long)r.st.records,
	       (unsigned long long)r.st.samples,
	       (unsigned long long)r.st.lost,
	       (unsigned long long)r.st.blocks,
	       (unsigned long long)r.st.blocks_damaged,
	       (unsigned long long)r.st.torn_bytes,
	       (unsigned long long)r.out_of_order, r.digest,
	       bad ? "damaged" : "ok");
	scan_result_release(&r);
	return bad ? 1 : 0;
}

static const char *need_arg(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc)
		usage_error("option '%s' needs a value", argv[*i]);
	return argv[++*i];
}

static int cmd_train(int argc, char **argv)
{
	struct train_opts o = { 0 };
	struct pipe_err err = { { 0 }, { 0 } };
	struct conf *conf;
	int i, ret;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-s")) {
			if (o.source)
				usage_error("%s", "pipe train takes one -s");
			o.source = need_arg(argc, argv, &i);
		} else if (!strcmp(argv[i], "-c")) {
			o.codec = need_arg(argc, argv, &i);
		} else if (!strcmp(argv[i], "-o")) {
			o.output = need_arg(argc, argv, &i);
		} else if (!strcmp(argv[i], "--size")) {
			int64_t v;

			if (params_parse_size(need_arg(argc, argv, &i), &v) < 0 ||
			    v < 256 || v > (1 << 20))
				usage_error("bad value '%s' for --size: expected 256 to 1M",
					    argv[i]);
			o.dict_size = (uint32_t)v;
		} else if (!strcmp(argv[i], "--force")) {
			o.force = true;
		} else {
			usage_error("unknown option '%s' for 'pipe train'", argv[i]);
		}
	}
	if (!o.source || !o.output)
		usage_error("%s", "usage: pipe train -s file:A.dat [-c zstd[:ARGS]] -o DICT");
	conf = load_conf(wants_quiet(argc, argv));
	o.conf = conf;
	ret = train_run(&o, &err);
	if (ret < 0)
		print_err(&err);
	conf_free(conf);
	return ret < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *sinks[MAX_SINKS];
	struct run_opts o = { .sinks = sinks };
	struct pipe_err err = { { 0 }, { 0 } };
	struct conf *conf;
	int i, code;

	if (!std_fds_open())
		return 1;
	/* a closed pipe is a write error (EPIPE) handled like any other:
	 * the command is ended and the recording cut, never left behind */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_text, stdout);
		return stdout_done(0);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("pipe %s (plugin ABI %d.%d)\n", PIPE_VERSION,
		       PIPE_ABI_MAJOR, PIPE_ABI_MINOR);
		return stdout_done(0);
	}
	if (!strcmp(argv[1], "plugins")) {
		conf = load_conf(wants_quiet(argc, argv));
		code = cmd_plugins(conf);
		conf_free(conf);
		return stdout_done(code);
	}
	if (!strcmp(argv[1], "help")) {
		if (argc != 3)
			usage_error("%s", "usage: pipe help NAME");
		conf = load_conf(wants_quiet(argc, argv));
		code = cmd_help(conf, argv[2]);
		conf_free(conf);
		return stdout_done(code);
	}
	if (!strcmp(argv[1], "info")) {
		bool json = false, scan = false;
		int a;

		for (a = 2; a < argc - 1; a++) {
			if (!strcmp(argv[a], "--json"))
				json = true;
			else if (!strcmp(argv[a], "--scan"))
				scan = true;
			else
				break;
		}
		if (argc < 3 || a != argc - 1)
			usage_error("%s", "usage: pipe info [--json] [--scan] FILE");
		conf = load_conf(wants_quiet(argc, argv));
		code = cmd_info(conf, argv[argc - 1], json, scan);
		conf_free(conf);
		return stdout_done(code);
	}
	if (!strcmp(argv[1], "verify")) {
		unsigned long threads = 0;
		char *end = NULL;

		if (argc == 5 && !strcmp(argv[2], "--threads")) {
			threads = strtoul(argv[3], &end, 10);
			if (*end || !threads || threads > 256)
				usage_error("bad value '%s' for --threads: expected 1 to 256",
					    argv[3]);
		} else if (argc != 3) {
			usage_error("%s", "usage: pipe verify [--threads N] FILE");
		}
		conf = load_conf(wants_quiet(argc, argv));
		code = cmd_verify(conf, argv[argc - 1], (uint32_t)threads);
		conf_free(conf);
		return stdout_done(code);
	}
	if (!strcmp(argv[1], "train"))
		return cmd_train(argc, argv);
	if (!strcmp(argv[1], "check-plugin")) {
		if (argc != 3)
			usage_error("%s", "usage: pipe check-plugin PATH.so[:ARGS]");
		conf = load_conf(true);
		code = check_plugin(conf, argv[2]);
		conf_free(conf);
		return stdout_done(code);
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			if (i + 1 >= argc)
				usage_error("%s", "'--' needs a command after it");
			o.command = &argv[i + 1];
			break;
		} else if (!strcmp(a, "-s")) {
			if (o.source)
				usage_error("%s", "only one source (-s) per run");
			o.source = need_arg(argc, argv, &i);
		} else if (!strcmp(a, "-c")) {
			if (o.codec)
				usage_error("%s", "only one codec (-c) per run");
			o.codec = need_arg(argc, argv, &i);
		} else if (!strcmp(a, "-k")) {
			if (o.nr_sinks >= MAX_SINKS)
				usage_error("%s", "too many sinks (-k)");
			sinks[o.nr_sinks++] = need_arg(argc, argv, &i);
		} else if (!strcmp(a, "-q")) {
			o.quiet = true;
		} else if (!strcmp(a, "-v")) {
			o.verbose = true;
		} else {
			usage_error("unknown option '%s'", a);
		}
	}
	if (!o.source)
		usage_error("%s", "no source: add -s SOURCE, such as -s perf");
	if (!o.nr_sinks)
		usage_error("%s", "no sink: add -k SINK, such as -k report");
	conf = load_conf(wants_quiet(argc, argv));
	o.conf = conf;
	code = run_pipeline(&o, &err);
	if (code != 0 && err.msg[0])
		print_err(&err);
	conf_free(conf);
	return code == 0 ? stdout_done(code) : code;
}
