/*
 * report.h - the report sink's state, shared by its files: sink_report.c
 * (the plugin: parameters, open, start, close), report_tables.c (the
 * growable arrays, hash indexes and interned strings and symbols),
 * report_collect.c (samples resolved and added to rows and chains),
 * report_graph.c (children and call graphs from the chains at the end),
 * report_print.c (text, CSV and folded output).
 */
#ifndef PIPE_REPORT_H
#define PIPE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "addrcache.h"
#include "itab.h"
#include "pipe_plugin.h"

#define NONE UINT32_MAX
#define MAX_KEYS 6
#define MAX_CHAIN 512        /* frames kept per callchain */
#define MAX_ITEMS (UINT32_C(1) << 30) /* rows, symbols, chains, nodes */
#define RCACHE_BITS 14       /* (pid, ip, mode) -> symbol: 16K slots */
#define CCACHE_BITS 12       /* tid -> comm: 4K slots */
#define SCACHE_BITS 12       /* (pid, ip) -> srcline text: 4K slots */
#define GRAPH_MIN_PERCENT 0.5

enum key { KEY_COMM, KEY_PID, KEY_DSO, KEY_SYM, KEY_CPU, KEY_SRCLINE,
	   NR_KEYS };
enum graph { GRAPH_CALLER, GRAPH_CALLEE, GRAPH_NONE };
enum format { FORMAT_TEXT, FORMAT_CSV, FORMAT_FOLDED };

/* A growable array of fixed-size items. */
struct vec {
	void *items;   /* owned */
	uint32_t nr;   /* items used */
	uint32_t size; /* bytes per item */
	size_t cap;    /* items allocated (grow_array's room) */
};

struct str {
	const char *s; /* borrowed from the host (lives for the run) */
	uint64_t hash;
};

/* A resolved symbol identity. */
struct sym {
	const char *name;  /* NULL: unresolved */
	uint32_t dso;      /* index into strs, NONE: no map */
	uint32_t kernel;   /* 1: [k] */
	uint64_t offset;   /* unresolved: address in the dso (or ip) */
	uint64_t start;    /* named: its start (two functions may share a name) */
	uint64_t hash;
	uint32_t inlined;  /* 1: a function inlined there (inline=on) */
	uint32_t pad;
};

struct row {
	uint32_t event;
	uint32_t k[NR_KEYS]; /* comm, pid, dso, sym, cpu, srcline ids; NONE:
				unused */
	uint64_t hash;
	uint64_t samples;
	uint64_t period;     /* self */
	uint64_t children;   /* self + as a caller (children=on) */
	uint32_t stamp;      /* the last chain visit that met this row */
	uint32_t occ_off;    /* its graph's starts in report.occ */
	uint32_t occ_nr;
	uint32_t occ_fill;
};

struct chain {
	uint32_t event;
	uint32_t comm, pid, cpu; /* NONE where not kept */
	uint32_t src;            /* the leaf's srcline string, or NONE */
	uint32_t off, len;       /* frames (sym ids, leaf first) in pool */
	uint64_t hash;
	uint64_t samples;
	uint64_t period;
};

struct node {
	uint32_t sym;
	uint32_t child;   /* first child, NONE */
	uint32_t sibling; /* NONE */
	uint32_t kids;    /* distinct children, shown or not */
	uint64_t period;
};

/* Where a row's call graph starts: a chain and a frame of it. */
struct occ {
	uint32_t chain; /* index in chains */
	uint32_t pos;   /* frame index, leaf 0 */
};

/* One chain followed while a call graph is built. */
struct walk {
	uint32_t off;    /* its frames in pool */
	uint32_t len;
	uint32_t pos;    /* the frame this step reaches */
	int32_t dir;     /* +1 towards the root, -1 towards the leaf */
	uint32_t sym;    /* frame pos's symbol, for grouping */
	uint32_t pad;
	uint64_t period;
};

struct event_total {
	uint64_t samples;
	uint64_t period;
};

