/* Measured idle tables as --idle and derive-vf read them. */
#include "fuzz.h"
#include "../../presets/wattlas_presets.h"

FUZZ_TARGET(idle)
{
    static wl_core_gpu a100, a10;
    static int loaded;
    wl_error err;
    if (!loaded) {
        if (wl_preset_gpu_load("a100-pcie-40gb", &a100, &err) ||
            wl_preset_gpu_load("a10-24gb", &a10, &err))
            return 0;
        loaded = 1;
    }
    wl_core_gpu g = a100; /* a measured V-f table */
    (void)wl_preset_gpu_idle_table_mem(&g, (const char *)data, size, "fuzz.csv", &err);
    g = a10; /* the board-class rule */
    (void)wl_preset_gpu_idle_table_mem(&g, (const char *)data, size, "fuzz.csv", &err);
    return 0;
}
