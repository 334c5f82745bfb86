/* libFuzzer harnesses (make fuzz) that make check replays over their seed
 * corpora and every crash they ever found (tests/fuzz/corpus/NAME,
 * tests/fuzz/regress/NAME). A harness is written once: built for libFuzzer
 * it is LLVMFuzzerTestOneInput, built for the replay test it is
 * wl_fuzz_NAME. */
#ifndef WATTLAS_FUZZ_H
#define WATTLAS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef WL_FUZZ_REPLAY
#define FUZZ_TARGET(name) int wl_fuzz_##name(const uint8_t *data, size_t size)
#else
#define FUZZ_TARGET(name) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
#endif

/* The input as a NUL-terminated string (free it). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (t) {
        memcpy(t, data, size);
        t[size] = 0;
    }
    return t;
}

#endif