struct report {
	const struct pipe_host *host;
	struct pipe_ctx *ctx;
	/* the sample being added, set up once at open: the
	 * host overwrites what it knows, a smaller host leaves the tail
	 * zero, and no sample pays a memset of the whole struct */
	struct pipe_sample sample;
	/* parameters */
	enum key keys[MAX_KEYS];
	uint32_t nr_keys;
	bool key_on[NR_KEYS];
	double percent_limit;
	int64_t top;
	bool children;
	bool inline_on;    /* inline frames in graphs and folded stacks */
	enum graph graph;
	enum format format;
	const char *output;
	const char *const *f_comm, *const *f_dso, *const *f_sym;
	uint32_t nr_f_comm, nr_f_dso, nr_f_sym;
	uint32_t *f_pid;
	uint32_t nr_f_pid;
	bool need_chains;
	/* state */
	FILE *out;         /* the host's output: never closed here */
	struct vec strs;   /* struct str: comms and dsos */
	struct itab strs_h;
	struct vec syms;   /* struct sym */
	struct itab syms_h;
	struct vec rows;   /* struct row */
	struct itab rows_h;
	uint32_t last_row; /* 1 + the row row_get found last, 0: none */
	struct vec chains; /* struct chain */
	struct itab chains_h;
	struct vec pool;   /* uint32_t frames of chains */
	struct vec nodes;  /* struct node: the graph being printed */
	struct occ *occ;   /* graph starts, grouped by row */
	struct walk *walks; /* scratch of build_graph */
	size_t walks_cap;
	uint32_t stamp;    /* chain visits, for rows met once per chain */
	/* answers until process state changes: a symbol id per (pid, ip,
	 * mode: bit 0 kernel, bit 1 looked up one byte back), a comm's
	 * string id per tid (as the pid), a srcline's string id per (pid,
	 * ip) (srcline key only) */
	struct addrcache rcache, ccache, scache;
	struct vec owned;  /* char *: srcline texts, freed at close */
	bool short_of_room; /* an interned string or symbol found no memory:
			     * add_sample fails */
	struct event_total *totals;
	uint32_t nr_events;
	uint64_t lost, throttled, unthrottled, bad_samples;
	uint32_t frames[MAX_CHAIN];
};

/* sink_report.c */
/* the sort= names of the keys, also the CSV header's */
extern const char *const key_names[NR_KEYS];

/* report_tables.c */
/* Item i of v (borrowed: moves when v grows); inline, as every probe
 * and row goes through it. */
static inline void *vec_at(const struct vec *v, uint32_t i)
{
	return (char *)v->items + (size_t)i * v->size;
}

/* Append a zeroed item; returns its index or NONE when out of memory. */
uint32_t vec_push(struct vec *v);
/*
 * The same, the item indexed in t under hash (t reads items through
 * hash_of only when it grows, so the caller fills the item after): the
 * one way strings, symbols, rows and chains are added.  NONE when out of
 * memory, noted in r->short_of_room.
 */
uint32_t vec_push_indexed(struct report *r, struct vec *v, struct itab *t,
			  uint64_t hash, itab_hash_fn hash_of);

/* The indexes' first room and largest: room for every item. */
#define TAB_FIRST 256
#define TAB_MAX (2 * MAX_ITEMS)

/* The stored hash of row `item` of the vec `items` (the rows index's
 * itab_hash_fn). */
uint64_t row_hash_of(const void *items, uint32_t item);

/* The stored hash of chain `item` of the vec `items` (the chains
 * index's itab_hash_fn). */
uint64_t chain_hash_of(const void *items, uint32_t item);

/*
 * The id of string s (borrowed: it must live for the run), interned on
 * first sight; NONE for NULL or when out of memory.
 */
uint32_t intern_str(struct report *r, const char *s);

/* The text of string id idx (borrowed), NULL for NONE. */
const char *str_of(const struct report *r, uint32_t idx);

/* The id of a resolved symbol, interned on first sight; NONE: no memory. */
uint32_t intern_sym(struct report *r, const struct pipe_symbol *ps,
		    bool kernel, bool inlined);

/* report_collect.c */
/* Is symbol id sym a function inlined there (inline=on)? */
bool is_inlined(const struct report *r, uint32_t sym);

/* The row of key k, added with zero counts if new; NULL: no memory. */
struct row *row_get(struct report *r, const struct row *k);

/* The row key of frame `sym` for a sample's comm, pid and cpu. */
void row_key(const struct report *r, struct row *k, uint32_t event,
	     uint32_t comm, uint32_t pid, uint32_t cpu, uint32_t sym,
	     uint32_t src);

/* The plugin's consume: every sample of the batch added. */
int report_consume(void *state, const struct pipe_batch *b);

/* report_graph.c */
/* v as a percentage of total (0 when total is 0). */
double pct(uint64_t v, uint64_t total);

/* Each row's children total from the distinct chains (children=on). */
int compute_children(struct report *r);

/*
 * Where each row's call graph starts: (chain, frame) pairs grouped by
 * row in r->occ, row->occ_off and row->occ_nr.  Without children, a
 * leaf's row gets the whole chain; with children, every distinct row of
 * the chain gets the part seen from its frame nearest the leaf.  Linear
 * in the frames of the distinct chains.
 */
int find_occurrences(struct report *r);

/*
 * The call graph of one row into r->nodes (emptied first); *root is its
 * root node.  Callee order walks from a frame towards the root of the
 * chain, caller order towards the leaf; without children, a leaf row's
 * graph is the whole chain.
 */
int build_graph(struct report *r, const struct row *row,
		uint64_t total, uint32_t *root);

/* report_print.c */
/* The call graph of a row, printed under it (text format). */
int print_graph(struct report *r, const struct row *row,
		uint64_t total);

/* The plugin's finish: children and graphs computed, the output printed. */
int report_finish(void *state);

#endif
