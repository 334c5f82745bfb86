/* Shard merging: the input is up to four shards separated by lines of
 * "%%", merged into /dev/null. */
#include "fuzz.h"
#include "fuzz_files.h"
#include "../../sweep/wattlas_sweep.h"

FUZZ_TARGET(merge)
{
    const char *paths[4];
    int n = 0;
    size_t at = 0;
    while (n < 4 && at <= size) {
        const uint8_t *sep = NULL;
        for (size_t i = at; i + 4 <= size && !sep; i++)
            if (!memcmp(data + i, "\n%%\n", 4))
                sep = data + i;
        size_t end = sep ? (size_t)(sep - data) + 1 : size;
        if (!(paths[n] = fuzz_file(n, data + at, end - at)))
            return 0;
        n++;
        if (!sep)
            break;
        at = end + 3;
    }
    FILE *out = fopen("/dev/null", "w");
    if (!out)
        return 0;
    wl_error err;
    (void)wl_sweep_merge(paths, n, out, &err);
    fclose(out);
    return 0;
}
