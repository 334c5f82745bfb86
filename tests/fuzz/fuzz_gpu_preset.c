/* GPU presets: parsing, design changes through the field table, and an
 * evaluation on whatever GPU parses (extreme but allowed coefficients). */
#include "fuzz.h"
#include "../../presets/wattlas_presets.h"

FUZZ_TARGET(gpu_preset)
{
    static wl_core_workload *wl;
    wl_error err;
    if (!wl) {
        wl_core_model m;
        wl_core_shape sh = {.batch = 1, .seq = 64, .dtype = WL_DT_BF16};
        if (wl_preset_model_load("gpt2", &m, &err) || wl_core_build(&m, &sh, &wl, &err))
            return 0;
    }
    if (memchr(data, '/', size))
        return 0; /* transfer_from paths: the file system is not the input */
    char *text = fuzz_text(data, size);
    wl_core_gpu g;
    if (text && wl_preset_gpu_parse(text, "fuzz.ini", &g, &err) == WL_OK) {
        wl_core_evaluator *ev = NULL;
        if (wl_core_evaluator_create(&g, wl, NULL, &ev) == WL_OK) {
            wl_core_throttle_cache tc = {0};
            for (size_t i = 0; i < wl_core_gpu_clock_count(&g) && i < 8; i++) {
                wl_core_op op = {.sm_clock_mhz = wl_core_gpu_clock(&g, i)};
                wl_core_result r;
                (void)wl_core_evaluator_run_cached(ev, &op, &tc, &r);
            }
            wl_core_evaluator_free(ev);
        }
        const char *keys[2] = {"sms", "dram_bw_gbs"};
        const double vals[2] = {132, 3352};
        (void)wl_preset_gpu_apply(&g, keys, vals, 2, NULL, &err);
    }
    free(text);
    return 0;
}
