/*
 * meta.c - the recording's metadata (see meta.h) and its serialization,
 * a list of 8-aligned tagged items (docs/format.md, "META payload").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "grow.h"
#include "meta.h"

struct meta_ev {
	uint8_t attr[META_ATTR_MAX]; /* zero-padded attr bytes */
	uint32_t attr_size;          /* bytes as given */
	char *name;                  /* owned */
	uint64_t *ids;               /* owned */
	uint32_t nr_ids;
};

struct id_slot {
	uint64_t id;    /* kernel sample id */
	uint32_t event; /* event index + 1; 0 marks an empty slot */
};

struct meta {
	struct meta_ev *evs;          /* owned array */
	uint32_t nr_evs;
	size_t cap_evs;               /* room in evs */
	int32_t *cpus;                /* owned, nr_streams entries */
	uint32_t nr_streams;
	char **keys;                  /* owned */
	char **values;                /* owned */
	uint32_t nr_props;
	size_t cap_keys, cap_values;  /* room in keys, values */
	struct id_slot *ids;          /* open-addressing id -> event map */
	uint32_t id_cap;              /* power of two, or 0 */
	/* the view, rebuilt by meta_view */
	struct pipe_meta view;
	struct pipe_meta_event *vevs;
	size_t cap_vevs;              /* room in vevs */
};

enum meta_tag {
	META_TAG_EVENT = 1,
	META_TAG_STREAMS = 2,
	META_TAG_PROP = 3,
};

struct meta *meta_new(void)
{
	return calloc(1, sizeof(struct meta));
}

void meta_free(struct meta *m)
{
	uint32_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_evs; i++) {
		free(m->evs[i].name);
		free(m->evs[i].ids);
	}
	for (i = 0; i < m->nr_props; i++) {
		free(m->keys[i]);
		free(m->values[i]);
	}
	free(m->evs);
	free(m->cpus);
	free(m->keys);
	free(m->values);
	free(m->ids);
	free(m->vevs);
	free(m);
}

static uint32_t id_hash(uint64_t id, uint32_t cap)
{
	id *= UINT64_C(0x9e3779b97f4a7c15);
	return (uint32_t)(id >> 32) & (cap - 1);
}

static void id_insert(struct id_slot *tab, uint32_t cap, uint64_t id,
		      uint32_t event)
{
	uint32_t i = id_hash(id, cap);

	while (tab[i].event && tab[i].id != id)
		i = (i + 1) & (cap - 1);
	tab[i].id = id;
	tab[i].event = event + 1;
}

static int id_rebuild(struct meta *m)
{
	uint32_t total = 0, cap = 16, e, k;
	struct id_slot *tab;

	for (e = 0; e < m->nr_evs; e++)
		total += m->evs[e].nr_ids;
	while (cap < total * 2)
		cap <<= 1;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (e = 0; e < m->nr_evs; e++)
		for (k = 0; k < m->evs[e].nr_ids; k++)
			id_insert(tab, cap, m->evs[e].ids[k], e);
	free(m->ids);
	m->ids = tab;
	m->id_cap = cap;
	return 0;
}

uint32_t meta_event_of_id(const struct meta *m, uint64_t id)
{
	uint32_t i;

	if (!m->id_cap)
		return PIPE_EVENT_NONE;
	i = id_hash(id, m->id_cap);
	while (m->ids[i].event) {
		if (m->ids[i].id == id)
			return m->ids[i].event - 1;
		i = (i + 1) & (m->id_cap - 1);
	}
	return PIPE_EVENT_NONE;
}

int meta_add_event(struct meta *m, const struct perf_event_attr *attr,
		   const char *name, const uint64_t *ids, uint32_t nr_ids,
		   struct pipe_err *err)
{
	struct meta_ev *ev;
	uint32_t size = attr->size ? attr->size : PERF_ATTR_SIZE_VER0;

