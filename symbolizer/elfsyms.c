/*
 * elfsyms.c - ELF headers and function symbols through libelf (see
 * elfsyms.h).  Headers are read once; symbols are filtered by type and
 * section before their names are touched, then handed to a symtab builder
 * that points into the mmapped string table.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsyms.h"
#include "err.h"
#include "symtab.h"
#include "trust.h"

#define NOTE_ALIGN(x) (((x) + 3) & ~(size_t)3)

uint32_t elfsyms_notes_build_id(const void *notes, size_t len,
				uint8_t *id)
{
	const uint8_t *p = notes;
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off, next;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		name_off = off + 12;
		if (namesz > len - name_off)
			return 0;
		desc_off = name_off + NOTE_ALIGN((size_t)namesz);
		if (desc_off > len || descsz > len - desc_off)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(p + name_off, "GNU", 4) == 0 && descsz > 0) {
			uint32_t n = descsz < ELFSYMS_BUILD_ID_MAX ?
					     descsz : ELFSYMS_BUILD_ID_MAX;

			memcpy(id, p + desc_off, n);
			return n;
		}
		next = desc_off + NOTE_ALIGN((size_t)descsz);
		if (next <= off || next > len)
			return 0;
		off = next;
	}
	return 0;
}

void elfsyms_hex(const uint8_t *id, uint32_t len, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	uint32_t i;

	for (i = 0; i < len; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * len] = '\0';
}

bool elfsyms_vaddr(const struct elfsyms_info *info, uint64_t off,
		   uint64_t *vaddr)
{
	uint32_t i;

	for (i = 0; i < info->nr_loads; i++) {
		const struct elfsyms_load *l = &info->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return true;
		}
	}
	return false;
}

static void read_loads(Elf *elf, struct elfsyms_info *info)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n) != 0)
		return;
	for (i = 0; i < n && info->nr_loads < ELFSYMS_MAX_LOADS; i++) {
		GElf_Phdr ph;
		struct elfsyms_load *l;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		l = &info->loads[info->nr_loads++];
		l->offset = ph.p_offset;
		l->vaddr = ph.p_vaddr;
		l->filesz = ph.p_filesz;
		l->flags = ph.p_flags;
	}
}

/* Program-header notes, for files without section headers. */
static void read_phdr_notes(Elf *elf, struct elfsyms_info *info)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n) != 0)
		return;
	for (i = 0; i < n && info->build_id_len == 0; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
					 ph.p_filesz, ELF_T_BYTE);
		if (d && d->d_buf)
			info->build_id_len = elfsyms_notes_build_id(
				d->d_buf, d->d_size, info->build_id);
	}
}

struct scan {
	Elf_Scn *symtab;     /* SHT_SYMTAB with data, or NULL */
	Elf_Scn *dynsym;     /* SHT_DYNSYM, or NULL */
	uint8_t *exec;       /* per section index: 1 if SHF_EXECINSTR */
	size_t nr_sections;
};

static int scan_sections(Elf *elf, struct elfsyms_info *info,
			 struct scan *sc)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(elf, &sc->nr_sections) != 0 ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	sc->exec = calloc(sc->nr_sections ? sc->nr_sections : 1, 1);
	if (!sc->exec)
		return -ENOMEM;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		size_t idx = elf_ndxscn(scn);

		if (!gelf_getshdr(scn, &sh))
			continue;
		if ((sh.sh_flags & SHF_EXECINSTR) && idx < sc->nr_sections)
			sc->exec[idx] = 1;
		if (sh.sh_type == SHT_SYMTAB) {
			sc->symtab = scn;
			info->has_symtab = true;
		} else if (sh.sh_type == SHT_DYNSYM) {
			sc->dynsym = scn;
			info->has_dynsym = true;
		} else if (sh.sh_type == SHT_NOTE &&
			   info->build_id_len == 0) {
			Elf_Data *d = elf_rawdata(scn, NULL);

			if (d && d->d_buf)
				info->build_id_len = elfsyms_notes_build_id(
					d->d_buf, d->d_size, info->build_id);
		} else if (sh.sh_type == SHT_PROGBITS) {
			Elf_Data *d;

			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (!name || strcmp(name, ".gnu_debuglink") != 0)
				continue;
			d = elf_rawdata(scn, NULL);
			if (d && d->d_buf && d->d_size > 0) {
				size_t n = strnlen(d->d_buf, d->d_size);

				if (n < sizeof(info->debuglink) &&
				    n < d->d_size) {
					memcpy(info->debuglink, d->d_buf, n);
					info->debuglink[n] = '\0';
				}
			}
		}
	}
	return 0;
}

