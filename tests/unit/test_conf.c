/*
 * test_conf.c - plugins.conf: fields, comments, relative paths, the exact
 * FILE:LINE errors, and conf_load's order ($PIPE_PLUGINS_CONF or the
 * built-in file, then the user's file replacing entries with a note).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "err.h"
#include "harness.h"
#include "pipe_plugin.h"
#include "rnd.h"

static char dir[64];
static struct pipe_err err;
static char notes[1024];

static void note_keep(const char *line)
{
	size_t n = strlen(notes);

	snprintf(notes + n, sizeof(notes) - n, "%s\n", line);
}

/* Write `text` to dir/name; returns the path (static buffer rotation). */
static const char *put(const char *name, const char *text)
{
	static char paths[4][256];
	static int next;
	char *p = paths[next++ % 4];
	FILE *f;

	snprintf(p, 256, "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f) {
		printf("FAILED cannot write %s\n", p);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	return p;
}

/* Load dir/name into a fresh conf; the message on error, "" on success. */
static const char *load_err_keep(const char *name)
{
	struct conf *c = conf_new();
	char path[256];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);

	pipe_err_clear(&err);
	ret = conf_load_file(c, path, NULL, &err);
	conf_free(c);
	if (ret == 0)
		return "";
	/* messages name the file as given: strip our dir for the checks */
	if (!strncmp(err.msg, dir, strlen(dir)))
		return err.msg + strlen(dir) + 1;
	return err.msg;
}

static const char *load_err(const char *name, const char *text)
{
	put(name, text);
	return load_err_keep(name);
}

static void test_fields(void)
{
	const struct conf_entry *e;
	struct conf *c = conf_new();
	char buf[256];
	const char *path;

	path = put("a.conf",
		   "# a comment\n"
		   "\n"
		   "   \t\n"
		   "source\tperf\tplugins/src_perf.so\n"
		   "codec zstd /abs/codec_zstd.so   level=9,dict=on   \n"
		   "  codec  none  n.so  # trailing comment\n"
		   "sink file s.so force=on # why\r\n"
		   "codec zlib-2_x z.so\n"
		   "source file f.so\n");
	CHECK(conf_load_file(c, path, NULL, &err) == 0);
	CHECK(c->nr == 6);
	CHECK(c->nr_files == 1);
	CHECK_STR(c->files[0], path);
	e = conf_find(c, PIPE_KIND_SOURCE, "perf");
	CHECK(e != NULL);
	if (e) {
		snprintf(buf, sizeof(buf), "%s/plugins/src_perf.so", dir);
		CHECK_STR(e->path, buf);
		CHECK(e->args == NULL);
		snprintf(buf, sizeof(buf), "%s:4", path);
		CHECK_STR(e->origin, buf);
	}
	e = conf_find(c, PIPE_KIND_CODEC, "zstd");
	CHECK(e && !strcmp(e->path, "/abs/codec_zstd.so"));
	CHECK(e && e->args && !strcmp(e->args, "level=9,dict=on"));
	e = conf_find(c, PIPE_KIND_CODEC, "none");
	CHECK(e && e->args == NULL);
	e = conf_find(c, PIPE_KIND_SINK, "file");
	CHECK(e && e->args && !strcmp(e->args, "force=on"));
	CHECK(conf_find(c, PIPE_KIND_SINK, "perf") == NULL);
	CHECK(conf_find(c, PIPE_KIND_SOURCE, "file") != NULL);
	conf_names(c, PIPE_KIND_CODEC, buf, sizeof(buf));
	CHECK_STR(buf, "zstd, none, zlib-2_x");
	conf_names(c, PIPE_KIND_SOURCE, buf, sizeof(buf));
	CHECK_STR(buf, "perf, file");
	conf_names(c, PIPE_KIND_CODEC, buf, 8);
	CHECK_STR(buf, "zstd, n");
	conf_free(c);

	c = conf_new();
	CHECK(conf_load_file(c, put("empty.conf", ""), NULL, &err) == 0);
	CHECK(c->nr == 0);
	conf_names(c, PIPE_KIND_SINK, buf, sizeof(buf));
	CHECK_STR(buf, "");
	conf_free(c);
}

