/*
 * buildid.c - the GNU build-id of an ELF file, from its PT_NOTE segments
 * (64-bit little-endian ELF, what this machine runs).  Shared by the sinks
 * that name binaries: perf.data's build-id table, pprof's mappings.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildid.h"

/* Find the GNU build-id note in buf (a PT_NOTE segment's bytes). */
static int note_build_id(const uint8_t *buf, size_t len, uint8_t *id,
			 uint32_t *id_len)
{
	size_t off = 0;
	uint32_t namesz, descsz, type;

	while (off + 12 <= len) {
		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		off += 12;
		if (namesz > len - off ||
		    ((namesz + 3) & ~3u) > len - off)
			return -1;
		if (type == 3 && namesz == 4 && !memcmp(buf + off, "GNU", 4) &&
		    descsz > 0 && descsz <= BUILDID_MAX &&
		    off + 4 + descsz <= len) {
			memcpy(id, buf + off + 4, descsz);
			*id_len = descsz;
			return 0;
		}
		off += (namesz + 3) & ~3u;
		if (((descsz + 3) & ~3u) > len - off)
			return -1;
		off += (descsz + 3) & ~3u;
	}
	return -1;
}

int buildid_of_file(const char *path, uint8_t *id, uint32_t *len)
{
	uint8_t eh[64], ph[56], *note;
	uint64_t phoff, off, size;
	uint16_t phentsize, phnum, i;
	uint32_t type;
	int fd, ret = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* 64-bit little-endian ELF only: what this machine runs */
	if (pread(fd, eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh, "\177ELF\2\1", 6))
		goto out;
	memcpy(&phoff, eh + 32, 8);
	memcpy(&phentsize, eh + 54, 2);
	memcpy(&phnum, eh + 56, 2);
	if (phentsize < sizeof(ph) || phnum > 512)
		goto out;
	for (i = 0; i < phnum && ret < 0; i++) {
		if (pread(fd, ph, sizeof(ph), (off_t)(phoff + (uint64_t)i *
						     phentsize)) !=
		    (ssize_t)sizeof(ph))
			goto out;
		memcpy(&type, ph, 4);
		memcpy(&off, ph + 8, 8);
		memcpy(&size, ph + 32, 8);
		if (type != 4 /* PT_NOTE */ || size > (1u << 20) || !size)
			continue;
		note = malloc(size);
		if (!note)
			goto out;
		if (pread(fd, note, size, (off_t)off) == (ssize_t)size)
			ret = note_build_id(note, size, id, len);
		free(note);
	}
out:
	close(fd);
	return ret;
}
