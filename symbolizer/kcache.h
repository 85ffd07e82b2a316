/*
 * kcache.h - the running kernel's symbols without regenerating all of
 * /proc/kallsyms on every report: its text-symbol lines (and _text) are
 * kept in a per-user cache file keyed by the boot, the kernel build and
 * the loaded modules, and read back from there while those stay the same.
 */
#ifndef PIPE_KCACHE_H
#define PIPE_KCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/* Files read whole: at most this many bytes. */
#define KCACHE_TEXT_MAX ((size_t)512 << 20)

/*
 * Read the rest of open file fd (not closed), /proc files included: *buf
 * is owned by the caller, NUL-ended, *len bytes before the NUL.  0, or
 * negative errno (-EFBIG past KCACHE_TEXT_MAX).
 */
int kcache_read_fd(int fd, char **buf, size_t *len);

/*
 * The kallsyms lines of text symbols and of _text ("ADDR TYPE NAME
 * [\t[MODULE]]"), plus comment lines a kallsyms parser skips: from the
 * cache when it is current (*cached true), else from /proc/kallsyms,
 * then written to the cache when that shows addresses.  The cache lives
 * in $XDG_CACHE_HOME/pipe (default ~/.cache/pipe); PIPE_KALLSYMS_CACHE=off
 * turns it off.  *buf owned by the caller, NUL-ended.  0, or negative
 * errno from reading /proc/kallsyms; cache trouble only means no cache.
 */
int kcache_kallsyms(char **buf, size_t *len, bool *cached);

/*
 * A binary image of what was made from kallsyms (the symbolizer's
 * sorted table), kept beside the text cache under the same key, so the
 * next report maps it instead of parsing and sorting text.  The file is
 * checked whole (key, length, XXH3 of the payload); what the payload
 * holds is its writer's to check again.  Same directory, same switch.
 */
struct kcache_image {
	void *map;        /* the file's mapping (munmap map, map_len) */
	size_t map_len;
	const void *data; /* the payload, 8-byte aligned, in map */
	size_t len;
};
/* Most parts one image is saved from. */
#define KCACHE_IMAGE_PARTS 8

/* 0 and *img set, or -ENOENT when there is no good image for this key. */
int kcache_image_load(struct kcache_image *img);
/* Save the concatenated parts as the image for this key (silently not
 * when there is no cache or the write fails). */
void kcache_image_save(const struct iovec *parts, int n);

#endif
