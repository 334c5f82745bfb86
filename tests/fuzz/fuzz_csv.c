/* The CSV reader and in-memory tables: any bytes, every cell read as text
 * and as a number; filters and distinct values over the result. */
#include "fuzz.h"
#include "../../results/wattlas_results.h"

FUZZ_TARGET(csv)
{
    wl_error err;
    wl_results_table *t = NULL;
    if (wl_results_table_load_mem((const char *)data, size, "fuzz.csv", &t, &err) != WL_OK)
        return 0;
    size_t nr = wl_results_table_rows(t), nc = wl_results_table_ncols(t);
    for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < nc; c++) {
            double v;
            (void)wl_results_table_num(t, r, (int)c, &v, &err);
            (void)wl_results_table_cell(t, r, (int)c);
        }
    if (nc) {
        int col = 0;
        const char *val = wl_results_table_cell(t, 0, 0);
        wl_results_table *f = NULL;
        if (wl_results_table_filter(t, &col, &val, 1, &f) == WL_OK)
            wl_results_table_free(f);
        size_t first[8];
        (void)wl_results_table_distinct(t, (int)(nc - 1), first, 8);
    }
    wl_results_table_free(t);
    return 0;
}
