/*
 * elfsyms.h - what the symbolizer needs from an ELF file, through libelf:
 * its PT_LOAD segments (file offset -> address), GNU build-id, debuglink,
 * and its function symbols (.symtab, else .dynsym) as a struct symtab.
 */
#ifndef PIPE_ELFSYMS_H
#define PIPE_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

struct pipe_err;
struct symtab;

#define ELFSYMS_BUILD_ID_MAX 20
#define ELFSYMS_MAX_LOADS 16

struct elfsyms_load {
	uint64_t offset; /* p_offset */
	uint64_t vaddr;  /* p_vaddr */
	uint64_t filesz; /* p_filesz */
	uint32_t flags;  /* p_flags (PF_X, PF_W, PF_R) */
	uint32_t pad;
};

struct elfsyms_info {
	struct elfsyms_load loads[ELFSYMS_MAX_LOADS]; /* PT_LOAD, file order */
	uint32_t nr_loads;
	uint8_t build_id[ELFSYMS_BUILD_ID_MAX];      /* NT_GNU_BUILD_ID */
	uint32_t build_id_len;                       /* 0: none */
	char debuglink[256];                         /* .gnu_debuglink or "" */
	bool has_symtab;                             /* a .symtab with names */
	bool has_dynsym;                             /* a .dynsym */
};

enum elfsyms_which {
	ELFSYMS_NONE = 0,    /* headers only */
	ELFSYMS_SYMTAB = 1,  /* .symtab only (debug files) */
	ELFSYMS_ANY = 2,     /* .symtab, else .dynsym */
	ELFSYMS_DYNSYM = 3,  /* .dynsym only */
};

/*
 * Read `path`'s headers into *info and, unless `which` is NONE, its
 * function symbols (STT_FUNC, STT_GNU_IFUNC, and STT_NOTYPE in executable
 * sections) into *syms (owned by the caller; NULL when the table asked
 * for is absent).  Returns 0, or negative errno with err set.
 */
int elfsyms_read(const char *path, enum elfsyms_which which,
		 struct elfsyms_info *info, struct symtab **syms,
		 struct pipe_err *err);

/* The same for an ELF image in memory (image is borrowed for the call;
 * names are copied); `what` names it in messages. */
int elfsyms_read_mem(void *image, size_t size, const char *what,
		     enum elfsyms_which which, struct elfsyms_info *info,
		     struct symtab **syms, struct pipe_err *err);

/*
 * Open `path` read-only (trust_open: never hangs on a FIFO) and begin
 * reading it as ELF: *elf may be NULL when it is not one.  The caller
 * ends *elf (elf_end) and closes *fd.  0 or negative errno with err set.
 */
int elfsyms_open(const char *path, int *fd, Elf **elf,
		 struct pipe_err *err);

/* A table read from an open ELF (the file's name only for messages). */
typedef int (*elfsyms_elf_fn)(Elf *elf, const char *path,
			      struct symtab **out, struct pipe_err *err);
/* Open `path` as elfsyms_open does and run fn on it: fn's result, *out
 * NULL when the file could not be opened. */
int elfsyms_with_file(const char *path, elfsyms_elf_fn fn,
		      struct symtab **out, struct pipe_err *err);

/*
 * Address in the file's space of a file offset, by the PT_LOAD holding
 * it: vaddr = off - p_offset + p_vaddr.  false when no segment holds it.
 */
bool elfsyms_vaddr(const struct elfsyms_info *info, uint64_t off,
		   uint64_t *vaddr);

/* Build-id as lowercase hex into buf (2 * len + 1 bytes). */
void elfsyms_hex(const uint8_t *id, uint32_t len, char *buf);

/* The build-id in an ELF notes blob (as /sys/kernel/notes); returns its
 * length (0 if none) and copies at most ELFSYMS_BUILD_ID_MAX bytes. */
uint32_t elfsyms_notes_build_id(const void *notes, size_t len,
				uint8_t *id);

#endif
