/* The grammar of option values: numbers, lists, ranges, names, and every
 * sweep key (--set KEY=LIST, --clock, --batch, ...) as set from text. The
 * first byte picks the key; the rest is the value. The same text as an
 * axis, as a number's reason, and as a file named in a data row. */
#include "fuzz.h"
#include "../../results/wattlas_results.h"
#include "../../sweep/wattlas_sweep.h"

FUZZ_TARGET(grammar)
{
    static const char *const keys[] = {"clock", "batch", "seq", "dtype", "attention",
                                       "voltage_offset_mv", "voltage_mv", "scope", "classes",
                                       "latency", "power_limit", "interval", "set", "set.sms",
                                       "set.vmin_mv", "set.c_tc_w", "gpu", "model"};
    if (size < 1)
        return 0;
    char *v = fuzz_text(data + 1, size - 1);
    if (!v)
        return 0;
    wl_error err;
    wl_core_numlist l = {0};
    (void)wl_core_parse_list(v, -1e9, 1e9, data[0] & 1, "fuzz", 1, "x", &l, &err);
    wl_core_numlist_free(&l);
    /* an axis: no value twice (issue 77) */
    (void)wl_core_parse_axis(v, -1e9, 1e9, data[0] & 1, "fuzz", 1, "x", &l, &err);
    wl_core_numlist_free(&l);
    (void)wl_core_number_why(v);
    /* a file a data row names: under the data's folder, or refused */
    char real[4096];
    (void)wl_results_row_path("/dev/shm/rows.csv", 2, "workload", v, real, sizeof real, &err);
    wl_core_strlist names = {0};
    (void)wl_core_parse_names(v, "fuzz", 1, "x", &names, &err);
    wl_core_strlist_free(&names);
    long long n;
    double d;
    (void)wl_core_parse_int(v, -100, 1000000, "fuzz", 1, "x", &n, &err);
    (void)wl_core_parse_real(v, -1e6, 1e6, "fuzz", 1, "x", &d, &err);
    wl_sweep_spec *s = wl_sweep_spec_create();
    if (s) {
        const char *key = keys[data[0] % (sizeof keys / sizeof *keys)];
        /* twice, from two origins: appending, then replacing */
        (void)wl_sweep_spec_set(s, key, v, "--a", 0, &err);
        (void)wl_sweep_spec_set(s, key, v, "--a", 0, &err);
        (void)wl_sweep_spec_set(s, key, v, "--b", 0, &err);
        wl_sweep_spec_free(s);
    }
    free(v);
    return 0;
}