static void test_relative_to_cwd(void)
{
	struct conf *c = conf_new();
	char old[4096];

	put("here.conf", "sink x x.so\n");
	CHECK(getcwd(old, sizeof(old)) != NULL);
	CHECK(chdir(dir) == 0);
	CHECK(conf_load_file(c, "here.conf", NULL, &err) == 0);
	CHECK(c->nr == 1 && !strcmp(c->entries[0].path, "./x.so"));
	CHECK(c->nr == 1 && !strcmp(c->entries[0].origin, "here.conf:1"));
	CHECK(chdir(old) == 0);
	conf_free(c);
}

static void test_errors(void)
{
	char *big;

	CHECK_STR(load_err("plugins.conf", "source a a.so\n\n# c\n"
			   "sink b b.so\n\n\nsinc c c.so\n"),
		  "plugins.conf:7: unknown kind 'sinc'");
	CHECK_STR(err.hint, "kinds are source, codec, sink");
	CHECK_STR(load_err("plugins.conf", "\n\ncodec zstd\n"),
		  "plugins.conf:3: expected KIND NAME PATH [ARGS]");
	CHECK_STR(load_err("plugins.conf", "sink\n"),
		  "plugins.conf:1: expected KIND NAME PATH [ARGS]");
	CHECK_STR(load_err("plugins.conf", "sink Report r.so\n"),
		  "plugins.conf:1: bad plugin name 'Report'");
	CHECK_STR(err.hint, "a name is 1 to 64 of a-z, 0-9, '_' and '-'");
	CHECK_STR(load_err("plugins.conf", "sink r/x r.so\n"),
		  "plugins.conf:1: bad plugin name 'r/x'");
	CHECK_STR(load_err("p.conf", "sink r r.so\ncodec r r.so\n"
			   "sink r r2.so\n"),
		  "p.conf:3: sink 'r' is already defined on line 1");
	{
		static const char nul[] = "sink r r.so\nsink \0x\n";
		FILE *f = fopen(put("nul.conf", ""), "w");

		if (f) {
			fwrite(nul, 1, sizeof(nul) - 1, f);
			fclose(f);
		}
		CHECK_STR(load_err_keep("nul.conf"),
			  "nul.conf:2: NUL byte in line");
	}
	big = malloc(5000);
	if (big) {
		memset(big, 'a', 4999);
		big[4999] = '\0';
		memcpy(big, "sink a a.so ", 12);
		CHECK_STR(load_err("big.conf", big),
			  "big.conf:1: line too long (more than 4096 bytes)");
		free(big);
	}
	pipe_err_clear(&err);
	{
		struct conf *c = conf_new();

		CHECK(conf_load_file(c, "/nonexistent/plugins.conf", NULL,
				     &err) == -ENOENT);
		CHECK_STR(err.msg, "cannot read '/nonexistent/plugins.conf': "
			  "No such file or directory");
		conf_free(c);
	}
}

