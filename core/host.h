/*
 * host.h - plugin instances and the host table they receive: one
 * struct pipe_ctx per opened plugin, carrying its parsed arguments, its
 * error slot and the run it belongs to.
 */
#ifndef PIPE_HOST_H
#define PIPE_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "pipe_plugin.h"

struct args;
struct conf;
struct loaded;
struct meta;
struct symbolizer;

/* What every instance of one run shares. */
struct host_run {
	struct meta *meta;           /* owned by whoever built it */
	struct symbolizer *sym;      /* NULL until a sink asks */
	char *const *command;        /* -- CMD, or NULL */
	int command_status;          /* wait status, -1 while none */
	volatile bool interrupted;   /* SIGINT/SIGTERM seen */
	bool quiet;                  /* -q */
	bool verbose;                /* -v */
	bool tty;                    /* stderr is a terminal */
};

struct pipe_ctx {
	struct host_run *run;        /* borrowed */
	struct args *args;           /* owned */
	char what[160];              /* "sink 'report'" for messages */
	struct pipe_err err;         /* the plugin's error, if any */
	bool symbols;                /* a sink with PIPE_PLUGIN_SYMBOLS */
};

struct inst {
	struct loaded *lp;           /* owned unless `borrowed_lp` */
	const struct pipe_plugin *p; /* borrowed from lp */
	void *state;                 /* the plugin's, freed by its close */
	struct pipe_ctx ctx;
	bool borrowed_lp;            /* lp belongs to a cache */
	char last_msg[512];          /* the error last handed out */
};

extern const struct pipe_host host_table;

/*
 * Resolve `spec` ("NAME[:ARGS]" or "./path.so[:ARGS]") of `kind` through
 * conf, load it, parse its args (plus `extra` params, may be NULL) and
 * open it.  On success *out is owned by the caller (inst_free).
 */
int inst_open(struct inst **out, const struct conf *conf, uint32_t kind,
	      const char *spec, const struct pipe_param *extra,
	      struct host_run *run, struct pipe_err *err);
/* Open an already loaded plugin (borrowed) with argument text. */
int inst_open_loaded(struct inst **out, struct loaded *lp, const char *args,
		     struct host_run *run, struct pipe_err *err);
void inst_free(struct inst *in); /* closes the plugin; NULL is a no-op */
/* Whether the plugin declares parameter `name` (its own table only). */
bool inst_has_param(const struct inst *in, const char *name);
/* After a plugin call failed with ret: copy its message (or a generic
 * one naming it) into err and return ret. */
int inst_fail(struct inst *in, int ret, struct pipe_err *err);

#endif
