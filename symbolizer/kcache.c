/*
 * kcache.c - reading whole text files, and the kallsyms cache (see
 * kcache.h).  Generating /proc/kallsyms costs the kernel tens of
 * milliseconds (a formatted line per symbol); reading a cached copy costs
 * about a millisecond.  A cache file starts with a line naming its key
 * and ends with a line counting the lines between: anything else, or
 * another key, is not used.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "err.h"
#include "fdio.h"
#include "grow.h"
#include "kcache.h"
#include "trust.h"
#include "xxh.h"

#define KALLSYMS "/proc/kallsyms"
#define KCACHE_PREFIX "kallsyms-"
#define KCACHE_MAGIC "# pipe kallsyms cache 1 "

int kcache_read_fd(int fd, char **buf, size_t *len)
{
	size_t cap = 0, n = 0;
	char *b = NULL;
	int ret = 0;

	for (;;) {
		size_t want;
		ssize_t got;

		/* room for one byte more and the NUL */
		ret = grow_array(&b, &cap, n + 2, 1, 1 << 16, KCACHE_TEXT_MAX);
		if (ret < 0) {
			if (ret == -E2BIG)
				ret = -EFBIG;
			break;
		}
		want = cap - n - 1;
		got = fdio_read_full(fd, b + n, want);
		if (got < 0) {
			ret = (int)got;
			break;
		}
		n += (size_t)got;
		if ((size_t)got < want)
			break; /* the end of the file */
	}
	if (ret < 0) {
		free(b);
		return ret;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* Read a whole file by path: as kcache_read_fd. */
static int kcache_read_text(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = kcache_read_fd(fd, buf, len);
	close(fd);
	return ret;
}

/* Add the bytes of a small file (absent: nothing) to the key. */
static void key_add_file(XXH3_state_t *st, const char *path)
{
	char *buf;
	size_t len;

	if (kcache_read_text(path, &buf, &len) < 0) {
		XXH3_64bits_update(st, "-", 1);
		return;
	}
	XXH3_64bits_update(st, &len, sizeof(len));
	XXH3_64bits_update(st, buf, len);
	free(buf);
}

/*
 * The cache directory into dir and the running kernel's key: 0, or -1
 * when there is no cache (turned off, no home, no boot id).  Taken from
 * the environment as a set-id program may (secure_getenv).
 */
static int kcache_dir_key(char *dir, size_t dcap, uint64_t *out)
{
	const char *off = secure_getenv("PIPE_KALLSYMS_CACHE");
	const char *xdg = secure_getenv("XDG_CACHE_HOME");
	const char *home = secure_getenv("HOME");
	XXH3_state_t *st;
	uint64_t key;
	int n;

	if (off && strcmp(off, "off") == 0)
		return -1;
	if (xdg && xdg[0] == '/')
		n = snprintf(dir, dcap, "%s/pipe", xdg);
	else if (home && home[0] == '/')
		n = snprintf(dir, dcap, "%s/.cache/pipe", home);
	else
		return -1;
	if (n < 0 || (size_t)n >= dcap || access("/proc/sys/kernel/random/boot_id",
						 R_OK) < 0)
		return -1;
	st = XXH3_createState();
	if (!st)
		return -1;
	XXH3_64bits_reset(st);
	/* a new boot moves the kernel (KASLR); modules and the build too */
	key_add_file(st, "/proc/sys/kernel/random/boot_id");
	key_add_file(st, "/sys/kernel/notes");
	key_add_file(st, "/proc/modules");
	key = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	*out = key;
	return 0;
}

/*
 * The cache file's path for the running kernel into path: 0, or -1
 * when there is no cache (turned off, no home, no boot id).
 */
static int kcache_path(char *dir, size_t dcap, char *path, size_t pcap)
{
	uint64_t key;
	int n;

	if (kcache_dir_key(dir, dcap, &key) < 0)
		return -1;
	n = snprintf(path, pcap, "%s/" KCACHE_PREFIX "%016" PRIx64, dir, key);
	return n < 0 || (size_t)n >= pcap ? -1 : 0;
}

/* The name after "ADDR TYPE " of a kallsyms line, and its type. */
static bool line_wanted(const char *line, size_t len)
{
	const char *sp = memchr(line, ' ', len);
	size_t rest;

	if (!sp || sp == line || (size_t)(sp - line) + 3 > len || sp[2] != ' ')
		return false;
	if (sp[1] && strchr("tTwW", sp[1]))
		return true;
	rest = len - (size_t)(sp + 3 - line);
	return rest >= 5 && memcmp(sp + 3, "_text", 5) == 0 &&
	       (rest == 5 || sp[8] == '\t');
}

/*
 * The lines of kallsyms (in place, len bytes) a report needs, between a
 * header naming `key` and a line count: *out owned.  *addresses is false
 * when every address is zero (kptr_restrict).
 */
static int filter_kallsyms(const char *buf, size_t len, const char *key,
			   char **out, size_t *out_len, bool *addresses)
{
	size_t cap = len + 256, n, lines = 0;
	const char *p = buf, *end = buf + len;
	char *o = malloc(cap);

	if (!o)
		return -ENOMEM;
	*addresses = false;
	n = (size_t)snprintf(o, cap, KCACHE_MAGIC "%s\n", key);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (line_wanted(p, l)) {
			/* an address of all zeros is what kptr_restrict shows */
			if (!*addresses && p[strspn(p, "0")] != ' ')
				*addresses = true;
			memcpy(o + n, p, l);
			n += l;
			o[n++] = '\n';
			lines++;
		}
		p += l + 1;
	}
	n += (size_t)snprintf(o + n, cap - n, "# end %zu\n", lines);
	*out = o;
	*out_len = n;
	return 0;
}

