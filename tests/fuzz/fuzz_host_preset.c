/* Host presets: parsing, and a GPU that takes whatever host parses
 * evaluating a small model at two clocks (its launch costs on the
 * timeline). */
#include "fuzz.h"
#include "../../presets/wattlas_presets.h"

FUZZ_TARGET(host_preset)
{
    static wl_core_workload *hwl;
    static wl_core_gpu hgpu;
    wl_error err;
    if (!hwl) {
        wl_core_model m;
        wl_core_shape sh = {.batch = 1, .seq = 16, .dtype = WL_DT_BF16, .mode = WL_MODE_DECODE,
                            .gen = 4};
        if (wl_preset_model_load("gpt2", &m, &err) || wl_preset_gpu_load("a100-pcie-40gb", &hgpu, &err) ||
            wl_core_build(&m, &sh, &hwl, &err))
            return 0;
    }
    char *text = fuzz_text(data, size);
    wl_core_host h;
    if (text && wl_preset_host_parse(text, "fuzz.ini", &h, &err) == WL_OK &&
        wl_core_host_check(&h, &err) == WL_OK) {
        wl_core_gpu g = hgpu;
        wl_core_gpu_set_host(&g, &h);
        for (int i = 0; i < 2; i++) {
            wl_core_op op = {.sm_clock_mhz = i ? 1410 : 600};
            wl_core_result r;
            (void)wl_core_predict(&g, hwl, &op, &r);
        }
        FILE *f = fopen("/dev/null", "w");
        if (f) {
            wl_preset_write_host(f, &h);
            fclose(f);
        }
    }
    free(text);
    return 0;
}
