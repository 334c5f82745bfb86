/* Measurement files: loading, binding rows to workloads on the A100
 * preset, scoring. */
#include "fuzz.h"
#include "../../calib/wattlas_calib.h"
#include "../../presets/wattlas_presets.h"

FUZZ_TARGET(measurements)
{
    static wl_core_gpu gpu;
    static int loaded;
    wl_error err;
    if (!loaded && wl_preset_gpu_load("a100-pcie-40gb", &gpu, &err) == WL_OK)
        loaded = 1;
    wl_calib_set *set = NULL;
    if (wl_calib_load_mem((const char *)data, size, "fuzz.csv", &set, &err) != WL_OK)
        return 0;
    wl_calib_problem *p = NULL;
    if (loaded && wl_calib_count(set) <= 32 &&
        wl_calib_problem_create(&gpu, set, NULL, &p, &err) == WL_OK) {
        wl_calib_metrics m;
        (void)wl_calib_score(p, NULL, &m);
        for (size_t i = 0; i < wl_calib_count(set); i++) {
            wl_core_result r;
            const char *why;
            if (wl_calib_row_ok(p, i, &why))
                (void)wl_calib_predict(p, i, &r);
        }
        wl_calib_problem_free(p);
    }
    wl_calib_free(set);
    return 0;
}
