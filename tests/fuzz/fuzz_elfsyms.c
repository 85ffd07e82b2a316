/*
 * fuzz_elfsyms.c - ELF symbol loading (the files a recording names are
 * untrusted): headers, PT_LOAD segments, build-id notes, debuglink and
 * the function symbols of .symtab or .dynsym, from a fuzzed ELF image;
 * and from the same image the PLT stubs' names (relocations, .plt,
 * .plt.sec, .plt.got) and the MiniDebugInfo (.gnu_debugdata: xz, then an
 * ELF of its own).
 */
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "elfplt.h"
#include "elfsyms.h"
#include "err.h"
#include "fuzz.h"
#include "minidebug.h"
#include "symtab.h"

/* look up what was loaded, then free it */
static void walk(struct symtab *syms)
{
	uint32_t i, idx;

	for (i = 0; syms && i < symtab_count(syms) && i < 64; i++) {
		symtab_display_name(syms, i, true);
		if (symtab_find(syms, symtab_start(syms, i), &idx))
			symtab_name(syms, idx);
	}
	symtab_free(syms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum elfsyms_which which[] = {
		ELFSYMS_NONE, ELFSYMS_SYMTAB, ELFSYMS_ANY, ELFSYMS_DYNSYM,
	};
	struct elfsyms_info info;
	struct symtab *syms = NULL;
	struct pipe_err err;
	uint8_t id[ELFSYMS_BUILD_ID_MAX];
	uint64_t vaddr;
	void *image;
	Elf *elf;
	char hex[2 * ELFSYMS_BUILD_ID_MAX + 1];

	if (size == 0)
		return 0;
	/* libelf may write to the image it is given: a private copy */
	image = malloc(size);
	if (!image)
		return 0;
	memcpy(image, data, size);
	if (elfsyms_read_mem(image, size, "fuzz.elf", which[size % 4], &info,
			     &syms, &err) == 0) {
		elfsyms_vaddr(&info, 0x1000, &vaddr);
		elfsyms_hex(info.build_id, info.build_id_len, hex);
		walk(syms);
	}
	elfsyms_notes_build_id(data, size, id);
	memcpy(image, data, size);
	elf = elf_memory(image, size);
	if (elfplt_read_elf(elf, "fuzz.elf", &syms, &err) == 0)
		walk(syms);
	if (minidebug_read_elf(elf, "fuzz.elf", &syms, &err) == 0)
		walk(syms);
	elf_end(elf);
	free(image);
	return 0;
}
