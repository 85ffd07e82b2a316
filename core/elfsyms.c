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

/* Open `path` read-only and begin reading it as ELF (*elf may be NULL
 * when it is not one); the caller ends *elf and closes *fd. */
static int open_elf(const char *path, int *fd, Elf **elf,
		    struct pipe_err *err)
{
	struct stat st;

	/* a recording names the file: a FIFO there must not hang us */
	*fd = trust_open(path, "cannot open", &st, err);
	if (*fd < 0)
		return *fd;
	elf_version(EV_CURRENT);
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	return 0;
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
	ret = open_elf(path, &fd, &elf, err);
	if (ret < 0)
		return ret;
	ret = read_elf(elf, fd, path, which, info, syms, err);
	elf_end(elf);
	close(fd);
	return ret;
}

/* ---- PLT stubs ---------------------------------------------------------- */

/* Longest stub name kept ("NAME@plt"), as perf's buffer. */
#define PLT_NAME_MAX 1024

struct plt_secs {
	GElf_Shdr plt;       /* .plt */
	GElf_Shdr sec;       /* .plt.sec (x86 with IBT): the called stubs */
	GElf_Shdr rel;       /* .rela.plt or .rel.plt */
	Elf_Scn *rel_scn;    /* NULL: none */
	GElf_Shdr got;       /* .plt.got (x86): stubs through GLOB_DAT slots */
	Elf_Scn *got_scn;    /* NULL: none */
	GElf_Shdr dyn;       /* .rela.dyn */
	Elf_Scn *dyn_scn;    /* NULL: none */
	bool has_plt;
	bool has_sec;
};

struct plt_rel {
	uint64_t got;    /* r_offset: the GOT slot, in stub order */
	uint64_t ifunc;  /* IRELATIVE (RELA): the resolver's address, else 0 */
	uint32_t sym;    /* index into the linked symbol table */
	uint32_t pad;
};

/* Header and entry sizes of a PLT section, per machine (as perf). */
static bool plt_sizes(unsigned machine, const GElf_Shdr *sh,
		      uint64_t *header, uint64_t *entry)
{
	switch (machine) {
	case EM_ARM:
		*header = 20;
		*entry = 12;
		break;
	case EM_AARCH64:
		*header = 32;
		*entry = 16;
		break;
	case EM_386:
	case EM_X86_64:
		*entry = sh->sh_entsize;
		if (*entry != 8 && *entry != 16)
			*entry = sh->sh_addralign == 8 ? 8 : 16;
		*header = *entry;
		break;
	default:
		*header = sh->sh_entsize;
		*entry = sh->sh_entsize;
		break;
	}
	return *entry != 0;
}

static void plt_find(Elf *elf, struct plt_secs *ps)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".plt") == 0) {
			ps->plt = sh;
			ps->has_plt = true;
		} else if (strcmp(name, ".plt.sec") == 0) {
			ps->sec = sh;
			ps->has_sec = true;
		} else if (strcmp(name, ".plt.got") == 0) {
			ps->got = sh;
			ps->got_scn = scn;
		} else if (strcmp(name, ".rela.dyn") == 0 &&
			   sh.sh_type == SHT_RELA) {
			ps->dyn = sh;
			ps->dyn_scn = scn;
		} else if ((strcmp(name, ".rela.plt") == 0 &&
			    sh.sh_type == SHT_RELA) ||
			   (strcmp(name, ".rel.plt") == 0 &&
			    sh.sh_type == SHT_REL && !ps->rel_scn)) {
			ps->rel = sh;
			ps->rel_scn = scn;
		}
	}
}

static int cmp_rel(const void *a, const void *b)
{
	const struct plt_rel *x = a, *y = b;

	if (x->got != y->got)
		return x->got < y->got ? -1 : 1;
	return 0;
}

static bool is_irelative(uint64_t info)
{
	/* the x86-64 and i386 numbers (perf names these stubs on x86) */
	return GELF_R_TYPE(info) == R_X86_64_IRELATIVE ||
	       GELF_R_TYPE(info) == R_386_IRELATIVE;
}