static void test_load_order(void)
{
	char xdg[256], user[256], buf[256];
	const struct conf_entry *e;
	const char *builtin, *env;
	struct conf *c = NULL;

	builtin = put("builtin.conf", "codec zstd z.so level=3\n"
		      "sink json j.so\nsink file f.so\n");
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	snprintf(user, sizeof(user), "%s/xdg/pipe", dir);
	CHECK(mkdir(xdg, 0700) == 0);
	CHECK(mkdir(user, 0700) == 0);
	put("xdg/pipe/plugins.conf", "sink json /opt/my_json.so pretty=on\n"
	    "sink mine mine.so\n");
	unsetenv("PIPE_PLUGINS_CONF");
	setenv("XDG_CONFIG_HOME", xdg, 1);

	/* the built-in file, then the user's, which replaces 'json' */
	notes[0] = '\0';
	CHECK(conf_load(&c, builtin, note_keep, &err) == 0);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(c->nr_files == 2);
	e = conf_find(c, PIPE_KIND_SINK, "json");
	CHECK(e && !strcmp(e->path, "/opt/my_json.so"));
	CHECK(e && e->args && !strcmp(e->args, "pretty=on"));
	conf_names(c, PIPE_KIND_SINK, buf, sizeof(buf));
	CHECK_STR(buf, "json, file, mine");
	snprintf(buf, sizeof(buf), "note: %s/xdg/pipe/plugins.conf:1 replaces "
		 "plugin 'json' from %s:2\n", dir, builtin);
	CHECK_STR(notes, buf);
	conf_free(c);

	/* $PIPE_PLUGINS_CONF replaces the built-in file */
	env = put("env.conf", "sink only o.so\n");
	setenv("PIPE_PLUGINS_CONF", env, 1);
	CHECK(conf_load(&c, builtin, NULL, &err) == 0);
	CHECK(c && c->nr_files == 2);
	CHECK(c && conf_find(c, PIPE_KIND_CODEC, "zstd") == NULL);
	CHECK(c && conf_find(c, PIPE_KIND_SINK, "only") != NULL);
	CHECK(c && conf_find(c, PIPE_KIND_SINK, "mine") != NULL);
	conf_free(c);

	/* ... and must exist when set */
	setenv("PIPE_PLUGINS_CONF", "/nonexistent/env.conf", 1);
	CHECK(conf_load(&c, builtin, NULL, &err) == -ENOENT);
	CHECK(c == NULL);
	CHECK_STR(err.msg, "cannot read '/nonexistent/env.conf': No such "
		  "file or directory");
	CHECK_STR(err.hint, "$PIPE_PLUGINS_CONF names it; unset it to use "
		  "the built-in plugins.conf");
	unsetenv("PIPE_PLUGINS_CONF");

	/* a missing built-in file means pipe is not built */
	CHECK(conf_load(&c, "/nonexistent/build/plugins.conf", NULL, &err) ==
	      -ENOENT);
	CHECK_STR(err.msg, "cannot read '/nonexistent/build/plugins.conf': "
		  "No such file or directory");
	CHECK_STR(err.hint, "run make to build pipe and its plugins.conf");

	/* no user file: fine; HOME/.config is used without XDG */
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", dir, 1);
	CHECK(conf_load(&c, builtin, NULL, &err) == 0);
	CHECK(c && c->nr_files == 1);
	conf_free(c);
	snprintf(buf, sizeof(buf), "%s/.config", dir);
	CHECK(mkdir(buf, 0700) == 0);
	snprintf(buf, sizeof(buf), "%s/.config/pipe", dir);
	CHECK(mkdir(buf, 0700) == 0);
	put(".config/pipe/plugins.conf", "sinc bad b.so\n");
	CHECK(conf_load(&c, builtin, NULL, &err) == -EINVAL);
	snprintf(buf, sizeof(buf), "%s/.config/pipe/plugins.conf:1: unknown "
		 "kind 'sinc'", dir);
	CHECK_STR(err.msg, buf);
	/* a relative XDG_CONFIG_HOME is ignored, as the XDG spec says */
	setenv("XDG_CONFIG_HOME", "rel", 1);
	CHECK(conf_load(&c, builtin, NULL, &err) == -EINVAL);
	/* the built-in file may be NULL */
	unsetenv("HOME");
	unsetenv("XDG_CONFIG_HOME");
	CHECK(conf_load(&c, NULL, NULL, &err) == 0);
	CHECK(c && c->nr == 0 && c->nr_files == 0);
	conf_free(c);
}

/*
 * Trust: a relative HOME is ignored; a FIFO is refused at once (never
 * waited on); files owned by another user are an error, or skipped with
 * a warning for the user's own file, as perf does with ~/.perfconfig;
 * run as root (privileged), group- or world-writable files are refused.
 */