	if (m->nr_evs >= META_MAX_EVENTS)
		return pipe_err_set(err, -E2BIG, "too many events (at most %d)",
				    META_MAX_EVENTS);
	if (nr_ids > (1u << 20))
		return pipe_err_set(err, -E2BIG, "too many ids for event '%s'",
				    name);
	if (grow_array(&m->evs, &m->cap_evs, (size_t)m->nr_evs + 1,
		       sizeof(*m->evs), 4, META_MAX_EVENTS) < 0)
		goto oom;
	ev = &m->evs[m->nr_evs];
	memset(ev, 0, sizeof(*ev));
	if (size > META_ATTR_MAX)
		size = META_ATTR_MAX;
	/* the caller's attr holds attr->size bytes (meta_decode hands us a
	 * META_ATTR_MAX buffer for attrs of newer kernels) */
	memcpy(ev->attr, attr, size);
	ev->attr_size = size;
	ev->name = strdup(name ? name : "");
	ev->ids = malloc((nr_ids ? nr_ids : 1) * sizeof(uint64_t));
	if (!ev->name || !ev->ids) {
		free(ev->name);
		free(ev->ids);
		goto oom;
	}
	if (nr_ids)
		memcpy(ev->ids, ids, nr_ids * sizeof(uint64_t));
	ev->nr_ids = nr_ids;
	m->nr_evs++;
	if (id_rebuild(m) < 0)
		goto oom;
	return (int)(m->nr_evs - 1);
oom:
	return pipe_err_nomem(err, "cannot add event '%s' to the metadata",
			      name ? name : "");
}

int meta_set_streams(struct meta *m, uint32_t nr, const int32_t *cpus,
		     struct pipe_err *err)
{
	int32_t *c;

	if (nr > META_MAX_STREAMS)
		return pipe_err_set(err, -E2BIG, "too many streams (%u, at most %d)",
				    nr, META_MAX_STREAMS);
	c = malloc((nr ? nr : 1) * sizeof(*c));
	if (!c)
		return pipe_err_nomem(err, "cannot add %u streams to the "
				      "metadata", nr);
	if (nr)
		memcpy(c, cpus, nr * sizeof(*c));
	free(m->cpus);
	m->cpus = c;
	m->nr_streams = nr;
	return 0;
}

int meta_set_prop(struct meta *m, const char *key, const char *value,
		  struct pipe_err *err)
{
	char *v;
	uint32_t i;

	v = strdup(value);
	if (!v)
		goto oom;
	for (i = 0; i < m->nr_props; i++) {
		if (!strcmp(m->keys[i], key)) {
			free(m->values[i]);
			m->values[i] = v;
			return 0;
		}
	}
	if (m->nr_props >= META_MAX_PROPS) {
		free(v);
		return pipe_err_set(err, -E2BIG, "too many properties (at most %d)",
				    META_MAX_PROPS);
	}
	if (grow_array(&m->keys, &m->cap_keys, (size_t)m->nr_props + 1,
		       sizeof(*m->keys), 16, META_MAX_PROPS) < 0 ||
	    grow_array(&m->values, &m->cap_values, (size_t)m->nr_props + 1,
		       sizeof(*m->values), 16, META_MAX_PROPS) < 0) {
		free(v);
		goto oom;
	}
	m->keys[m->nr_props] = strdup(key);
	if (!m->keys[m->nr_props]) {
		free(v);
		goto oom;
	}
	m->values[m->nr_props++] = v;
	return 0;
oom:
	return pipe_err_nomem(err, "cannot set metadata property '%s'",
			      key);
}

const char *meta_prop(const struct meta *m, const char *key)
{
	uint32_t i;

	for (i = 0; i < m->nr_props; i++)
		if (!strcmp(m->keys[i], key))
			return m->values[i];
	return NULL;
}

const struct pipe_meta *meta_view(const struct meta *cm)
{
	struct meta *m = (struct meta *)cm; /* the view is a cache */
	struct pipe_meta_event *v;
	uint32_t i;

	if (grow_array(&m->vevs, &m->cap_vevs, m->nr_evs ? m->nr_evs : 1,
		       sizeof(*v), 4, UINT32_MAX) < 0)
		return NULL;
	v = m->vevs;
	for (i = 0; i < m->nr_evs; i++) {
		v[i].attr = (const struct perf_event_attr *)m->evs[i].attr;
		v[i].name = m->evs[i].name;
		v[i].ids = m->evs[i].ids;
		v[i].nr_ids = m->evs[i].nr_ids;
		v[i].reserved = 0;
	}
	m->view.size = sizeof(m->view);
	m->view.nr_events = m->nr_evs;
	m->view.events = v;
	m->view.event_size = sizeof(*v);
	m->view.nr_streams = m->nr_streams;
	m->view.stream_cpu = m->cpus;
	m->view.nr_props = m->nr_props;
	m->view.prop_keys = (const char *const *)m->keys;
	m->view.prop_values = (const char *const *)m->values;
	return &m->view;
}

