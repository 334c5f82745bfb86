/* Sweep tables as pareto and optimize read them: grouping, fronts, the
 * savings table and per-class schedules, written in every format. */
#include "fuzz.h"
#include "../../pareto/wattlas_pareto.h"

#include <stdio.h>

static FILE *sink(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    return f;
}

static void fronts_and_savings(const uint8_t *data, size_t size, const char *group_by)
{
    static const char *const v[4] = {"time_ms", "power_w", "energy_j", "sm_clock_mhz"};
    wl_error err;
    wl_results_csv *csv = NULL;
    if (wl_results_csv_open_mem((const char *)data, size, "fuzz.csv", &csv, &err) != WL_OK)
        return;
    wl_pareto_load_options lo = {.values = v, .nvalues = 4, .group_by = group_by,
                                 .keep_fields = 1};
    wl_pareto_set *s = NULL;
    if (wl_pareto_set_read(csv, &lo, &s, &err) == WL_OK) {
        size_t n = wl_pareto_set_rows(s), ng = wl_pareto_set_groups(s);
        unsigned char *on = malloc(n + 1);
        wl_pareto_saving *sv = calloc(ng + 1, sizeof *sv);
        wl_pareto_objective obj;
        if (on && wl_pareto_set_fronts(s, on) == WL_OK && sv &&
            wl_pareto_objective_parse("energy-within-slowdown=5", &obj, &err) == WL_OK &&
            wl_pareto_savings(s, &obj, sv) == WL_OK) {
            wl_results_col cols[WL_PARETO_KEYED_MAX];
            size_t nc = wl_pareto_savings_cols(s, cols, WL_PARETO_KEYED_MAX);
            for (int fmt = 0; nc && fmt < 5; fmt++) {
                wl_results_writer *w = NULL;
                if (wl_results_writer_create(sink(), (wl_results_format)fmt, cols, nc, &w))
                    break;
                wl_results_cell cells[WL_PARETO_KEYED_MAX];
                for (size_t g = 0; g < ng; g++) {
                    wl_pareto_saving_cells(s, &obj, &sv[g], cells);
                    (void)wl_results_writer_row(w, cells);
                }
                wl_results_writer_finish(w);
            }
        }
        free(on);
        free(sv);
        wl_pareto_set_free(s);
    }
    wl_results_csv_close(csv);
}

static void schedules(const uint8_t *data, size_t size)
{
    wl_error err;
    wl_results_csv *csv = NULL;
    if (wl_results_csv_open_mem((const char *)data, size, "fuzz.csv", &csv, &err) != WL_OK)
        return;
    wl_pareto_load_options lo = {.values = wl_pareto_schedule_values,
                                 .nvalues = WL_PARETO_SCHEDULE_NV, .through_voltage = 1,
                                 .label = "kernel_class"};
    wl_pareto_set *s = NULL;
    wl_pareto_objective obj;
    if (wl_pareto_set_read(csv, &lo, &s, &err) == WL_OK &&
        wl_pareto_objective_parse("energy", &obj, &err) == WL_OK) {
        wl_results_col cols[WL_PARETO_KEYED_MAX];
        size_t nc = wl_pareto_schedule_cols(s, cols, WL_PARETO_KEYED_MAX);
        wl_results_writer *w = NULL;
        if (nc && wl_results_writer_create(sink(), WL_FMT_CSV, cols, nc, &w) == WL_OK) {
            (void)wl_pareto_schedules(s, &obj, WL_PARETO_BY_CLASS, 20, w, &err);
            wl_results_writer_finish(w);
        }
    }
    wl_pareto_set_free(s);
    wl_results_csv_close(csv);
}

FUZZ_TARGET(sweep_table)
{
    if (!sink())
        return 0;
    fronts_and_savings(data, size, NULL);
    fronts_and_savings(data, size, "model,seq");
    schedules(data, size);
    return 0;
}
