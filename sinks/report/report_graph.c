/*
 * report_graph.c - what the report computes from the distinct chains at
 * the end: each row's children (self + as a caller) and the call graph
 * printed under a row, caller- or callee-based.
 */
#include <errno.h>
#include <stdlib.h>

#include "grow.h"
#include "report.h"

/* ---- the end: children, graphs, output ---------------------------------- */

double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/*
 * The row of frame j of chain c (frames f), created as needed; *first is
 * false when a frame nearer the leaf in this chain had the same row, so a
 * recursive function counts once.  Every chain visit takes a new stamp.
 */
static struct row *frame_row(struct report *r, const struct chain *c,
			     const uint32_t *f, uint32_t j, bool *first)
{
	struct row k, *row;

	row_key(r, &k, c->event, c->comm, c->pid, c->cpu, f[j], c->src);
	row = row_get(r, &k);
	if (!row)
		return NULL;
	*first = row->stamp != r->stamp;
	row->stamp = r->stamp;
	return row;
}

/* A new stamp for the next chain visit (0 marks no visit yet). */
static void next_stamp(struct report *r)
{
	if (++r->stamp == 0) {
		uint32_t i;

		for (i = 0; i < r->rows.nr; i++)
			((struct row *)vec_at(&r->rows, i))->stamp = 0;
		r->stamp = 1;
	}
}

int compute_children(struct report *r)
{
	uint32_t i, j;
	bool first, leaf;

	for (i = 0; i < r->rows.nr; i++) {
		struct row *row = vec_at(&r->rows, i);

		row->children = row->period;
	}
	for (i = 0; i < r->chains.nr; i++) {
		const struct chain *c = vec_at(&r->chains, i);
		const uint32_t *f = vec_at(&r->pool, c->off);
		struct row *row;

		/* every distinct row above the leaf gets the period once; a
		 * function inlined anywhere in the chain (inline=on), at the
		 * sample's own address too, is a row of its own whose share
		 * is all children, as in perf --children --inline */
		next_stamp(r);
		leaf = true;
		for (j = 0; j < c->len; j++) {
			bool inlined = is_inlined(r, f[j]);

			row = frame_row(r, c, f, j, &first);
			if (!row)
				return -ENOMEM;
			if (first && (!leaf || inlined))
				row->children += c->period;
			if (!inlined)
				leaf = false;
		}
	}
	return 0;
}

int find_occurrences(struct report *r)
{
	uint32_t pass, i, j, total = 0;
	bool first;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < r->chains.nr; i++) {
			const struct chain *c = vec_at(&r->chains, i);
			const uint32_t *f = vec_at(&r->pool, c->off);

			next_stamp(r);
			for (j = 0; j < c->len; j++) {
				struct row *row;

				/* without children, the leaf's own row only */
				if (!r->children && is_inlined(r, f[j]))
					continue;
				row = frame_row(r, c, f, j, &first);
				if (!row)
					return -ENOMEM;
				if (first && pass == 0) {
					row->occ_nr++;
				} else if (first) {
					r->occ[row->occ_off + row->occ_fill].chain = i;
					r->occ[row->occ_off + row->occ_fill].pos = j;
					row->occ_fill++;
				}
				if (!r->children)
					break; /* the leaf's row only */
			}
		}
		if (pass == 1)
			break;
		for (i = 0; i < r->rows.nr; i++) {
			struct row *row = vec_at(&r->rows, i);

			row->occ_off = total;
			row->occ_fill = 0;
			if (total + row->occ_nr < total ||
			    total + row->occ_nr > MAX_ITEMS)
				return -E2BIG;
			total += row->occ_nr;
		}
		r->occ = malloc(((size_t)total + 1) * sizeof(*r->occ));
		if (!r->occ)
			return -ENOMEM;
	}
	return 0;
}

static uint32_t node_new(struct report *r, uint32_t sym, uint64_t period)
{
	uint32_t idx = vec_push(&r->nodes);
	struct node *n;

	if (idx == NONE)
		return NONE;
	n = vec_at(&r->nodes, idx);
	n->sym = sym;
	n->child = NONE;
	n->sibling = NONE;
	n->period = period;
	return idx;
}

static int walk_cmp(const void *a, const void *b)
{
	const struct walk *x = a, *y = b;

	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

/*
 * The children of node `at` from the walks w[0..n) (each at its next
 * frame): one child per symbol, kept only when the graph can show it
 * (GRAPH_MIN_PERCENT of total), except a root's lone child, which is
 * always shown.  Work is bounded by the walks that reach shown nodes.
 */
static int tree_grow(struct report *r, uint32_t at, struct walk *w,
		     size_t n, uint64_t total, bool root)
{
	size_t i, g, start, m, groups = 0;
	struct node *parent;
	uint32_t kid;
	uint64_t sum;
	int ret;

	for (i = 0; i < n; i++) {
		const uint32_t *f = vec_at(&r->pool, w[i].off);

		w[i].sym = f[w[i].pos];
	}
	qsort(w, n, sizeof(*w), walk_cmp);
	for (i = 0; i < n; i = g)
		for (g = i, groups++; g < n && w[g].sym == w[i].sym; g++)
			;
	/* print_graph tells a lone first child from several */
	((struct node *)vec_at(&r->nodes, at))->kids = (uint32_t)groups;
	for (start = 0; start < n; start = g) {
		sum = 0;
		for (g = start; g < n && w[g].sym == w[start].sym; g++)
			sum += w[g].period;
		if (!(root && groups == 1) &&
		    pct(sum, total) < GRAPH_MIN_PERCENT)
			continue;
		kid = node_new(r, w[start].sym, sum);
		if (kid == NONE)
			return -ENOMEM;
		parent = vec_at(&r->nodes, at);
		((struct node *)vec_at(&r->nodes, kid))->sibling = parent->child;
		parent->child = kid;
		/* the walks that go on below the kid, moved to the front of
		 * the group: entries before i are read already */
		for (m = 0, i = start; i < g; i++) {
			int64_t next = (int64_t)w[i].pos + w[i].dir;

			if (next < 0 || next >= (int64_t)w[i].len)
				continue;
			w[start + m] = w[i];
			w[start + m].pos = (uint32_t)next;
			m++;
		}
		if (m) {
			ret = tree_grow(r, kid, w + start, m, total, false);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

int build_graph(struct report *r, const struct row *row,
		uint64_t total, uint32_t *root)
{
	size_t i, n = row->occ_nr;
	uint64_t sum = 0;
	int ret;

	r->nodes.nr = 0;
	*root = NONE;
	if (!n)
		return 0;
	ret = grow_array(&r->walks, &r->walks_cap, n, sizeof(*r->walks), n,
			 MAX_ITEMS);
	if (ret < 0)
		return ret;
	for (i = 0; i < n; i++) {
		const struct occ *o = &r->occ[row->occ_off + i];
		const struct chain *c = vec_at(&r->chains, o->chain);
		struct walk *w = &r->walks[i];

		w->off = c->off;
		w->len = c->len;
		w->period = c->period;
		w->dir = r->graph == GRAPH_CALLEE ? 1 : -1;
		w->pos = r->children ? o->pos :
			 r->graph == GRAPH_CALLEE ? 0 : c->len - 1;
		sum += c->period;
	}
	*root = node_new(r, NONE, sum);
	if (*root == NONE)
		return -ENOMEM;
	ret = tree_grow(r, *root, r->walks, n, total, true);
	return ret;
}
