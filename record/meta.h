/*
 * meta.h - the metadata of a recording: events (perf_event_attr, name,
 * kernel ids), CPU streams and text properties (hostname, release, ...).
 *
 * Sources fill it through the host table; the container stores it in the
 * META block (meta_encode/meta_decode); sinks read the pipe_meta view.
 */
#ifndef PIPE_META_H
#define PIPE_META_H

#include <stddef.h>
#include <stdint.h>

#include "pipe_plugin.h"

struct pipe_err;
struct meta;

/* Largest attr we keep (bigger attrs are truncated to this). */
#define META_ATTR_MAX 256
#define META_MAX_EVENTS 256
#define META_MAX_STREAMS 4096
#define META_MAX_PROPS 256

struct meta *meta_new(void);
void meta_free(struct meta *m); /* NULL is a no-op */

/* Add an event; returns its index (>= 0) or negative errno.  Copies all. */
int meta_add_event(struct meta *m, const struct perf_event_attr *attr,
		   const char *name, const uint64_t *ids, uint32_t nr_ids,
		   struct pipe_err *err);
int meta_set_streams(struct meta *m, uint32_t nr, const int32_t *cpus,
		     struct pipe_err *err);
/* Set (or replace) a property; copies key and value. */
int meta_set_prop(struct meta *m, const char *key, const char *value,
		  struct pipe_err *err);
/* Borrowed value, or NULL. */
const char *meta_prop(const struct meta *m, const char *key);
/* The read-only view; valid until the next change to m.  NULL only when
 * memory is short for the events added since the last view. */
const struct pipe_meta *meta_view(const struct meta *m);
uint32_t meta_nr_events(const struct meta *m);
/* The event's attr, padded with zeros to META_ATTR_MAX bytes. */
const struct perf_event_attr *meta_attr(const struct meta *m, uint32_t event);
/* Event index of a kernel sample id, PIPE_EVENT_NONE if unknown. */
uint32_t meta_event_of_id(const struct meta *m, uint64_t id);

/* Serialize into a malloc'd buffer the caller owns (*out, *len). */
int meta_encode(const struct meta *m, uint8_t **out, size_t *len,
		struct pipe_err *err);
/* Parse untrusted bytes; *out is owned by the caller.  `what` names the
 * file for messages. */
int meta_decode(struct meta **out, const uint8_t *buf, size_t len,
		const char *what, struct pipe_err *err);

#endif
