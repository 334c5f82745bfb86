/* PyTorch profiler traces (Chrome trace JSON): the kernels mapped through
 * their aten ops and the host's timeline, anchored at 1000 MHz (the
 * source's name says so), then evaluated at two clocks. */
#include "fuzz.h"
#include "../../presets/wattlas_presets.h"

FUZZ_TARGET(profile)
{
    static wl_core_gpu pgpu;
    static int ploaded;
    wl_error err;
    if (!ploaded && wl_preset_gpu_load("h200-sxm-141gb", &pgpu, &err) == WL_OK)
        ploaded = 1;
    wl_core_workload *wl = NULL;
    if (wl_core_profile_parse((const char *)data, size, "fuzz_1000mhz.json", NULL, &wl, &err) != WL_OK)
        return 0;
    if (ploaded) {
        wl_core_evaluator *ev = NULL;
        if (wl_core_evaluator_create(&pgpu, wl, NULL, &ev) == WL_OK) {
            for (int i = 0; i < 2; i++) {
                wl_core_op op = {.sm_clock_mhz = i ? 1980 : 990};
                wl_core_result r;
                (void)wl_core_evaluator_run(ev, &op, &r);
            }
            wl_core_evaluator_free(ev);
        }
    }
    wl_core_workload_free(wl);
    return 0;
}
