/*
 * params.h - parsing `NAME[:ITEM[,ITEM]...]` against a plugin's parameter
 * tables: positional first item, key=value, '+' lists,
 * backslash escapes, on|off, K/M/G sizes, s/ms durations.
 */
#ifndef PIPE_PARAMS_H
#define PIPE_PARAMS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pipe_plugin.h"

struct pipe_err;
struct args;

/*
 * Split "NAME:REST" at the first unescaped ':'.  *name is malloc'd (caller
 * frees); *rest points into spec (NULL when there is no ':').
 */
int params_split(const char *spec, char **name, const char **rest,
		 struct pipe_err *err);

/*
 * Parse `text` (the part after ':', may be NULL or "") against the tables
 * (each ends with name == NULL; the first table's POSITIONAL param takes a
 * bare first item).  `defaults` (plugins.conf default args, may be NULL)
 * are applied first, then `text`.  `what` names the plugin in messages,
 * e.g. "sink 'report'".  On success *out is owned by the caller.
 * Errors: unknown key (lists valid keys), bad value (says what is valid),
 * missing required.
 */
int params_parse(struct args **out, const char *what,
		 const struct pipe_param *const *tables, uint32_t nr_tables,
		 const char *defaults, const char *text, struct pipe_err *err);
void args_free(struct args *a);

/* Getters; unknown names are our bug (assert).  Unset without default:
 * str NULL, int 0, list 0 items. */
const char *args_str(const struct args *a, const char *name);
int64_t args_int(const struct args *a, const char *name);
bool args_is_set(const struct args *a, const char *name);
uint32_t args_list(const struct args *a, const char *name,
		   const char *const **items);

/* Print `pipe help NAME` text for one parameter table. */
void params_help(FILE *f, const struct pipe_param *table);

/* Value parsers shared with the rest of core; 0 or -EINVAL. */
int params_parse_size(const char *s, int64_t *out);
int params_parse_duration(const char *s, int64_t *ns);

/* The text of the first table's POSITIONAL parameter when it was given
 * (borrowed from a), else NULL: how the host names a plugin's subject
 * (the file of `file:x.dat`) without knowing its parameter's name. */
const char *args_positional(const struct args *a);

/* True when `name` is a parameter of the tables a was parsed with; lets
 * the host refuse a plugin's unknown name instead of asserting. */
bool args_has(const struct args *a, const char *name);

/*
 * Check a plugin's table (loader): names [a-z0-9_]+ and unique, known
 * types, ENUM choices, min <= max, help present, at most one POSITIONAL,
 * and every default parses.  `what` as for params_parse.  0 or -EINVAL.
 */
int params_check_table(const struct pipe_param *table, const char *what,
		       struct pipe_err *err);

#endif
