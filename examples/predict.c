/* A program on libwattlas: GPT-2 (batch 8, 512 tokens, bf16) on the A100
 * PCIe preset over its clock grid, printing the energy-optimal clock.
 *   make install PREFIX=$HOME/.local
 *   PKG_CONFIG_PATH=$HOME/.local/lib/pkgconfig \
 *       cc examples/predict.c $(pkg-config --cflags --libs wattlas) -o predict */
#include <wattlas.h>

#include <stdio.h>

int main(void)
{
    wl_error err = {0};
    wl_core_gpu gpu;
    wl_core_model model;
    wl_core_workload *wl = NULL;
    wl_core_evaluator *ev = NULL;
    int status = 1;
    if (wl_preset_gpu_load("a100-pcie-40gb", &gpu, &err) ||
        wl_preset_model_load("gpt2", &model, &err))
        goto done;
    wl_core_shape shape = {.batch = 8, .seq = 512, .dtype = WL_DT_BF16,
                           .attention = WL_ATTN_EAGER};
    if (wl_core_build(&model, &shape, &wl, &err) ||
        wl_core_evaluator_create(&gpu, wl, NULL, &ev))
        goto done;
    double best_j = 0, best_mhz = 0;
    for (size_t i = 0; i < wl_core_gpu_clock_count(&gpu); i++) {
        wl_core_op op = {.sm_clock_mhz = wl_core_gpu_clock(&gpu, i)};
        wl_core_result r;
        if (wl_core_evaluator_run(ev, &op, &r))
            goto done;
        if (i == 0 || r.energy_j < best_j) {
            best_j = r.energy_j;
            best_mhz = op.sm_clock_mhz;
        }
    }
    char j[WL_RESULTS_NUM_MAX], f[WL_RESULTS_NUM_MAX];
    wl_results_fmt(j, sizeof j, best_j, 6);
    wl_results_fmt(f, sizeof f, best_mhz, 1);
    printf("%s: energy-optimal SM clock %s MHz, %s J\n", wl_core_workload_name(wl), f, j);
    status = 0;
done:
    if (status && err.text[0]) {
        char msg[800];
        wl_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "predict: %s\n", msg);
    }
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
    return status;
}
