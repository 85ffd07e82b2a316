/*
 * host.h - plugin instances and the host table they receive: one
 * struct pipe_ctx per opened plugin, carrying its parsed arguments, its
 * error slot and the run it belongs to, and one inst_* wrapper per plugin
 * call, which records the call in flight (for the host's stage checks)
 * and turns a failure into a message naming the plugin and the call.
 */
#ifndef PIPE_HOST_H
#define PIPE_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "crash.h"
#include "err.h"
#include "pipe_plugin.h"

struct args;
struct conf;
struct output;
struct loaded;
struct meta;
struct symbolizer;

/* What every instance of one run shares. */
struct host_run {
	struct meta *meta;           /* borrowed: the reader's, or the one
					the run's owner built (the bus's
					pipeline.live_meta) */
	struct symbolizer *sym;      /* NULL until a sink asks */
	char *const *command;        /* -- CMD, or NULL */
	const char *input;           /* the file the source reads, or NULL */
	int command_status;          /* wait status, -1 while none */
	volatile bool interrupted;   /* SIGINT/SIGTERM seen */
	bool quiet;                  /* -q */
	bool verbose;                /* -v */
	bool tty;                    /* stderr is a terminal */
	uint32_t breaches;           /* host calls refused (check-plugin);
					atomic: sinks run on several threads */
};

#define HOST_OUTPUTS_MAX 8 /* open_output calls per instance */

/* The frames of the sample view being delivered, and the view. */
struct host_view {
	struct pipe_sample_view v;   /* what the plugin sees */
	struct pipe_sample s;        /* v.sample */
	uint64_t *frames;            /* owned, cap entries */
	uint16_t *misc;              /* owned, cap entries */
	uint8_t *ret;                /* owned: 1 for return addresses */
	uint32_t cap;
	bool live;                   /* inside a sample() call */
	struct pipe_symbol sym;      /* frame_symbol's answer */
};

struct pipe_ctx {
	struct host_run *run;        /* borrowed */
	struct args *args;           /* owned */
	char name[256];              /* as the user gave it: "report", "./x.so" */
	char what[160];              /* "sink 'report'" for messages */
	const char *path;            /* the plugin's file, borrowed */
	uint32_t kind;               /* enum pipe_kind */
	uint32_t flags;              /* enum pipe_plugin_flags */
	const char *call;            /* plugin call in flight: "consume" */
	struct crash_site site;      /* the call in flight before this one */
	bool breach;                 /* a host call was refused in it */
	bool warned;                 /* a shrugged-off refusal was printed */
	bool demangle;               /* symbolizer option demangle= */
	bool symbols;                /* a sink with PIPE_PLUGIN_SYMBOLS */
	struct pipe_err err;         /* the plugin's error, if any */
	struct output *outs[HOST_OUTPUTS_MAX]; /* open_output's, owned */
	const char *out_param[HOST_OUTPUTS_MAX]; /* its OUTPUT param, or NULL */
	uint32_t nr_outs;
	struct host_view view;       /* per-sample sinks */
};

struct inst {
	struct loaded *lp;           /* owned unless `borrowed_lp` */
	const struct pipe_plugin *p; /* borrowed from lp */
	void *state;                 /* the plugin's, freed by its close */
	void *alloc;                 /* state_size bytes we allocated */
	struct pipe_ctx ctx;
	bool borrowed_lp;            /* lp belongs to a cache */
	bool started;                /* a sink whose start_sink succeeded */
	bool failed;                 /* a call failed: only close from now */
	char last_msg[512];          /* the error last handed out */
};

extern const struct pipe_host host_table;

/*
 * Open an output of ctx's sink under the output-file rule (output.h);
 * param names a PIPE_PARAM_OUTPUT parameter, NULL for open_output.
 * Returns 0 or a negative errno with ctx->err set.
 */
int host_output_add(struct pipe_ctx *ctx, const char *path,
		    const char *param);

/*
 * Resolve `spec` ("NAME[:ARGS]" or "./path.so[:ARGS]") of `kind` through
 * conf, load it, parse its args against its table and the host's options
 * for its kind (hostopts.h), and open it.  Messages name it by the name
 * the user gave.  On success *out is owned by the caller (inst_free).
 */
int inst_open(struct inst **out, const struct conf *conf, uint32_t kind,
	      const char *spec, struct host_run *run, struct pipe_err *err);
/* Open an already loaded plugin (borrowed) with argument text. */
int inst_open_loaded(struct inst **out, struct loaded *lp, const char *args,
		     struct host_run *run, struct pipe_err *err);
void inst_free(struct inst *in); /* closes the plugin; NULL is a no-op */
/* After a plugin call failed with ret: copy its message (or a generic
 * one naming it) into err and return ret. */
int inst_fail(struct inst *in, int ret, struct pipe_err *err);
/*
 * Bracket a plugin call the container code makes itself (codec and
 * read_at calls): a crash in it is reported naming the plugin and the
 * call.  ctx may be NULL (no plugin instance: nothing is named).
 */
struct crash_site host_enter(struct pipe_ctx *ctx, const char *call);
void host_leave(struct crash_site prev);

/* The text the user gave for the plugin's positional parameter (the file
 * of "file:x.dat"), else NULL; borrowed from the instance. */
const char *inst_subject(const struct inst *in);

/*
 * The plugin's calls.  Each returns the plugin's result (0, or PIPE_EOF
 * from read, or the count from fds) or a negative errno with err set to
 * its message, or to one naming the plugin and the call; a positive
 * result where the contract has none is such a failure too.  A host call
 * the plugin made at the wrong stage is printed as a warning when the
 * plugin carried on regardless.  Optional functions the plugin lacks
 * succeed (byte_size: -ESPIPE, fds: 0).
 */
int inst_start(struct inst *in, struct pipe_err *err);
int inst_read(struct inst *in, struct pipe_batch *out, struct pipe_err *err);
int inst_fds(struct inst *in, int *fds, uint32_t cap, struct pipe_err *err);
int inst_stop(struct inst *in, int signo, struct pipe_err *err);
int inst_byte_size(struct inst *in, uint64_t *size);
int inst_start_sink(struct inst *in, struct pipe_err *err);
int inst_consume(struct inst *in, const struct pipe_batch *b,
		 struct pipe_err *err);
int inst_write(struct inst *in, const void *buf, size_t len,
	       struct pipe_err *err);
int inst_flush(struct inst *in, struct pipe_err *err);
int inst_finish(struct inst *in, struct pipe_err *err);
/* Per-record sinks: sample() for each sample, sideband() for each
 * sideband record of the batch (records of other types are skipped). */
int inst_records(struct inst *in, const struct pipe_batch *b,
		 struct pipe_err *err);
/* How a run ended, for what the outputs its sinks opened become. */
enum run_end {
	RUN_END_OK,      /* every stage succeeded: they take their place */
	RUN_END_FAILED,  /* it failed or was cut: they are abandoned */
};

/* After finish: the outputs the sink opened take their place or are
 * abandoned, as `how` says (output.h).  Returns 0 or a negative errno
 * with err set. */
int inst_outputs_end(struct inst *in, enum run_end how, struct pipe_err *err);
int inst_train(struct inst *in, const void *samples, const size_t *sizes,
	       uint32_t nr, void *dict, size_t cap, size_t *dict_len,
	       struct pipe_err *err);

#endif
