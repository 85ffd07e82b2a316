/*
 * rnd.h - the tests' reproducible pseudo-random numbers: each generator
 * advances the caller's state and returns it, the same sequence from the
 * same seed on every run, so a failure repeats.
 */
#ifndef PIPE_TEST_RND_H
#define PIPE_TEST_RND_H

#include <stdint.h>

/* The C standard's example rand() step; its high bits are the good ones. */
static inline uint32_t rnd_lcg32(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	return *x;
}

/* Knuth's MMIX step; its high bits are the good ones. */
static inline uint64_t rnd_lcg64(uint64_t *x)
{
	*x = *x * 6364136223846793005u + 1442695040888963407u;
	return *x;
}

/* Marsaglia's xorshift64 (13, 7, 17); *x must not be 0. */
static inline uint64_t rnd_xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

#endif