static enum symtab_bind bind_of(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return SYMTAB_GLOBAL;
	case STB_WEAK:
		return SYMTAB_WEAK;
	default:
		return SYMTAB_LOCAL;
	}
}

static bool keep_sym(const struct scan *sc, unsigned char info,
		     uint16_t shndx, uint64_t value, uint32_t name)
{
	unsigned char type = GELF_ST_TYPE(info);

	if (shndx == SHN_UNDEF || value == 0 || name == 0)
		return false;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	return type == STT_NOTYPE && shndx < sc->nr_sections &&
	       sc->exec[shndx];
}

/*
 * Map the string table section itself, so the symbol table can keep its
 * names without copying them (see symtab_builder_adopt).  NULL when the
 * section is compressed, out of the file or not NUL-terminated.
 */
static void *map_strings(int fd, Elf_Scn *strscn, size_t *map_len,
			 const char **strs, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	GElf_Shdr sh;
	struct stat st;
	uint64_t base;
	size_t delta;
	void *m;

	if (!gelf_getshdr(strscn, &sh) || sh.sh_type != SHT_STRTAB ||
	    (sh.sh_flags & SHF_COMPRESSED) || sh.sh_size == 0 || page <= 0 ||
	    fstat(fd, &st) != 0 || sh.sh_offset > (uint64_t)st.st_size ||
	    sh.sh_size > (uint64_t)st.st_size - sh.sh_offset)
		return NULL;
	base = sh.sh_offset & ~((uint64_t)page - 1);
	delta = (size_t)(sh.sh_offset - base);
	m = mmap(NULL, delta + sh.sh_size, PROT_READ, MAP_PRIVATE, fd,
		 (off_t)base);
	if (m == MAP_FAILED)
		return NULL;
	if (((const char *)m)[delta + sh.sh_size - 1] != '\0') {
		munmap(m, delta + sh.sh_size);
		return NULL;
	}
	*map_len = delta + sh.sh_size;
	*strs = (const char *)m + delta;
	*len = sh.sh_size;
	return m;
}

static int load_table(Elf *elf, int fd, const struct scan *sc,
		      Elf_Scn *scn, const char *path, struct symtab **syms,
		      struct pipe_err *err)
{
	struct symtab_builder *b = NULL;
	GElf_Shdr sh;
	Elf_Data *d, *strd;
	Elf_Scn *strscn;
	const char *strs;
	size_t n, i, len, map_len = 0;
	void *map = NULL;
	int ret;

	if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
		return 0;
	strscn = elf_getscn(elf, sh.sh_link);
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !strscn)
		return 0;
	if (fd >= 0)
		map = map_strings(fd, strscn, &map_len, &strs, &len);
	if (!map) {
		strd = elf_getdata(strscn, NULL);
		if (!strd || !strd->d_buf)
			return 0;
		strs = strd->d_buf;
		len = strd->d_size;
	}
	n = d->d_size / (gelf_getclass(elf) == ELFCLASS64 ?
				 sizeof(Elf64_Sym) : sizeof(Elf32_Sym));
	ret = symtab_builder_new(&b, strs, len, n / 2, err);
	if (ret < 0) {
		if (map)
			munmap(map, map_len);
		return ret;
	}
	if (map)
		symtab_builder_adopt(b, map, map_len);
	if (gelf_getclass(elf) == ELFCLASS64 && d->d_type == ELF_T_SYM) {
		/* libelf already translated to host layout: walk directly */
		const Elf64_Sym *s = d->d_buf;

		for (i = 0; i < n && ret == 0; i++)
			if (keep_sym(sc, s[i].st_info, s[i].st_shndx,
				     s[i].st_value, s[i].st_name))
				ret = symtab_builder_add(
					b, s[i].st_value, s[i].st_size,
					s[i].st_name, bind_of(s[i].st_info));
	} else {
		for (i = 0; i < n && ret == 0; i++) {
			GElf_Sym s;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			if (keep_sym(sc, s.st_info, s.st_shndx, s.st_value,
				     s.st_name))
				ret = symtab_builder_add(b, s.st_value,
							 s.st_size, s.st_name,
							 bind_of(s.st_info));
		}
	}
	if (ret < 0) {
		pipe_err_set(err, ret, "cannot load symbols of '%s': %s",
			     path, strerror(-ret));
		goto out;
	}
	ret = symtab_builder_finish(b, syms, err);
