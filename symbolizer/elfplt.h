/*
 * elfplt.h - the PLT stubs of an ELF file as symbols named "NAME@plt",
 * as perf synthesizes them, so samples in stubs name the function called.
 */
#ifndef PIPE_ELFPLT_H
#define PIPE_ELFPLT_H

struct Elf;
struct pipe_err;
struct symtab;

/*
 * The PLT stubs of `path` into *plt (owned by the caller, symtab_free;
 * NULL when the file has none: debug files keep none): one per
 * .rela.plt (or .rel.plt) entry in GOT-slot order, laid over .plt.sec
 * when there is one, else over .plt after its header, which is named
 * ".plt"; an IRELATIVE entry is named after the IFUNC symbol at its
 * resolver's address, else "offset_0xOFF@plt"; on x86-64 also the
 * .plt.got entries, by the GLOB_DAT relocation of the slot each jumps
 * through.  Returns 0 or negative errno with err set.
 */
int elfplt_read(const char *path, struct symtab **plt, struct pipe_err *err);

/* The same for an ELF already open (the file's name only for messages). */
int elfplt_read_elf(struct Elf *elf, const char *path, struct symtab **plt,
		    struct pipe_err *err);

#endif