/* Is buf (len bytes) a whole cache file for `key`? */
static bool cache_good(const char *buf, size_t len, const char *key)
{
	size_t hl = strlen(KCACHE_MAGIC), lines = 0, want;
	const char *last, *p;
	char *end;

	if (len < hl + strlen(key) + 1 || memcmp(buf, KCACHE_MAGIC, hl) ||
	    memcmp(buf + hl, key, strlen(key)) || buf[hl + strlen(key)] != '\n' ||
	    buf[len - 1] != '\n')
		return false;
	last = buf + len - 1;
	while (last > buf && last[-1] != '\n')
		last--;
	if (strncmp(last, "# end ", 6))
		return false;
	want = strtoull(last + 6, &end, 10);
	if (*end != '\n')
		return false;
	for (p = buf + hl + strlen(key) + 1; p < last; p++, lines++) {
		p = memchr(p, '\n', (size_t)(last - p));
		if (!p)
			return false;
	}
	return lines == want;
}

/* Keep only the newest cache: older boots' files (`prefix`*) go. */
static void remove_stale(const char *dir, const char *prefix,
			 const char *keep)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) ||
		    strcmp(e->d_name, keep) == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) <
		    (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
}

/* Write a cache file of the parts atomically (a temporary file renamed),
 * then remove the `prefix` files of other keys; failures are silent: the
 * next run reads /proc/kallsyms again. */
static void cache_write(const char *dir, const char *path, const char *prefix,
			const struct iovec *parts, int n)
{
	char tmp[4200], parent[4096];
	const char *slash;
	bool ok = true;
	int fd, i;

	slash = strrchr(dir, '/');
	if (slash && (size_t)(slash - dir) < sizeof(parent)) {
		memcpy(parent, dir, (size_t)(slash - dir));
		parent[slash - dir] = '\0';
		mkdir(parent, 0700);
	}
	mkdir(dir, 0700);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	for (i = 0; i < n && ok; i++)
		ok = fdio_write_all(fd, parts[i].iov_base,
				    parts[i].iov_len) == 0;
	if (close(fd) == 0 && ok && rename(tmp, path) == 0) {
		remove_stale(dir, prefix, strrchr(path, '/') + 1);
		return;
	}
	unlink(tmp);
}