/*
 * The relocations, at most `max`, sorted by GOT slot (x86 puts IFUNC
 * relocations out of stub order), into *out (owned by the caller).
 * Returns the count, or -ENOMEM.
 */
static long plt_rels(const struct plt_secs *ps, uint64_t max,
		     struct plt_rel **out)
{
	Elf_Data *d = elf_getdata(ps->rel_scn, NULL);
	bool rela = ps->rel.sh_type == SHT_RELA;
	struct plt_rel *r;
	size_t i, nr, n = 0;

	*out = NULL;
	if (!d || !d->d_buf || ps->rel.sh_entsize == 0)
		return 0;
	nr = d->d_size / ps->rel.sh_entsize;
	if (nr > max)
		nr = (size_t)max;
	r = malloc((nr ? nr : 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		GElf_Rela ra;
		GElf_Rel rl;

		if (rela && gelf_getrela(d, (int)i, &ra)) {
			r[n].got = ra.r_offset;
			r[n].ifunc = is_irelative(ra.r_info) ?
					     (uint64_t)ra.r_addend : 0;
			r[n++].sym = (uint32_t)GELF_R_SYM(ra.r_info);
		} else if (!rela && gelf_getrel(d, (int)i, &rl)) {
			r[n].got = rl.r_offset;
			r[n].ifunc = 0;
			r[n++].sym = (uint32_t)GELF_R_SYM(rl.r_info);
		}
	}
	qsort(r, n, sizeof(*r), cmp_rel);
	*out = r;
	return (long)n;
}

struct plt_names {
	char *buf;   /* NUL-separated names */
	size_t len;  /* bytes used */
	size_t cap;  /* bytes allocated */
};

/* Append "NAME@plt" (or perf's "offset_0xOFF@plt" when the relocation
 * names nothing); *at gets its offset.  0 or -ENOMEM. */
static int plt_name(Elf *elf, Elf_Data *syms, size_t strndx, uint32_t idx,
		    uint64_t file_off, const char *known, struct plt_names *pn,
		    size_t *at)
{
	const char *name = known;
	GElf_Sym sym;
	int n;

	if (pn->cap - pn->len < PLT_NAME_MAX) {
		size_t cap = pn->cap * 2 + PLT_NAME_MAX;
		char *b = realloc(pn->buf, cap);

		if (!b)
			return -ENOMEM;
		pn->buf = b;
		pn->cap = cap;
	}
	if (!name && idx != 0 && syms && gelf_getsym(syms, (int)idx, &sym))
		name = elf_strptr(elf, strndx, sym.st_name);
	if (name && *name)
		n = snprintf(pn->buf + pn->len, PLT_NAME_MAX, "%s@plt", name);
	else
		n = snprintf(pn->buf + pn->len, PLT_NAME_MAX,
			     "offset_%#" PRIx64 "@plt", file_off);
	if (n < 0)
		n = 0;
	if (n >= PLT_NAME_MAX)
		n = PLT_NAME_MAX - 1;
	*at = pn->len;
	pn->len += (size_t)n + 1;
	return 0;
}

/* One synthesized symbol before the builder exists (names may move). */
struct plt_sym {
	uint64_t addr;
	uint64_t size;
	size_t name; /* offset into plt_names */
};

static int plt_add_all(const struct plt_names *pn, const struct plt_sym *ps,
		       size_t nr, struct symtab **plt, struct pipe_err *err)
{
	struct symtab_builder *b = NULL;
	size_t i;
	int ret;

	ret = symtab_builder_new(&b, pn->buf, pn->len, nr, err);
	if (ret < 0)
		return ret;
	for (i = 0; i < nr && ret == 0; i++)
		ret = symtab_builder_add(b, ps[i].addr, ps[i].size,
					 (uint32_t)ps[i].name, SYMTAB_GLOBAL);
	if (ret == 0)
		ret = symtab_builder_finish(b, plt, err);
	else
		pipe_err_set(err, ret, "cannot allocate symbols");
	symtab_builder_free(b);
	return ret;
}

/*
 * The name of the IFUNC symbol at `addr` (the resolver an IRELATIVE
 * relocation calls), from .symtab, else .dynsym; NULL when none (the stub
 * keeps perf's offset_0xOFF@plt).  Borrowed from elf.
 */
static const char *ifunc_name(Elf *elf, uint64_t addr)
{
	static const uint32_t types[2] = { SHT_SYMTAB, SHT_DYNSYM };
	size_t t;

	if (addr == 0)
		return NULL;
	for (t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			Elf_Data *d;
			GElf_Shdr sh;
			size_t i, nr;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t] ||
			    sh.sh_entsize == 0)
				continue;
			d = elf_getdata(scn, NULL);
			nr = d ? d->d_size / sh.sh_entsize : 0;
			for (i = 0; i < nr; i++) {
				GElf_Sym sym;
				const char *n;

				if (!gelf_getsym(d, (int)i, &sym) ||
				    sym.st_value != addr ||
				    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
					continue;
				n = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (n && *n)
					return n;
			}
		}
	}
	return NULL;
}

