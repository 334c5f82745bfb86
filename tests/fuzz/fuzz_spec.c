/* Study specs (sweep, set and report sections): parsing, finishing, and a
 * small sweep of what finishes, in every format. */
#include "fuzz.h"
#include "../../sweep/wattlas_sweep.h"

#include <stdio.h>

FUZZ_TARGET(spec)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w")))
        return 0;
    /* no paths: they would read the file system (traces, idle tables) */
    if (memchr(data, '/', size))
        return 0;
    wl_sweep_spec *s = wl_sweep_spec_create();
    wl_error err;
    if (s && wl_sweep_spec_parse(s, (const char *)data, size, "fuzz.ini", &err) == WL_OK &&
        wl_sweep_spec_finish(s, &err) == WL_OK && wl_sweep_spec_points(s) <= 12) {
        (void)wl_sweep_spec_report(s, "title");
        for (int fmt = 0; fmt < 4; fmt++) {
            wl_sweep_options o = {.format = (wl_results_format)fmt, .threads = 1};
            wl_sweep_stats st;
            (void)wl_sweep_run(s, &o, null, NULL, &st, &err);
        }
    }
    wl_sweep_spec_free(s);
    return 0;
}
