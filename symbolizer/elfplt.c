/*
 * elfplt.c - PLT stubs as symbols, as perf synthesizes them (see
 * elfplt.h): .plt (or .plt.sec) entries named by their .rela.plt
 * relocations in GOT order, .plt.got entries by the GLOB_DAT relocation
 * of the slot they jump through, IRELATIVE ones by their IFUNC symbol.
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfplt.h"
#include "elfsyms.h"
#include "err.h"
#include "grow.h"
#include "search.h"
#include "symtab.h"

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

/* Append "NAME@plt" (or perf's "offset_0xOFF@plt" when the relocation
 * names nothing) to the stubs' NUL-separated names pn; *at gets its
 * offset.  0 or -ENOMEM. */
static int plt_name(Elf *elf, Elf_Data *syms, size_t strndx, uint32_t idx,
		    uint64_t file_off, const char *known, struct bytebuf *pn,
		    size_t *at)
{
	const char *name = known;
	GElf_Sym sym;
	char *end;
	int n;

	if (bytebuf_reserve(pn, PLT_NAME_MAX) < 0)
		return -ENOMEM;
	end = (char *)pn->p + pn->len;
	if (!name && idx != 0 && syms && gelf_getsym(syms, (int)idx, &sym))
		name = elf_strptr(elf, strndx, sym.st_name);
	if (name && *name)
		n = snprintf(end, PLT_NAME_MAX, "%s@plt", name);
	else
		n = snprintf(end, PLT_NAME_MAX,
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
	size_t name; /* offset into the names */
};

static int plt_add_all(const struct bytebuf *pn, const struct plt_sym *ps,
		       size_t nr, struct symtab **plt, struct pipe_err *err)
{
	struct symtab_builder *b = NULL;
	size_t i;
	int ret;

	ret = symtab_builder_new(&b, (const char *)pn->p, pn->len, nr,
				 err);
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

/* A sorted table of (key, value) pairs, looked up by key. */
struct pairs {
	struct pair {
		uint64_t key;
		uint64_t val;
	} *v;
	size_t nr;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static bool pairs_find(const struct pairs *t, uint64_t key, uint64_t *val)
{
	size_t lo = search_u64(t->v, t->nr, sizeof(*t->v),
			       offsetof(struct pair, key), key,
			       SEARCH_FIRST_NOT_BELOW);

	if (lo == t->nr || t->v[lo].key != key)
		return false;
	*val = t->v[lo].val;
	return true;
}

/*
 * The IFUNC symbols of .symtab and .dynsym by address, the value
 * (string table section << 32 | name offset), so that each IRELATIVE
 * relocation finds its name in O(log n).  0 or -ENOMEM.
 */
static int ifunc_table(Elf *elf, struct pairs *t)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *d;
		GElf_Shdr sh;
		size_t i, nr;

		if (!gelf_getshdr(scn, &sh) || sh.sh_entsize == 0 ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		nr = d ? d->d_size / sh.sh_entsize : 0;
		for (i = 0; i < nr; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) || !sym.st_name ||
			    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
				continue;
			if (grow_array(&t->v, &cap, t->nr + 1, sizeof(*t->v),
				       16, SIZE_MAX) < 0)
				return -ENOMEM;
			t->v[t->nr].key = sym.st_value;
			t->v[t->nr++].val = (uint64_t)sh.sh_link << 32 |
					    sym.st_name;
		}
	}
	if (t->nr)
		qsort(t->v, t->nr, sizeof(*t->v), pair_cmp);
	return 0;
}

/* The name of the IFUNC symbol at `addr` (an IRELATIVE relocation's
 * resolver) from t, borrowed from elf; NULL: none (perf's
 * offset_0xOFF@plt then). */
static const char *ifunc_name(Elf *elf, const struct pairs *t,
			      uint64_t addr)
{
	uint64_t v;
	const char *n;

	if (addr == 0 || !pairs_find(t, addr, &v))
		return NULL;
	n = elf_strptr(elf, (size_t)(v >> 32), (size_t)(v & 0xffffffffu));
	return n && *n ? n : NULL;
}

/* The R_X86_64_GLOB_DAT relocations of .rela.dyn by GOT slot, the value
 * their symbol index.  0 or -ENOMEM. */
static int glob_dat_table(Elf_Data *rd, size_t nr, struct pairs *t)
{
	size_t i;

	t->v = malloc((nr ? nr : 1) * sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		GElf_Rela r;

		if (gelf_getrela(rd, (int)i, &r) &&
		    GELF_R_TYPE(r.r_info) == R_X86_64_GLOB_DAT) {
			t->v[t->nr].key = r.r_offset;
			t->v[t->nr++].val = GELF_R_SYM(r.r_info);
		}
	}
	qsort(t->v, t->nr, sizeof(*t->v), pair_cmp);
	return 0;
}

/*
 * The stubs of .plt.got (x86-64), appended to out: each entry (8 bytes,
 * 16 with IBT) is a `jmp *SLOT(%rip)`, maybe after endbr64 and a bnd
 * prefix, and the GLOB_DAT relocation of SLOT names it, as NAME@plt.
 * Entries that decode otherwise are left out.  0 or -ENOMEM.
 */
static int pltgot_add(Elf *elf, const struct plt_secs *ps,
		      struct bytebuf *pn, struct plt_sym *out,
		      size_t *nr_out, size_t cap)
{
	Elf_Data *code = elf_getdata(ps->got_scn, NULL);
	Elf_Data *rd = elf_getdata(ps->dyn_scn, NULL), *syms = NULL;
	uint64_t entry = ps->got.sh_entsize == 16 ? 16 : 8, off, sym;
	struct pairs slots = { 0 };
	size_t strndx = 0;
	Elf_Scn *symscn;
	GElf_Shdr symsh;
	int ret = 0;

	if (!code || !code->d_buf || !rd || ps->dyn.sh_entsize == 0)
		return 0;
	symscn = elf_getscn(elf, ps->dyn.sh_link);
	if (!symscn || !gelf_getshdr(symscn, &symsh) ||
	    symsh.sh_type != SHT_DYNSYM)
		return 0;
	syms = elf_getdata(symscn, NULL);
	strndx = symsh.sh_link;
	ret = glob_dat_table(rd, rd->d_size / ps->dyn.sh_entsize, &slots);
	for (off = 0; ret == 0 && off + entry <= code->d_size &&
		      *nr_out < cap; off += entry) {
		const uint8_t *p = (const uint8_t *)code->d_buf + off;
		uint64_t k = 0, slot;
		int32_t disp;

		if (memcmp(p, "\xf3\x0f\x1e\xfa", 4) == 0)
			k = 4; /* endbr64 */
		if (p[k] == 0xf2)
			k++;   /* bnd */
		if (k + 6 > entry || p[k] != 0xff || p[k + 1] != 0x25)
			continue;
		memcpy(&disp, p + k + 2, sizeof(disp));
		slot = ps->got.sh_addr + off + k + 6 + (uint64_t)(int64_t)disp;
		if (!pairs_find(&slots, slot, &sym) || sym == 0)
			continue;
		ret = plt_name(elf, syms, strndx, (uint32_t)sym,
			       ps->got.sh_offset + off, NULL, pn,
			       &out[*nr_out].name);
		if (ret < 0)
			break;
		out[*nr_out].addr = ps->got.sh_addr + off;
		out[(*nr_out)++].size = entry;
	}
	free(slots.v);
	return ret;
}

static int plt_build(Elf *elf, const struct plt_secs *ps, const char *path,
		     struct symtab **plt, struct pipe_err *err)
{
	const GElf_Shdr *area = ps->has_sec ? &ps->sec : &ps->plt;
	struct bytebuf pn = { 0 };
	struct plt_sym *out = NULL;
	struct plt_rel *rels = NULL;
	uint64_t header = 0, entry = 0, start;
	size_t i, nr_out = 0, strndx = 0;
	Elf_Data *syms = NULL;
	Elf_Scn *symscn;
	GElf_Shdr symsh;
	struct pairs ifuncs = { 0 };
	Elf_Data *got;
	GElf_Ehdr eh;
	size_t nr_got = 0;
	bool with_plt;
	long nr = 0;
	int ret = 0;

	if (!gelf_getehdr(elf, &eh))
		return 0;
	with_plt = ps->has_plt && ps->rel_scn && ps->plt.sh_size > 0 &&
		   plt_sizes(eh.e_machine, area, &header, &entry);
	/* entries as the file holds them (a section header may lie) */
	got = eh.e_machine == EM_X86_64 && ps->got_scn && ps->dyn_scn ?
		      elf_getdata(ps->got_scn, NULL) : NULL;
	nr_got = got ? got->d_size / 8 : 0;
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
	/* the IFUNC symbols, once, when an IRELATIVE stub needs them */
	for (i = 0; i < (size_t)nr; i++)
		if (rels[i].sym == 0 && rels[i].ifunc)
			break;
	if (i < (size_t)nr)
		ret = ifunc_table(elf, &ifuncs);
	if (ret < 0)
		goto out;
	start = area->sh_addr;
	/* a lazy .plt starts with a header, unless it holds exactly one
	 * stub per relocation (bound at load time) */
	if (!ps->has_sec && (uint64_t)nr * entry != ps->plt.sh_size)
		start += header;
	if (ps->has_sec || start != ps->plt.sh_addr) {
		ret = plt_name(elf, NULL, 0, 0, 0, NULL, &pn, &out[0].name);
		if (ret < 0)
			goto out;
		memcpy(pn.p + out[0].name, ".plt", 5);
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
			       rels[i].sym ? NULL : ifunc_name(elf, &ifuncs,
							       rels[i].ifunc),
			       &pn, &out[nr_out].name);
		if (ret < 0)
			goto out;
		out[nr_out].addr = addr;
		out[nr_out++].size = entry;
	}
got:
	if (nr_got > 0) {
		ret = pltgot_add(elf, ps, &pn, out, &nr_out,
				 nr_out + nr_got);
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
	free(ifuncs.v);
	free(pn.p);
	free(out);
	free(rels);
	return ret;
}

int elfplt_read_elf(Elf *elf, const char *path, struct symtab **plt,
		    struct pipe_err *err)
{
	struct plt_secs ps = { 0 };

	*plt = NULL;
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return 0;
	plt_find(elf, &ps);
	return plt_build(elf, &ps, path, plt, err);
}

int elfplt_read(const char *path, struct symtab **plt,
		struct pipe_err *err)
{
	return elfsyms_with_file(path, elfplt_read_elf, plt, err);
}