/* The index of the dynamic symbol whose R_X86_64_GLOB_DAT relocation
 * fills GOT slot `slot`; 0: none. */
static uint32_t glob_dat_sym(Elf_Data *rd, size_t nr, uint64_t slot)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		GElf_Rela r;

		if (gelf_getrela(rd, (int)i, &r) && r.r_offset == slot &&
		    GELF_R_TYPE(r.r_info) == R_X86_64_GLOB_DAT)
			return (uint32_t)GELF_R_SYM(r.r_info);
	}
	return 0;
}

/*
 * The stubs of .plt.got (x86-64), appended to out: each entry (8 bytes,
 * 16 with IBT) is a `jmp *SLOT(%rip)`, maybe after endbr64 and a bnd
 * prefix, and the GLOB_DAT relocation of SLOT names it, as NAME@plt.
 * Entries that decode otherwise are left out.  0 or -ENOMEM.
 */
static int pltgot_add(Elf *elf, const struct plt_secs *ps,
		      struct plt_names *pn, struct plt_sym *out,
		      size_t *nr_out)
{
	Elf_Data *code = elf_getdata(ps->got_scn, NULL);
	Elf_Data *rd = elf_getdata(ps->dyn_scn, NULL), *syms = NULL;
	uint64_t entry = ps->got.sh_entsize == 16 ? 16 : 8, off;
	size_t nr_rel, strndx = 0;
	Elf_Scn *symscn;
	GElf_Shdr symsh;
	int ret;

	if (!code || !code->d_buf || !rd || ps->dyn.sh_entsize == 0)
		return 0;
	nr_rel = rd->d_size / ps->dyn.sh_entsize;
	symscn = elf_getscn(elf, ps->dyn.sh_link);
	if (!symscn || !gelf_getshdr(symscn, &symsh) ||
	    symsh.sh_type != SHT_DYNSYM)
		return 0;
	syms = elf_getdata(symscn, NULL);
	strndx = symsh.sh_link;
	for (off = 0; off + entry <= code->d_size; off += entry) {
		const uint8_t *p = (const uint8_t *)code->d_buf + off;
		uint64_t k = 0, slot;
		uint32_t sym;
		int32_t disp;

		if (memcmp(p, "\xf3\x0f\x1e\xfa", 4) == 0)
			k = 4; /* endbr64 */
		if (p[k] == 0xf2)
			k++;   /* bnd */
		if (k + 6 > entry || p[k] != 0xff || p[k + 1] != 0x25)
			continue;
		memcpy(&disp, p + k + 2, sizeof(disp));
		slot = ps->got.sh_addr + off + k + 6 + (uint64_t)(int64_t)disp;
		sym = glob_dat_sym(rd, nr_rel, slot);
		if (sym == 0)
			continue;
		ret = plt_name(elf, syms, strndx, sym, ps->got.sh_offset + off,
			       NULL, pn, &out[*nr_out].name);
		if (ret < 0)
			return ret;
		out[*nr_out].addr = ps->got.sh_addr + off;
		out[(*nr_out)++].size = entry;
	}
	return 0;
}