uint32_t meta_nr_events(const struct meta *m)
{
	return m->nr_evs;
}

const struct perf_event_attr *meta_attr(const struct meta *m, uint32_t event)
{
	if (event >= m->nr_evs)
		return NULL;
	return (const struct perf_event_attr *)m->evs[event].attr;
}

/* ---- serialization ---------------------------------------------------- */

static int put_pad(struct bytebuf *b)
{
	static const uint8_t zero[8];

	return bytebuf_put(b, zero, (8 - (b->len & 7)) & 7);
}

static int put_u32(struct bytebuf *b, uint32_t v)
{
	return bytebuf_put(b, &v, 4);
}

/* item header: u16 tag, u16 reserved, u32 payload length; payload; pad */
static int item_begin(struct bytebuf *b, uint16_t tag, size_t *at)
{
	uint32_t zero = 0;
	uint16_t t[2] = { tag, 0 };

	*at = b->len;
	if (bytebuf_put(b, t, 4) < 0)
		return -ENOMEM;
	return bytebuf_put(b, &zero, 4);
}

static int item_end(struct bytebuf *b, size_t at)
{
	uint32_t len = (uint32_t)(b->len - at - 8);

	memcpy(b->p + at + 4, &len, 4);
	return put_pad(b);
}

static int encode_event(struct bytebuf *b, const struct meta_ev *ev)
{
	uint32_t name_len = (uint32_t)strlen(ev->name);
	size_t at;
	int ret;

	ret = item_begin(b, META_TAG_EVENT, &at);
	ret = ret ? ret : put_u32(b, ev->attr_size);
	ret = ret ? ret : put_u32(b, ev->nr_ids);
	ret = ret ? ret : put_u32(b, name_len);
	ret = ret ? ret : put_u32(b, 0);
	ret = ret ? ret : bytebuf_put(b, ev->attr, ev->attr_size);
	ret = ret ? ret : put_pad(b);
	ret = ret ? ret : bytebuf_put(b, ev->ids, ev->nr_ids * sizeof(uint64_t));
	ret = ret ? ret : bytebuf_put(b, ev->name, name_len);
	return ret ? ret : item_end(b, at);
}