out:
	symtab_builder_free(b);
	return ret;
}

/* Headers and symbols of an open Elf; fd < 0: names are copied. */
static int read_elf(Elf *elf, int fd, const char *what,
		    enum elfsyms_which which, struct elfsyms_info *info,
		    struct symtab **syms, struct pipe_err *err)
{
	struct scan sc = { 0 };
	Elf_Scn *table = NULL;
	int ret;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return pipe_err_set(err, -EINVAL, "cannot read '%s': %s", what,
				    "not an ELF file");
	read_loads(elf, info);
	ret = scan_sections(elf, info, &sc);
	if (ret < 0) {
		pipe_err_set(err, ret, "cannot read '%s': %s", what,
			     strerror(-ret));
		goto out;
	}
	if (info->build_id_len == 0)
		read_phdr_notes(elf, info);
	if (which == ELFSYMS_SYMTAB || which == ELFSYMS_ANY)
		table = sc.symtab;
	if (!table && (which == ELFSYMS_ANY || which == ELFSYMS_DYNSYM))
		table = sc.dynsym;
	if (table && syms)
		ret = load_table(elf, fd, &sc, table, what, syms, err);
out:
	free(sc.exec);
	return ret;
}

int elfsyms_open(const char *path, int *fd, Elf **elf,
		 struct pipe_err *err)
{
	struct stat st;

	/* a recording names the file: a FIFO there must not hang us */
	*fd = trust_open(path, "cannot open", &st, err);
	if (*fd < 0)
		return *fd;
	elf_version(EV_CURRENT);
	errno = 0;
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf && errno == ENOMEM) {
		/* libelf's own allocation: not "not an ELF file" */
		close(*fd);
		*fd = -1;
		return pipe_err_set(err, -ENOMEM, "cannot read '%s': %s", path,
				    strerror(ENOMEM));
	}
	return 0;
}

int elfsyms_with_file(const char *path, elfsyms_elf_fn fn,
		      struct symtab **out, struct pipe_err *err)
{
	Elf *elf;
	int fd, ret;

	*out = NULL;
	ret = elfsyms_open(path, &fd, &elf, err);
	if (ret < 0)
		return ret;
	ret = fn(elf, path, out, err);
	elf_end(elf);
	close(fd);
	return ret;
}

int elfsyms_read(const char *path, enum elfsyms_which which,
		 struct elfsyms_info *info, struct symtab **syms,
		 struct pipe_err *err)
{
	Elf *elf;
	int fd, ret;

	memset(info, 0, sizeof(*info));
	if (syms)
		*syms = NULL;
	ret = elfsyms_open(path, &fd, &elf, err);
	if (ret < 0)
		return ret;
	ret = read_elf(elf, fd, path, which, info, syms, err);
	elf_end(elf);
	close(fd);
	return ret;
}

int elfsyms_read_mem(void *image, size_t size, const char *what,
		     enum elfsyms_which which, struct elfsyms_info *info,
		     struct symtab **syms, struct pipe_err *err)
{
	Elf *elf;
	int ret;

	memset(info, 0, sizeof(*info));
	if (syms)
		*syms = NULL;
	elf_version(EV_CURRENT);
	elf = elf_memory(image, size);
	ret = read_elf(elf, -1, what, which, info, syms, err);
	elf_end(elf);
	return ret;
}