static int plt_build(Elf *elf, const struct plt_secs *ps, const char *path,
		     struct symtab **plt, struct pipe_err *err)
{
	const GElf_Shdr *area = ps->has_sec ? &ps->sec : &ps->plt;
	struct plt_names pn = { 0 };
	struct plt_sym *out = NULL;
	struct plt_rel *rels = NULL;
	uint64_t header = 0, entry = 0, start;
	size_t i, nr_out = 0, strndx = 0;
	Elf_Data *syms = NULL;
	Elf_Scn *symscn;
	GElf_Shdr symsh;
	GElf_Ehdr eh;
	size_t nr_got = 0;
	bool with_plt;
	long nr = 0;
	int ret = 0;

	if (!gelf_getehdr(elf, &eh))
		return 0;
	with_plt = ps->has_plt && ps->rel_scn && ps->plt.sh_size > 0 &&
		   plt_sizes(eh.e_machine, area, &header, &entry);
	if (eh.e_machine == EM_X86_64 && ps->got_scn && ps->dyn_scn)
		nr_got = ps->got.sh_size / 8;
	if (!with_plt && nr_got == 0)
		return 0;
	symscn = with_plt ? elf_getscn(elf, ps->rel.sh_link) : NULL;
	if (symscn && gelf_getshdr(symscn, &symsh) &&
	    (symsh.sh_type == SHT_DYNSYM || symsh.sh_type == SHT_SYMTAB)) {
		syms = elf_getdata(symscn, NULL);
		strndx = symsh.sh_link;
	}
	if (with_plt)
		nr = plt_rels(ps, area->sh_size / entry, &rels);
	out = malloc(((size_t)(nr > 0 ? nr : 0) + 1 + nr_got) * sizeof(*out));
	if (nr < 0 || !out) {
		ret = -ENOMEM;
		goto out;
	}
	if (!with_plt)
		goto got;
	start = area->sh_addr;
	/* a lazy .plt starts with a header, unless it holds exactly one
	 * stub per relocation (bound at load time) */
	if (!ps->has_sec && (uint64_t)nr * entry != ps->plt.sh_size)
		start += header;
	if (ps->has_sec || start != ps->plt.sh_addr) {
		ret = plt_name(elf, NULL, 0, 0, 0, NULL, &pn, &out[0].name);
		if (ret < 0)
			goto out;
		memcpy(pn.buf + out[0].name, ".plt", 5);
		out[0].addr = ps->plt.sh_addr;
		out[0].size = ps->has_sec ? ps->plt.sh_size : header;
		nr_out = 1;
	}
	for (i = 0; i < (size_t)nr; i++) {
		uint64_t addr = start + i * entry;

		if (addr - area->sh_addr + entry > area->sh_size)
			break;
		ret = plt_name(elf, syms, strndx, rels[i].sym,
			       area->sh_offset + (addr - area->sh_addr),
			       rels[i].sym ? NULL : ifunc_name(elf,
							       rels[i].ifunc),
			       &pn, &out[nr_out].name);
		if (ret < 0)
			goto out;
		out[nr_out].addr = addr;
		out[nr_out++].size = entry;
	}
got:
	if (nr_got > 0) {
		ret = pltgot_add(elf, ps, &pn, out, &nr_out);
		if (ret < 0)
			goto out;
	}
	if (nr_out == 0)
		goto out;
	ret = plt_add_all(&pn, out, nr_out, plt, err);
	if (ret < 0)
		goto out_quiet;
out:
	if (ret < 0)
		pipe_err_set(err, ret, "cannot load PLT of '%s': %s", path,
			     strerror(-ret));
out_quiet:
	free(pn.buf);
	free(out);
	free(rels);
	return ret;
}

int elfsyms_read_plt(const char *path, struct symtab **plt,
		     struct pipe_err *err)
{
	struct plt_secs ps = { 0 };
	Elf *elf;
	int fd, ret;

	*plt = NULL;
	ret = open_elf(path, &fd, &elf, err);
	if (ret < 0)
		return ret;
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		plt_find(elf, &ps);
		ret = plt_build(elf, &ps, path, plt, err);
	}
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