int meta_encode(const struct meta *m, uint8_t **out, size_t *len,
		struct pipe_err *err)
{
	struct bytebuf b = { 0 };
	size_t at;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < m->nr_evs && !ret; i++)
		ret = encode_event(&b, &m->evs[i]);
	if (!ret)
		ret = item_begin(&b, META_TAG_STREAMS, &at);
	ret = ret ? ret : put_u32(&b, m->nr_streams);
	ret = ret ? ret : put_u32(&b, 0);
	ret = ret ? ret : bytebuf_put(&b, m->cpus, m->nr_streams * sizeof(int32_t));
	ret = ret ? ret : item_end(&b, at);
	for (i = 0; i < m->nr_props && !ret; i++) {
		uint32_t kl = (uint32_t)strlen(m->keys[i]);
		uint32_t vl = (uint32_t)strlen(m->values[i]);

		ret = item_begin(&b, META_TAG_PROP, &at);
		ret = ret ? ret : put_u32(&b, kl);
		ret = ret ? ret : put_u32(&b, vl);
		ret = ret ? ret : bytebuf_put(&b, m->keys[i], kl);
		ret = ret ? ret : bytebuf_put(&b, m->values[i], vl);
		ret = ret ? ret : item_end(&b, at);
	}
	if (ret) {
		free(b.p);
		return pipe_err_set(err, ret, "cannot encode metadata: %s",
				    strerror(-ret));
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* A NUL-terminated copy of n untrusted bytes. */
static char *dup_text(const uint8_t *p, uint32_t n)
{
	char *s = malloc((size_t)n + 1);

	if (!s)
		return NULL;
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static int decode_event(struct meta *m, const uint8_t *p, uint32_t len,
			const char *what, struct pipe_err *err)
{
	uint32_t attr_size, nr_ids, name_len;
	uint64_t need, attr_pad;
	uint8_t attr[META_ATTR_MAX] = { 0 };
	uint64_t *ids = NULL;
	char *name;
	int ret;

	if (len < 16)
		goto bad;
	attr_size = rd32(p);
	nr_ids = rd32(p + 4);
	name_len = rd32(p + 8);
	attr_pad = ((uint64_t)attr_size + 7) & ~UINT64_C(7);
	need = 16 + attr_pad + (uint64_t)nr_ids * 8 + name_len;
	if (need > len || attr_size < PERF_ATTR_SIZE_VER0 ||
	    attr_size > META_ATTR_MAX)
		goto bad;
	memcpy(attr, p + 16, attr_size);
	((struct perf_event_attr *)attr)->size = attr_size;
	if (nr_ids) {
		ids = malloc((size_t)nr_ids * 8);
		if (!ids)
			goto oom;
		memcpy(ids, p + 16 + attr_pad, (size_t)nr_ids * 8);
	}
	name = dup_text(p + 16 + attr_pad + (size_t)nr_ids * 8, name_len);
	if (!name) {
		free(ids);
		goto oom;
	}
	ret = meta_add_event(m, (const struct perf_event_attr *)attr, name,
			     ids, nr_ids, err);
	free(ids);
	free(name);
	return ret < 0 ? ret : 0;
bad:
	return pipe_err_set(err, -EINVAL, "cannot read '%s': bad event in metadata",
			    what);
oom:
	return pipe_err_nomem(err, "cannot read '%s'", what);
}

static int decode_item(struct meta *m, uint16_t tag, const uint8_t *p,
		       uint32_t len, const char *what, struct pipe_err *err)
{
	uint32_t a, b;
	char *k, *v;
	int ret;

	switch (tag) {
	case META_TAG_EVENT:
		return decode_event(m, p, len, what, err);
	case META_TAG_STREAMS:
		if (len < 8)
			break;
		a = rd32(p);
		if ((uint64_t)a * 4 > len - 8 || a > META_MAX_STREAMS)
			break;
		return meta_set_streams(m, a, (const int32_t *)(p + 8), err);
	case META_TAG_PROP:
		if (len < 8)
			break;
		a = rd32(p);
		b = rd32(p + 4);
		if ((uint64_t)a + b > len - 8)
			break;
		k = dup_text(p + 8, a);
		v = dup_text(p + 8 + a, b);
		if (k && v)
			ret = meta_set_prop(m, k, v, err);
		else
			ret = pipe_err_nomem(err, "cannot read '%s'", what);
		free(k);
		free(v);
		return ret;
	default:
		return 0; /* items of later versions are skipped */
	}
	return pipe_err_set(err, -EINVAL, "cannot read '%s': bad metadata item",
			    what);
}

int meta_decode(struct meta **out, const uint8_t *buf, size_t len,
		const char *what, struct pipe_err *err)
{
	struct meta *m = meta_new();
	size_t off = 0;
	int ret = 0;

	if (!m)
		return pipe_err_nomem(err, "cannot read '%s'", what);
	while (off + 8 <= len) {
		uint16_t tag;
		uint32_t ilen;

		memcpy(&tag, buf + off, 2);
		ilen = rd32(buf + off + 4);
		if (ilen > len - off - 8) {
			ret = pipe_err_set(err, -EINVAL,
					   "cannot read '%s': metadata item runs past its block",
					   what);
			goto out;
		}
		ret = decode_item(m, tag, buf + off + 8, ilen, what, err);
		if (ret < 0)
			goto out;
		off += 8 + (((size_t)ilen + 7) & ~(size_t)7);
	}
out:
	if (ret < 0) {
		meta_free(m);
		return ret;
	}
	*out = m;
	return 0;
}
