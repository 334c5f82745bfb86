/* Model presets: parsing and building a small shape of whatever parses. */
#include "fuzz.h"
#include "../../presets/wattlas_presets.h"

FUZZ_TARGET(model_preset)
{
    char *text = fuzz_text(data, size);
    wl_core_model m;
    wl_error err;
    if (text && wl_preset_model_parse(text, "fuzz.ini", &m, &err) == WL_OK &&
        m.layers <= 64 && m.stages <= 4) {
        wl_core_shape sh = {.batch = 1, .seq = 8, .dtype = WL_DT_BF16};
        wl_core_workload *wl = NULL;
        if (wl_core_build(&m, &sh, &wl, &err) == WL_OK)
            wl_core_workload_free(wl);
        if (wl_core_build_layer(&m, &sh, &wl, &err) == WL_OK)
            wl_core_workload_free(wl);
        /* a serving step, alone and over two tensor-parallel ranks (with the
         * experts split whole when it has them): mixtures of experts,
         * sliding windows and head_dim meet the serve builder */
        wl_core_shape ss = {.batch = 1, .seq = 1, .dtype = WL_DT_BF16, .attention = WL_ATTN_FLASH,
                            .mode = WL_MODE_DECODE, .gen = 2, .launch = WL_LAUNCH_GRAPHS,
                            .impl = WL_IMPL_FUSED};
        for (int tp = 1; tp <= 2; tp++) {
            wl_core_serve_step st = {.decode = 3, .context = 40, .chunk = 5, .chunk_context = 9,
                                     .prefills = 1, .sampled = 4, .seqs = 4, .tp = tp,
                                     .ep = tp > 1 && m.experts > 0};
            if (wl_core_build_serve_step(&m, &ss, &st, &wl, &err) == WL_OK)
                wl_core_workload_free(wl);
        }
    }
    free(text);
    return 0;
}
