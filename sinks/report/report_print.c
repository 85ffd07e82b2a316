/*
 * report_print.c - the report's output at the end of the run: the text
 * table per event with its call graphs, CSV, or folded stacks; names
 * from the recording made safe for a terminal.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "report.h"

static const char *const key_titles[NR_KEYS] = {
	"Command", "Pid", "Shared Object", "Symbol", "CPU", "Source:Line"
};

/*
 * Names come from the recording (COMM, file names, symbols): make buf
 * safe for a terminal in place.  C0 controls, DEL, bytes that are not
 * valid UTF-8 and the C1 controls (U+0080..U+009F) become "\xHH"; valid
 * UTF-8 stays.  `semi`, when not 0, replaces ';' (the folded format's
 * frame separator, as stackcollapse-perf.pl does).  Idempotent.
 */
static void text_clean(char *buf, size_t cap, char semi)
{
	const unsigned char *in;
	char tmp[1024];
	size_t n = 0, i = 0, len = strlen(buf);

	if (len >= sizeof(tmp))
		len = sizeof(tmp) - 1;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	in = (const unsigned char *)tmp;
	while (i < len) {
		unsigned c = in[i], want = 1;
		bool ok = c >= 0x20 && c < 0x7f;

		if (c >= 0x80) {
			want = (unsigned)jsonw_utf8_len(in + i, len - i);
			/* U+0080..U+009F are C1 controls */
			ok = want && !(c == 0xc2 && in[i + 1] < 0xa0);
			if (!ok)
				want = 1;
		}
		if (ok && n + want < cap) {
			memcpy(buf + n, in + i, want);
			if (semi && c == ';')
				buf[n] = semi;
			n += want;
		} else if (!ok && n + 4 < cap) {
			snprintf(buf + n, cap - n, "\\x%02x", c);
			n += 4;
		} else {
			break;
		}
		i += want;
	}
	buf[n] = '\0';
}

/* Display text of a symbol: "[.] name", "[k] name", or the unknown form. */
static void sym_text(const struct report *r, uint32_t id, char *buf,
		     size_t cap, bool marker)
{
	const struct sym *s = vec_at(&r->syms, id);
	const char *dso = str_of(r, s->dso);
	const char *base = dso ? strrchr(dso, '/') : NULL;
	const char *mk = !marker ? "" : s->kernel ? "[k] " : "[.] ";

	base = base ? base + 1 : dso;
	if (s->name && s->inlined)
		snprintf(buf, cap, "%s%s (inlined)", mk, s->name);
	else if (s->name)
		snprintf(buf, cap, "%s%s", mk, s->name);
	else if (dso)
		snprintf(buf, cap, "%s[unknown] %s+0x%" PRIx64, mk, base,
			 s->offset);
	else
		snprintf(buf, cap, "%s[unknown] 0x%" PRIx64, mk, s->offset);
	text_clean(buf, cap, 0);
}

static void key_text(const struct report *r, const struct row *row,
		     enum key key, char *buf, size_t cap)
{
	const char *dso, *base;

	switch (key) {
	case KEY_COMM:
		snprintf(buf, cap, "%s", str_of(r, row->k[KEY_COMM]) ?
						str_of(r, row->k[KEY_COMM]) :
						"[unknown]");
		text_clean(buf, cap, 0);
		break;
	case KEY_PID:
		snprintf(buf, cap, "%" PRIu32, row->k[KEY_PID]);
		break;
	case KEY_DSO:
		dso = str_of(r, row->k[KEY_DSO]);
		base = dso ? strrchr(dso, '/') : NULL;
		snprintf(buf, cap, "%s", base ? base + 1 : dso ? dso
							: "[unknown]");
		text_clean(buf, cap, 0);
		break;
	case KEY_SYM:
		sym_text(r, row->k[KEY_SYM], buf, cap, true);
		break;
	case KEY_CPU:
		snprintf(buf, cap, "%03" PRIu32, row->k[KEY_CPU]);
		break;
	case KEY_SRCLINE:
		snprintf(buf, cap, "%s", str_of(r, row->k[KEY_SRCLINE]) ?
					 str_of(r, row->k[KEY_SRCLINE]) :
					 "??:0");
		text_clean(buf, cap, 0);
		break;
	default:
		buf[0] = '\0';
	}
}