int kcache_kallsyms(char **buf, size_t *len, bool *cached)
{
	char dir[4096], path[4200], *raw, *out;
	bool have_path, addresses;
	size_t raw_len, out_len;
	const char *key = "";
	int ret;

	*cached = false;
	have_path = kcache_path(dir, sizeof(dir), path, sizeof(path)) == 0;
	if (have_path) {
		key = strrchr(path, '-') + 1;
		if (kcache_read_text(path, buf, len) == 0) {
			if (cache_good(*buf, *len, key)) {
				*cached = true;
				return 0;
			}
			free(*buf);
		}
	}
	ret = kcache_read_text(KALLSYMS, &raw, &raw_len);
	if (ret < 0)
		return ret;
	ret = filter_kallsyms(raw, raw_len, key, &out, &out_len, &addresses);
	free(raw);
	if (ret < 0)
		return ret;
	if (have_path && addresses)
		cache_write(dir, path, KCACHE_PREFIX,
			    &(struct iovec){ .iov_base = out, .iov_len = out_len },
			    1);
	*buf = out;
	*len = out_len;
	return 0;
}

/* ---- the binary image ----------------------------------------------- */

/* A binary cache file: this header, then `len` payload bytes whose XXH3
 * is `sum`; the key is the text cache's. */
struct kbin_head {
	char magic[8];
	uint64_t key;
	uint64_t len;
	uint64_t sum;
};

#define KBIN_PREFIX "kallbin-"
#define KBIN_MAGIC "pipeKB01"

static int kbin_path(char *dir, size_t dcap, char *path, size_t pcap,
		     uint64_t *key)
{
	int n;

	if (kcache_dir_key(dir, dcap, key) < 0)
		return -1;
	n = snprintf(path, pcap, "%s/" KBIN_PREFIX "%016" PRIx64, dir, *key);
	return n < 0 || (size_t)n >= pcap ? -1 : 0;
}

int kcache_image_load(struct kcache_image *img)
{
	char dir[4096], path[4200];
	struct kbin_head h;
	struct pipe_err err;
	struct stat st;
	uint64_t key;
	void *map;
	int fd;

	memset(img, 0, sizeof(*img));
	if (kbin_path(dir, sizeof(dir), path, sizeof(path), &key) < 0)
		return -ENOENT;
	fd = trust_open(path, "cannot open", &st, &err);
	if (fd < 0)
		return -ENOENT;
	if ((size_t)st.st_size < sizeof(h) || (uint64_t)st.st_size > KCACHE_TEXT_MAX) {
		close(fd);
		return -ENOENT;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -ENOENT;
	memcpy(&h, map, sizeof(h));
	if (memcmp(h.magic, KBIN_MAGIC, sizeof(h.magic)) || h.key != key ||
	    h.len != (uint64_t)st.st_size - sizeof(h) ||
	    XXH3_64bits((const char *)map + sizeof(h), h.len) != h.sum) {
		munmap(map, (size_t)st.st_size);
		return -ENOENT;
	}
	img->map = map;
	img->map_len = (size_t)st.st_size;
	img->data = (const char *)map + sizeof(h);
	img->len = h.len;
	return 0;
}

void kcache_image_save(const struct iovec *parts, int n)
{
	char dir[4096], path[4200];
	struct iovec all[KCACHE_IMAGE_PARTS + 1];
	struct kbin_head h;
	XXH3_state_t *st;
	uint64_t key;
	int i;

	if (n > KCACHE_IMAGE_PARTS ||
	    kbin_path(dir, sizeof(dir), path, sizeof(path), &key) < 0)
		return;
	st = XXH3_createState();
	if (!st)
		return;
	XXH3_64bits_reset(st);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, KBIN_MAGIC, sizeof(h.magic));
	h.key = key;
	for (i = 0; i < n; i++) {
		XXH3_64bits_update(st, parts[i].iov_base, parts[i].iov_len);
		h.len += parts[i].iov_len;
		all[i + 1] = parts[i];
	}
	h.sum = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	all[0].iov_base = &h;
	all[0].iov_len = sizeof(h);
	cache_write(dir, path, KBIN_PREFIX, all, n + 1);
}
