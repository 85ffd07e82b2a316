/*
 * conf.h - plugins.conf: one line per plugin, `KIND NAME PATH [ARGS]`,
 * '#' comments, paths relative to the file.  Read in the order of
 * docs/plugins.md; a later file adds plugins and may replace one by name.
 */
#ifndef PIPE_CONF_H
#define PIPE_CONF_H

#include <stdint.h>

struct pipe_err;

struct conf_entry {
	uint32_t kind;      /* enum pipe_kind */
	char *name;         /* "zstd" */
	char *path;         /* resolved path of the .so */
	char *args;         /* default args, or NULL */
	char *origin;       /* "FILE:LINE" for messages */
	uint32_t file;      /* index in conf.files of the defining file */
};

struct conf {
	struct conf_entry *entries;
	uint32_t nr;
	size_t cap;         /* room in entries */
	char **files;       /* the files read, in order */
	uint32_t nr_files;
	size_t cap_files;   /* room in files */
};

/*
 * Load the conf files: $PIPE_PLUGINS_CONF if set, else `builtin` (the
 * plugins.conf beside the build or installation; may be NULL); then
 * $XDG_CONFIG_HOME/pipe/plugins.conf (default ~/.config/...) if present.
 * A replaced plugin gets a note through `note` (may be NULL), one whole
 * line "note: FILE:LINE replaces plugin 'NAME' from FILE:LINE".  A missing
 * $PIPE_PLUGINS_CONF or `builtin` is an error; a missing user file is not.
 * Same kind and name twice in one file is an error.  *out is owned by the
 * caller (conf_free).
 *
 * Trust: the variables are read with secure_getenv (ignored when pipe
 * runs set-id or with file capabilities), a relative HOME or
 * XDG_CONFIG_HOME is ignored, and each file must be owned by the user or
 * root (root alone when set-id or with capabilities; writable by no one
 * else when privileged, see trust.h): a user file that is not gets a
 * "warning: ...: ignored" line through `note`, any other is an error.
 */
int conf_load(struct conf **out, const char *builtin,
	      void (*note)(const char *line), struct pipe_err *err);
/* Add one file's lines; a missing, untrusted (as above) or non-regular
 * file is an error.  Errors name "PATH:LINE" with PATH as given. */
int conf_load_file(struct conf *c, const char *path,
		   void (*note)(const char *line), struct pipe_err *err);
struct conf *conf_new(void);
void conf_free(struct conf *c);
/* Borrowed entry or NULL. */
const struct conf_entry *conf_find(const struct conf *c, uint32_t kind,
				   const char *name);
/* "none, zlib, lzma, zstd" of one kind into buf, in file order
 * (a replaced plugin keeps its place); truncated to cap. */
void conf_names(const struct conf *c, uint32_t kind, char *buf, size_t cap);

#endif
