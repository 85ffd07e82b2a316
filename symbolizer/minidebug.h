/*
 * minidebug.h - MiniDebugInfo: the `.gnu_debugdata` section some
 * distributions (Fedora, RHEL) leave in stripped binaries, an
 * xz-compressed ELF whose .symtab names the functions .dynsym lacks.
 */
#ifndef PIPE_MINIDEBUG_H
#define PIPE_MINIDEBUG_H

struct Elf;
struct pipe_err;
struct symtab;

/* Compressed and inflated sizes pipe accepts (a libc's is ~0.1 MB). */
#define MINIDEBUG_PACKED_MAX (64u << 20)
#define MINIDEBUG_IMAGE_MAX (256u << 20)

/*
 * The function symbols of the ELF inside `path`'s .gnu_debugdata into
 * *syms (owned by the caller, symtab_free; NULL when the file has no
 * such section).  Returns 0, or a negative errno with err set (a section
 * that does not inflate within the limits, or is no ELF, is -EINVAL).
 */
int minidebug_read(const char *path, struct symtab **syms,
		   struct pipe_err *err);

/* The same for an ELF already open (the file's name only for messages). */
int minidebug_read_elf(struct Elf *elf, const char *path,
		       struct symtab **syms, struct pipe_err *err);

#endif
