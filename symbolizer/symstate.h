/*
 * symstate.h - the symbolizer's state, shared by its two files:
 * symbolizer.c (the binaries seen, state records applied, addresses
 * resolved, source lines, unwinding) and symload.c (a binary's symbols
 * found and loaded: kallsyms, perf maps, ELF files and their debug files).
 * Nothing outside symbolizer.c and symload.c includes it.
 */
#ifndef PIPE_SYMSTATE_H
#define PIPE_SYMSTATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "elfsyms.h"
#include "itab.h"
#include "symbolizer.h"
#include "unwind.h"

#define DELETED_SUFFIX " (deleted)"
#define KERNEL_DSO "[kernel.kallsyms]"
#define KERNEL_MIN_ADDR UINT64_C(0xffff800000000000)
#define SYSTEM_DEBUG_ROOT "/usr/lib/debug"
#define MAX_MODULES 1024
/* Kernel entries kept ahead of unwound user frames in a joined chain. */
#define CHAIN_KERNEL_MAX 512
/* what sym_oom says the output loses when state or symbols are not kept */
#define UNKNOWN_LATER "later samples may show [unknown]"
#define CHAIN_MAX (CHAIN_KERNEL_MAX + 1 + UNWIND_MAX_FRAMES)

enum dso_kind {
	DSO_ELF = 0,      /* a file with ELF symbols */
	DSO_ANON = 1,     /* anonymous memory: JIT code via perf-PID.map */
	DSO_SPECIAL = 2,  /* [vdso], [stack], ...: no symbols */
	DSO_KERNEL = 3,   /* kallsyms */
	DSO_PERFMAP = 4,  /* /tmp/perf-PID.map itself */
};

struct dso {
	uint64_t hash;                   /* of name and build-id: dso_tab */
	char *name;                      /* as recorded, maybe "(deleted)" */
	const char *short_name;          /* basename of name */
	char *path;                      /* file to open ("(deleted)" cut) */
	uint8_t build_id[ELFSYMS_BUILD_ID_MAX]; /* recorded, if any */
	uint32_t build_id_len;           /* 0: none recorded */
	uint32_t kind;                   /* enum dso_kind */
	uint32_t flags;                  /* PIPE_SYM_DELETED, _MISMATCH */
	bool loaded;                     /* symbols looked for (once) */
	bool debug_only;                 /* info from a debug file */
	uint32_t map_pid;                /* first map of it: process, */
	uint64_t map_start, map_end;     /* and range (for map_files) */
	struct elfsyms_info info;        /* PT_LOADs of the file used */
	struct symtab *syms;             /* NULL: none found */
	struct symtab *plt;              /* NAME@plt stubs, or NULL */
	struct symtab *mini;             /* .gnu_debugdata's, or NULL */
	char *debug_path;                /* the debug file found, or NULL */
	struct srcline *src;             /* its DWARF lines, or NULL */
	bool src_tried;                  /* src looked for (once) */
};

/* A kernel module's text, from the kallsyms lines tagged [NAME]. */
struct kmod {
	struct dso *dso; /* "[NAME]" */
	uint64_t lo;     /* first symbol start (kallsyms addresses) */
	uint64_t hi;     /* last symbol start */
};

struct symbolizer {
	struct symbolizer_opts opts;     /* strings copied below */
	char *debug_dir;                 /* owned copy of opts.debug_dir */
	char *kallsyms;                  /* owned copy of opts.kallsyms */
	const struct meta *meta;         /* borrowed */
	struct threads *threads;         /* process state */
	struct dso **dsos;               /* every binary seen, owned */
	size_t nr_dsos, cap_dsos;
	struct itab dso_tab;             /* dsos by name and build-id */
	struct dso kernel;               /* [kernel.kallsyms] */
	struct kmod *mods;               /* kernel modules, by first seen */
	uint32_t nr_mods;
	uint64_t kernel_shift;           /* recorded _text - current _text */
	uint64_t nr_malformed;           /* sideband records ignored */
	bool oom_said;                   /* sym_oom warned once */
	bool kernel_checked;             /* kernel_differs is known */
	bool kernel_differs;             /* recorded kernel is another */
	char kernel_id[2 * ELFSYMS_BUILD_ID_MAX + 1]; /* running kernel's */
	struct unwind *unwind;           /* NULL until a stack is unwound */
	char found_debug[PATH_MAX];      /* the last debug file try_debug took */
	struct dbgfetch *fetch;          /* debuginfod client, or NULL */
	bool fetch_tried;                /* fetch made (or not) once */
	uint64_t chain[CHAIN_MAX];       /* the last joined call chain */
};

/* symbolizer.c */
/* A warning through opts.warn (nothing when there is none). */
void sym_warn(struct symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Running out of memory, said once for the run: "cannot WHAT: Cannot
 * allocate memory: THEN" (what the first failure could not do, and what
 * the output loses; later failures are likely and say nothing new). */
void sym_oom(struct symbolizer *s, const char *then, const char *what_fmt,
	     ...) __attribute__((format(printf, 3, 4)));

/* The dso of (name, build-id), created on first sight; NULL on ENOMEM. */
struct dso *sym_dso_get(struct symbolizer *s, const char *name,
			const uint8_t *id, uint32_t id_len);

/* symload.c */
/*
 * [vdso]: the kernel maps the same image into every process, so this
 * process's copy names the recorded one when the kernel is the same.
 */
void sym_load_vdso(struct symbolizer *s, struct dso *d);

/*
 * The kernel's symbols from kallsyms (opts.kallsyms, or the running
 * kernel's through the cache) into s->kernel, once; kernel_shift set from
 * the recorded _text.  Failures are warnings.
 */
void sym_load_kernel(struct symbolizer *s);

/* A perf-PID.map's symbols into d, once; a map owned by another user
 * (not root) is ignored with a warning. */
void sym_load_perfmap(struct symbolizer *s, struct dso *d);

/*
 * The debug file of `path` by build-id under the debug roots, then by
 * debuglink `link` beside it, in .debug/ and under the roots (as gdb
 * looks); true with *info and *syms (owned by the caller) filled.
 */
bool sym_find_debug(struct symbolizer *s, const char *path,
		    const uint8_t *id, uint32_t id_len, const char *link,
		    struct elfsyms_info *info, struct symtab **syms);

/*
 * The debug file of build-id `id` from a debuginfod server (or the
 * client's cache), when debuginfod is on and DEBUGINFOD_URLS is set.
 */
bool sym_fetch_debug(struct symbolizer *s, const uint8_t *id,
		     uint32_t id_len, struct elfsyms_info *info,
		     struct symtab **syms);

/*
 * An ELF binary's symbols into d, once: the file's own or its debug
 * file's, its PLT stubs, MiniDebugInfo for a stripped file; when the file
 * is gone or another build, those of the recorded build-id's debug file;
 * a build-id that differs from the recorded one is flagged and warned.
 */
void sym_load_elf(struct symbolizer *s, struct dso *d);

#endif
