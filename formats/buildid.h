/*
 * buildid.h - the GNU build-id of an ELF file (see buildid.c).
 */
#ifndef PIPE_BUILDID_H
#define PIPE_BUILDID_H

#include <stdint.h>

#define BUILDID_MAX 20 /* bytes of a build-id we keep */

/* Read the build-id note of the file at path (untrusted: lengths are
 * checked, notes are read up to 1 MiB).  0 with id (BUILDID_MAX bytes
 * room) and *len set, or -1 (no file, not ELF, no note). */
int buildid_of_file(const char *path, uint8_t *id, uint32_t *len);

#endif