static void test_trust(void)
{
	char home[256], buf[512], want[800], cwd[4096];
	const char *builtin, *user;
	struct conf *c = NULL;
	int ret;

	builtin = put("trust.conf", "sink null n.so\n");
	unsetenv("PIPE_PLUGINS_CONF");
	unsetenv("XDG_CONFIG_HOME");
	/* HOME=rel with rel/.config/pipe/plugins.conf under the cwd */
	snprintf(home, sizeof(home), "%s/rel/.config/pipe", dir);
	snprintf(buf, sizeof(buf), "mkdir -p '%s'", home);
	CHECK(system(buf) == 0);
	put("rel/.config/pipe/plugins.conf", "sinc bad b.so\n");
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(dir) == 0);
	setenv("HOME", "rel", 1);
	CHECK(conf_load(&c, builtin, NULL, &err) == 0);
	CHECK(c && c->nr_files == 1);
	conf_free(c);
	CHECK(chdir(cwd) == 0);
	unsetenv("HOME");

	/* a FIFO: refused without blocking */
	snprintf(buf, sizeof(buf), "%s/fifo.conf", dir);
	CHECK(mkfifo(buf, 0600) == 0);
	setenv("PIPE_PLUGINS_CONF", buf, 1);
	CHECK(conf_load(&c, builtin, NULL, &err) == -EINVAL);
	snprintf(want, sizeof(want), "cannot read '%s': not a regular file",
		 buf);
	CHECK_STR(err.msg, want);
	unsetenv("PIPE_PLUGINS_CONF");

	if (geteuid() != 0) {
		printf("note: not root: ownership checks not run\n");
		return;
	}
	/* owned by another user: an error when named, skipped when found */
	user = put("other.conf", "sink null n.so\n");
	CHECK(chown(user, 65534, 65534) == 0);
	setenv("PIPE_PLUGINS_CONF", user, 1);
	CHECK(conf_load(&c, builtin, NULL, &err) == -EPERM);
	snprintf(buf, sizeof(buf), "plugins.conf '%s' is owned by uid 65534, "
		 "not by you or root", user);
	CHECK_STR(err.msg, buf);
	CHECK_STR(err.hint, "chown it, or use a copy of your own");
	unsetenv("PIPE_PLUGINS_CONF");
	snprintf(home, sizeof(home), "%s/xdg2/pipe", dir);
	snprintf(buf, sizeof(buf), "mkdir -p '%s'", home);
	CHECK(system(buf) == 0);
	user = put("xdg2/pipe/plugins.conf", "sink mine m.so\n");
	CHECK(chown(user, 65534, 65534) == 0);
	snprintf(home, sizeof(home), "%s/xdg2", dir);
	setenv("XDG_CONFIG_HOME", home, 1);
	notes[0] = '\0';
	CHECK(conf_load(&c, builtin, note_keep, &err) == 0);
	CHECK(c && c->nr_files == 1);
	CHECK(c && !conf_find(c, PIPE_KIND_SINK, "mine"));
	conf_free(c);
	snprintf(buf, sizeof(buf), "warning: plugins.conf '%s' is owned by "
		 "uid 65534, not by you or root: ignored\n", user);
	CHECK_STR(notes, buf);
	/* root-owned but writable by others: refused when privileged */
	CHECK(chown(user, 0, 0) == 0);
	CHECK(chmod(user, 0664) == 0);
	ret = conf_load(&c, builtin, note_keep, &err);
	CHECK(ret == 0);
	CHECK(c && !conf_find(c, PIPE_KIND_SINK, "mine"));
	conf_free(c);
	CHECK(chmod(user, 0644) == 0);
	CHECK(conf_load(&c, builtin, NULL, &err) == 0);
	CHECK(c && conf_find(c, PIPE_KIND_SINK, "mine"));
	conf_free(c);
	CHECK(chmod(builtin, 0646) == 0);
	CHECK(conf_load(&c, builtin, NULL, &err) == -EPERM);
	snprintf(buf, sizeof(buf), "plugins.conf '%s' is writable by "
		 "everyone", builtin);
	CHECK_STR(err.msg, buf);
	CHECK(chmod(builtin, 0644) == 0);
	unsetenv("XDG_CONFIG_HOME");
}

/* Random files of the words and characters that matter: each load
 * succeeds or names FILE:LINE (or the file) in its message. */
static void test_random(void)
{
	static const char *const words[] = {
		"source", "codec", "sink", "sinc", "x", "Y", "a-b_9", "p.so",
		"/abs.so", "#", "k=v", " ", "\t", "\n", "\n", "\r\n", "##",
	};
	const size_t nr_words = sizeof(words) / sizeof(words[0]);
	uint32_t seed = 777;
	int round, bad = 0, ok = 0;
	char text[512], want[300];

	snprintf(want, sizeof(want), "%s/rand.conf", dir);
	for (round = 0; round < 500; round++) {
		struct conf *c = conf_new();
		size_t len = 0, n, i;
		int ret;

		n = (rnd_lcg32(&seed) >> 16) % 40;
		text[0] = '\0';
		for (i = 0; i < n; i++) {
			rnd_lcg32(&seed);
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						"%s%s", words[(seed >> 16) %
							       nr_words],
						(seed >> 8) % 3 ? " " : "");
		}
		put("rand.conf", text);
		err.msg[0] = '\0';
		ret = conf_load_file(c, want, NULL, &err);
		if (ret == 0)
			ok++;
		else if (ret != -EINVAL || strncmp(err.msg, want, strlen(want)))
			bad++;
		conf_free(c);
	}
	CHECK(bad == 0);
	CHECK(ok > 0);
}

int main(void)
{
	if (test_tmpdir(dir, sizeof(dir), "pipe-conf") < 0)
		return 77;
	test_fields();
	test_relative_to_cwd();
	test_errors();
	test_load_order();
	test_trust();
	test_random();
	test_tmpdir_remove(dir);
	return test_result();
}
