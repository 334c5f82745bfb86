/* PyTorch profiler traces (Chrome trace JSON): the kernels mapped through
 * their aten ops and the host's timeline, anchored at 1000 MHz, then
 * evaluated at two clocks. The same bytes are read again from a file,
 * through the stream and moving window a profile is read by
 * (core/zin.c, core/profile.c; a fuzzing build's window is 8 bytes), and
 * must give what the text in memory gave: the same outcome, the same
 * launches. */
#include "fuzz.h"
#include "fuzz_files.h"
#include "../../presets/wattlas_presets.h"

FUZZ_TARGET(profile)
{
    static wl_core_gpu pgpu;
    static int ploaded;
    wl_error err;
    if (!ploaded && wl_preset_gpu_load("h200-sxm-141gb", &pgpu, &err) == WL_OK)
        ploaded = 1;
    wl_core_workload *wl = NULL, *fw = NULL;
    wl_core_recorded rec = {.sm_clock_mhz = 1000};
    int rc = wl_core_profile_parse((const char *)data, size, "fuzz_1000mhz.json", &rec, &wl, &err);
    /* a profile's text (no byte order mark, not gzip): the file reads alike */
    size_t at = 0;
    while (at < size && (data[at] == ' ' || data[at] == '\n' || data[at] == '\r' || data[at] == '\t'))
        at++;
    const char *path = at < size && data[at] == '{' ? fuzz_file(0, data, size) : NULL;
    if (path) {
        wl_error ferr;
        int frc = wl_core_trace_load_as(path, &rec, &fw, &ferr);
        if (frc != rc || (!rc && (wl_core_workload_count(fw) != wl_core_workload_count(wl) ||
                                  wl_core_workload_unique_count(fw) !=
                                      wl_core_workload_unique_count(wl))))
            abort();
        wl_core_workload_free(fw);
    }
    if (rc != WL_OK)
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
