/*
 * fuzz.h - what every harness in tests/fuzz/ shares: the libFuzzer entry
 * point each one defines.  A harness is built twice: with clang's
 * -fsanitize=fuzzer for long runs (`make fuzz`), and with driver.c, a
 * plain main() that replays files and a few deterministic mutations of
 * them, for the smoke run inside `make test`.
 */
#ifndef PIPE_FUZZ_H
#define PIPE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
