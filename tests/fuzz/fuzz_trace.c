/* Kernel traces: parsing, retyping, and evaluating what parses on the A100
 * preset at a low clock and at one that throttles. */
#include "fuzz.h"
#include "../../presets/wattlas_presets.h"

FUZZ_TARGET(trace)
{
    static wl_core_gpu gpu;
    static int loaded;
    wl_error err;
    if (!loaded && wl_preset_gpu_load("a100-pcie-40gb", &gpu, &err) == WL_OK)
        loaded = 1;
    wl_core_workload *wl = NULL, *f32 = NULL;
    if (wl_core_trace_parse((const char *)data, size, "fuzz.json", &wl, &err) != WL_OK)
        return 0;
    if (loaded) {
        wl_core_evaluator *ev = NULL;
        if (wl_core_evaluator_create(&gpu, wl, NULL, &ev) == WL_OK) {
            const double clk[2] = {510, 1410};
            for (int i = 0; i < 2; i++) {
                wl_core_op op = {.sm_clock_mhz = clk[i]};
                wl_core_result r;
                (void)wl_core_evaluator_run(ev, &op, &r);
            }
            wl_core_evaluator_free(ev);
        }
    }
    if (wl_core_workload_retype(wl, WL_DT_FP32, &f32, &err) == WL_OK)
        wl_core_workload_free(f32);
    wl_core_workload_free(wl);
    return 0;
}
