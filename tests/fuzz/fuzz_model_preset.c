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
    }
    free(text);
    return 0;
}
