/*
 * crmap.c - reading a file the source maps whole: the block headers read
 * with read_at while decoders read the blocks (the first touch of a page
 * maps it, on the thread that touches it; see cr_header_at), and the
 * pages of blocks read dropped as the read goes, by the decoders.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "crstate.h"
#include "host.h"

/*
 * The pages of a shared mapping may be dropped while the source still
 * holds it: they come back from the file when touched, where a private or
 * anonymous mapping's would come back as zeros.  The source's `map` does
 * not say what it made, so this asks the kernel's list of this process's
 * mappings.
 */
bool cr_map_is_shared(const void *base, uint64_t len)
{
	uintptr_t at = (uintptr_t)base, end = at + (uintptr_t)len;
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	bool ok = false;

	if (!f)
		return false;
	while (!ok && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[5];

		if (!strchr(line, '\n') && !feof(f))
			break; /* a longer line than the reader expects */
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
			break;
		if (lo > at)
			break; /* a gap, or past it: the list is in order */
		if (hi <= at)
			continue;
		if (perms[3] != 's')
			break;
		at = hi;
		ok = at >= end;
	}
	fclose(f);
	return ok;
}

int cr_src_read(struct creader *r, uint64_t off, uint8_t *buf, size_t n,
		size_t *got, struct pipe_err *err)
{
	struct crash_site site = host_enter(r->opts.src_ctx, "read_at");
	int ret = r->opts.src->read_at(r->opts.src_state, off, buf, n, got);

	host_leave(site);
	if (ret < 0)
		return pipe_err_set(err, ret, "cannot read '%s': %s",
				    r->opts.name, strerror(-ret));
	return 0;
}

int cr_read_copy(struct creader *r, uint64_t off, uint8_t *buf, size_t n,
		 size_t *got, struct pipe_err *err)
{
	size_t more;
	int ret;

	while (*got < n) {
		ret = cr_src_read(r, off + *got, buf + *got, n - *got, &more,
				  err);
		if (ret < 0)
			return ret;
		if (more == 0)
			break;
		*got += more;
	}
	return 0;
}

/*
 * The mapped pages before the block at off that nobody reads any more
 * (records of blocks held, blocks in flight) go to j, to be dropped on
 * the decoder that runs it: a read of a big file then keeps a bounded
 * part of it mapped, and the unmapping, as costly as the mapping, is
 * shared by the decoders instead of done at the end on this thread.
 */
void cr_drop_before(struct creader *r, uint64_t off, struct cb_job *j)
{
	const struct cb_job *old = r->pool ? cb_pool_head(r->pool) : NULL;
	const struct cr_held *h;
	uintptr_t hi;

	if (old && old->off < off)
		off = old->off;
	for (h = r->held_all; h; h = h->next_all)
		if (h->map_off < off)
			off = h->map_off;
	hi = ((uintptr_t)r->map + (uintptr_t)off) & ~(CR_DROP_ALIGN - 1);
	if (hi > r->drop_hi)
		r->drop_hi = hi;
	if (r->drop_hi > r->drop_lo) {
		j->drop = (const uint8_t *)r->drop_lo;
		j->drop_len = r->drop_hi - r->drop_lo;
		r->drop_lo = r->drop_hi;
	}
}
