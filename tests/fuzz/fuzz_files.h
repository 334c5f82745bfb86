/* Harnesses whose inputs are files (a learned model, a timeline, shards):
 * the input is written to files in a directory of this process's own. */
#ifndef WATTLAS_FUZZ_FILES_H
#define WATTLAS_FUZZ_FILES_H

#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdio.h>
#include <unistd.h>

static char fuzz_dir_buf[64];

static void fuzz_dir_cleanup(void)
{
    char p[128];
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/in%d", fuzz_dir_buf, i);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/fig.png", fuzz_dir_buf); /* fuzz_timeline's */
    unlink(p);
    rmdir(fuzz_dir_buf);
}

/* The i-th (0-3) input file's path holding n bytes of data; NULL when it
 * cannot be written. */
static inline const char *fuzz_file(int i, const uint8_t *data, size_t n)
{
    static char path[4][128];
    if (!fuzz_dir_buf[0]) {
        /* in memory where there is a tmpfs: a write and a read per input */
        snprintf(fuzz_dir_buf, sizeof fuzz_dir_buf, "/dev/shm/wattlas-fuzzin-XXXXXX");
        if (!mkdtemp(fuzz_dir_buf)) {
            snprintf(fuzz_dir_buf, sizeof fuzz_dir_buf, "/tmp/wattlas-fuzzin-XXXXXX");
            if (!mkdtemp(fuzz_dir_buf)) {
                fuzz_dir_buf[0] = 0;
                return NULL;
            }
        }
        atexit(fuzz_dir_cleanup);
    }
    snprintf(path[i], sizeof path[i], "%s/in%d", fuzz_dir_buf, i);
    FILE *f = fopen(path[i], "wb");
    if (!f)
        return NULL;
    int ok = fwrite(data, 1, n, f) == n;
    ok &= fclose(f) == 0;
    return ok ? path[i] : NULL;
}

#endif
