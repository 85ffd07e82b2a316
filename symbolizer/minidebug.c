/*
 * minidebug.c - symbols from `.gnu_debugdata` (see minidebug.h): the
 * section is found with libelf, inflated with liblzma (bounded), and the
 * ELF inside it read as any other through elfsyms_read_mem.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#include "err.h"
#include "grow.h"
#include "minidebug.h"
#include "symtab.h"

#if HAVE_LZMA
#include <lzma.h>

/* The section's bytes (borrowed from elf), or NULL when there is none. */
static Elf_Data *find_section(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".gnu_debugdata") == 0)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* Inflate xz data into *out (malloc'ed, *out_len bytes), at most
 * MINIDEBUG_IMAGE_MAX.  0, -ENOMEM, or -EINVAL when it is not xz or too
 * big. */
static int inflate_xz(const void *in, size_t len, uint8_t **out,
		      size_t *out_len)
{
	lzma_stream z = LZMA_STREAM_INIT;
	size_t cap = 0;
	uint8_t *buf = NULL;
	lzma_ret r;
	int ret = 0;

	if (lzma_stream_decoder(&z, MINIDEBUG_IMAGE_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	z.next_in = in;
	z.avail_in = len;
	do {
		if (z.total_out == cap) {
			ret = grow_array(&buf, &cap, cap + 1, 1, len * 4 + 4096,
					 MINIDEBUG_IMAGE_MAX);
			if (ret < 0) {
				if (ret == -E2BIG)
					ret = -EINVAL; /* over the limit */
				break;
			}
		}
		z.next_out = buf + z.total_out;
		z.avail_out = cap - z.total_out;
		r = lzma_code(&z, LZMA_FINISH);
	} while (r == LZMA_OK);
	if (ret == 0 && r != LZMA_STREAM_END)
		ret = r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	*out_len = z.total_out;
	lzma_end(&z);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	*out = buf;
	return 0;
}

int minidebug_read_elf(Elf *elf, const char *path, struct symtab **syms,
		       struct pipe_err *err)
{
	struct elfsyms_info info;
	Elf_Data *d;
	uint8_t *image = NULL;
	size_t len = 0;
	int ret = 0;

	*syms = NULL;
	d = elf && elf_kind(elf) == ELF_K_ELF ? find_section(elf) : NULL;
	if (!d || !d->d_buf || d->d_size == 0)
		return 0;
	if (d->d_size > MINIDEBUG_PACKED_MAX)
		ret = -EINVAL;
	else
		ret = inflate_xz(d->d_buf, d->d_size, &image, &len);
	if (ret < 0)
		return pipe_err_set(err, ret, "cannot read the .gnu_debugdata "
				    "of '%s': %s", path, ret == -EINVAL ?
				    "not xz data within the limits" :
				    strerror(-ret));
	ret = elfsyms_read_mem(image, len, path, ELFSYMS_SYMTAB, &info, syms,
			       err);
	free(image);
	return ret;
}

int minidebug_read(const char *path, struct symtab **syms,
		   struct pipe_err *err)
{
	return elfsyms_with_file(path, minidebug_read_elf, syms, err);
}

#else /* pipe built without liblzma: the section is not read */

int minidebug_read_elf(Elf *elf, const char *path, struct symtab **syms,
		       struct pipe_err *err)
{
	(void)elf;
	(void)path;
	(void)err;
	*syms = NULL;
	return 0;
}

int minidebug_read(const char *path, struct symtab **syms,
		   struct pipe_err *err)
{
	(void)path;
	(void)err;
	*syms = NULL;
	return 0;
}

#endif