static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct report *r = arg;
	const struct row *x = vec_at(&r->rows, *(const uint32_t *)a);
	const struct row *y = vec_at(&r->rows, *(const uint32_t *)b);
	uint64_t vx = r->children ? x->children : x->period;
	uint64_t vy = r->children ? y->children : y->period;
	char bx[512], by[512];
	uint32_t i;
	int c;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	for (i = 0; i < r->nr_keys; i++) {
		key_text(r, x, r->keys[i], bx, sizeof(bx));
		key_text(r, y, r->keys[i], by, sizeof(by));
		c = strcmp(bx, by);
		if (c)
			return c;
	}
	return 0;
}

static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int node_cmp(const void *a, const void *b, void *arg)
{
	const struct report *r = arg;
	const struct node *x = vec_at(&r->nodes, *(const uint32_t *)a);
	const struct node *y = vec_at(&r->nodes, *(const uint32_t *)b);

	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

/*
 * Print the children of node `at` in perf's graph style: a lone child
 * continues the line below; several branch with their share of total.
 */
static void print_tree(struct report *r, uint32_t at, const char *prefix,
		       uint64_t total)
{
	/* at most 200 children can each hold GRAPH_MIN_PERCENT */
	uint32_t kids[256], nr, i, c;
	char name[1024], sub[4096];

	for (;;) {
		const struct node *n = vec_at(&r->nodes, at);
		const struct node *k;

		nr = 0;
		for (c = n->child; c != NONE && nr < 256;) {
			k = vec_at(&r->nodes, c);
			if (pct(k->period, total) >= GRAPH_MIN_PERCENT)
				kids[nr++] = c;
			c = k->sibling;
		}
		qsort_r(kids, nr, sizeof(kids[0]), node_cmp, r);
		k = nr ? vec_at(&r->nodes, kids[0]) : NULL;
		if (nr != 1 || k->period != n->period)
			break;
		/* a lone child carrying everything continues the line */
		sym_text(r, k->sym, name, sizeof(name), false);
		fprintf(r->out, "%s%s\n", prefix, name);
		at = kids[0];
	}
	for (i = 0; i < nr; i++) {
		const struct node *k = vec_at(&r->nodes, kids[i]);
		bool last = i + 1 == nr;
		char head[32];
		int hl;

		sym_text(r, k->sym, name, sizeof(name), false);
		hl = snprintf(head, sizeof(head), "--%.2f%%--",
			      pct(k->period, total));
		fprintf(r->out, "%s%s%s%s\n", prefix, last ? " " : "|", head,
			name);
		snprintf(sub, sizeof(sub), "%s%s%*s", prefix, last ? " " : "|",
			 hl, "");
		if (strlen(sub) < sizeof(sub) - 1)
			print_tree(r, kids[i], sub, total);
		if (!last)
			fprintf(r->out, "%s|\n", prefix);
	}
}

int print_graph(struct report *r, const struct row *row,
		uint64_t total)
{
	const struct node *root;
	char name[1024];
	uint32_t first, at;
	int ret;

	ret = build_graph(r, row, total, &at);
	if (ret < 0 || at == NONE)
		return ret;
	root = vec_at(&r->nodes, at);
	first = root->child;
	fprintf(r->out, "            |\n");
	if (first != NONE && root->kids == 1) {
		const struct node *f = vec_at(&r->nodes, first);

		sym_text(r, f->sym, name, sizeof(name), false);
		fprintf(r->out, "            ---%s\n", name);
		print_tree(r, first, "               ", total);
	} else {
		print_tree(r, at, "            ", total);
	}
	fprintf(r->out, "\n");
	return 0;
}

/* Rows of one event, sorted, in *out (malloc'd); returns the count. */
static uint32_t event_rows(struct report *r, uint32_t event, uint32_t **out)
{
	uint32_t *idx = malloc(((size_t)r->rows.nr + 1) * sizeof(*idx));
	uint32_t i, nr = 0;

	*out = idx;
	if (!idx)
		return 0;
	for (i = 0; i < r->rows.nr; i++)
		if (((const struct row *)vec_at(&r->rows, i))->event == event)
			idx[nr++] = i;
	qsort_r(idx, nr, sizeof(*idx), row_cmp, r);
	return nr;
}

static const char *event_name(const struct report *r, uint32_t e)
{
	const struct pipe_meta *m = r->host->meta(r->ctx);

	if (m && e < m->nr_events && pipe_meta_event(m, e)->name)
		return pipe_meta_event(m, e)->name;
	return "unknown";
}

static bool row_shown(const struct report *r, const struct row *row,
		      uint64_t total, uint32_t rank)
{
	uint64_t v = r->children ? row->children : row->period;

	if (r->top > 0 && rank >= r->top)
		return false;
	return pct(v, total) >= r->percent_limit;
}

static int print_text(struct report *r, uint32_t event, const uint32_t *idx,
		      uint32_t nr)
{
	const struct event_total *t = &r->totals[event];
	size_t width[MAX_KEYS];
	char buf[1024];
	uint32_t i, j, shown = 0;
	int ret;

	snprintf(buf, sizeof(buf), "%s", event_name(r, event));
	text_clean(buf, sizeof(buf), 0);
	fprintf(r->out, "#\n# Samples: %" PRIu64 " of event '%s'\n"
			"# Event count (approx.): %" PRIu64 "\n#\n",
		t->samples, buf, t->period);
	for (j = 0; j < r->nr_keys; j++)
		width[j] = strlen(key_titles[r->keys[j]]);
	for (i = 0; i < nr; i++) {
		const struct row *row = vec_at(&r->rows, idx[i]);

		if (!row_shown(r, row, t->period, i))
			break;
		shown++;
		for (j = 0; j + 1 < r->nr_keys; j++) {
			key_text(r, row, r->keys[j], buf, sizeof(buf));
			if (strlen(buf) > width[j])
				width[j] = strlen(buf);
		}
	}
	fprintf(r->out, r->children ? "# Children      Self  Samples"
				    : "# Overhead  Samples");
	for (j = 0; j < r->nr_keys; j++)
		fprintf(r->out, "  %-*s",
			j + 1 < r->nr_keys ? (int)width[j] : 0,
			key_titles[r->keys[j]]);
	fprintf(r->out, r->children ? "\n# ........  ........  .......":
				      "\n# ........  .......");
	for (j = 0; j < r->nr_keys; j++) {
		size_t w = j + 1 < r->nr_keys ? width[j]
					      : strlen(key_titles[r->keys[j]]);

		fputs("  ", r->out);
		while (w--)
			fputc('.', r->out);
	}
	fprintf(r->out, "\n#\n");
	for (i = 0; i < shown; i++) {
		const struct row *row = vec_at(&r->rows, idx[i]);

		if (r->children)
			fprintf(r->out, "  %7.2f%%  %7.2f%%  %7" PRIu64,
				pct(row->children, t->period),
				pct(row->period, t->period), row->samples);
		else
			fprintf(r->out, "  %7.2f%%  %7" PRIu64,
				pct(row->period, t->period), row->samples);
		for (j = 0; j < r->nr_keys; j++) {
			key_text(r, row, r->keys[j], buf, sizeof(buf));
			fprintf(r->out, "  %-*s",
				j + 1 < r->nr_keys ? (int)width[j] : 0, buf);
		}
		fputc('\n', r->out);
		if (r->graph == GRAPH_NONE)
			continue;
		ret = print_graph(r, row, t->period);
		if (ret < 0)
			return ret;
	}
	fprintf(r->out, "\n");
	return 0;
}

static void print_csv(struct report *r, uint32_t event, const uint32_t *idx,
		      uint32_t nr)
{
	const struct event_total *t = &r->totals[event];
	char buf[1024];
	uint32_t i, j;

	for (i = 0; i < nr; i++) {
		const struct row *row = vec_at(&r->rows, idx[i]);

		if (!row_shown(r, row, t->period, i))
			break;
		snprintf(buf, sizeof(buf), "%s", event_name(r, event));
		text_clean(buf, sizeof(buf), 0);
		csv_field(r->out, buf);
		if (r->children)
			fprintf(r->out, ",%.2f", pct(row->children, t->period));
		fprintf(r->out, ",%.2f,%" PRIu64 ",%" PRIu64,
			pct(row->period, t->period), row->samples, row->period);
		for (j = 0; j < r->nr_keys; j++) {
			key_text(r, row, r->keys[j], buf, sizeof(buf));
			fputc(',', r->out);
			csv_field(r->out, buf);
		}
		fputc('\n', r->out);
	}
}

/* flamegraph.pl input: "comm;root;...;leaf count", one distinct stack a
 * line, in first-seen order (flamegraph.pl sorts itself). */
static void print_folded(struct report *r)
{
	char name[1024];
	uint32_t i, j;

	for (i = 0; i < r->chains.nr; i++) {
		const struct chain *c = vec_at(&r->chains, i);
		const uint32_t *f = vec_at(&r->pool, c->off);
		const char *comm = str_of(r, c->comm);

		snprintf(name, sizeof(name), "%s", comm ? comm : "[unknown]");
		text_clean(name, sizeof(name), ':');
		fputs(name, r->out);
		for (j = c->len; j-- > 0;) {
			sym_text(r, f[j], name, sizeof(name), false);
			text_clean(name, sizeof(name), ':');
			fputc(';', r->out);
			fputs(name, r->out);
		}
		fprintf(r->out, " %" PRIu64 "\n", c->samples);
	}
}

int report_finish(void *state)
{
	struct report *r = state;
	uint32_t e, nr, *idx, j;
	int ret = 0;

	if (r->children) {
		ret = compute_children(r);
		if (ret < 0)
			goto fail;
	}
	if (r->graph != GRAPH_NONE && r->format == FORMAT_TEXT) {
		ret = find_occurrences(r);
		if (ret < 0)
			goto fail;
	}
	if (r->format == FORMAT_FOLDED) {
		print_folded(r);
		goto flush;
	}
	if (r->format == FORMAT_TEXT) {
		uint64_t total = 0;

		for (e = 0; e <= r->nr_events; e++)
			total += r->totals[e].samples;
		fprintf(r->out, "# pipe report\n# Total samples: %" PRIu64
				"\n# Total Lost Samples: %" PRIu64
				"\n# Throttled: %" PRIu64 "\n",
			total, r->lost, r->throttled);
		if (r->bad_samples)
			fprintf(r->out, "# Malformed samples skipped: %" PRIu64
					"\n", r->bad_samples);
	} else {
		fprintf(r->out, "event%s,overhead,samples,period",
			r->children ? ",children" : "");
		for (j = 0; j < r->nr_keys; j++)
			fprintf(r->out, ",%s", key_names[r->keys[j]]);
		fputc('\n', r->out);
	}
	for (e = 0; e <= r->nr_events; e++) {
		if (r->totals[e].samples == 0)
			continue;
		nr = event_rows(r, e, &idx);
		if (!idx) {
			ret = -ENOMEM;
			goto fail;
		}
		if (r->format == FORMAT_TEXT)
			ret = print_text(r, e, idx, nr);
		else
			print_csv(r, e, idx, nr);
		free(idx);
		if (ret < 0)
			goto fail;
	}
flush:
	if (fflush(r->out) != 0 || ferror(r->out)) {
		r->host->error(r->ctx, "cannot write the report '%s': %s",
			       r->output, strerror(errno));
		return -EIO;
	}
	return 0;
fail:
	r->host->error(r->ctx, "cannot build the report: %s", strerror(-ret));
	return ret;
}
