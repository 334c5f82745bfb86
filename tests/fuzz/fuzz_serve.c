/* Workload presets (serve's request mixes): the INI parsed as a file,
 * its requests drawn, and a small engine run over them (the draws' extremes
 * meeting the scheduler and its KV cache). */
#include "fuzz.h"
#include "fuzz_files.h"
#include "../../presets/wattlas_presets.h"
#include "../../serve/wattlas_serve.h"

FUZZ_TARGET(serve)
{
    static wl_core_gpu sgpu;
    static wl_core_model smodel;
    static int ready;
    wl_error err;
    if (!ready) {
        if (wl_preset_gpu_load("h100-sxm-80gb", &sgpu, &err) ||
            wl_preset_model_load("gpt2", &smodel, &err))
            return 0;
        ready = 1;
    }
    const char *path = fuzz_file(0, data, size);
    wl_serve_requests *r = NULL;
    if (path && wl_serve_requests_preset(path, 32, 7, &r, &err) == WL_OK) {
        wl_serve_engine e = {.max_num_seqs = 8, .max_num_batched_tokens = 2048};
        wl_serve_sim *s = NULL;
        if (wl_serve_sim_create(&sgpu, &smodel, WL_DT_BF16, &e, &s, &err) == WL_OK &&
            wl_serve_sim_check(s, r, &err) == WL_OK) {
            wl_core_op op = {.sm_clock_mhz = 1410};
            wl_serve_result res;
            (void)wl_serve_sim_run(s, r, &op, &op, &res, &err);
        }
        wl_serve_sim_free(s);
    }
    wl_serve_requests_free(r);
    return 0;
}
