/* Serving rows (serve's own CSV, or a measurement of it) through validate:
 * every cell a setting the row is run again with, every cell that names a
 * file resolved under the data's folder (issue 77: a workload of
 * /etc/passwd was opened and echoed). The header and the first three rows
 * only: each row is a serve simulation. */
#include "fuzz.h"
#include "fuzz_files.h"
#include "../../results/wattlas_results.h"
#include "../../serve/wattlas_serve.h"

FUZZ_TARGET(serve_rows)
{
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w")))
        return 0;
    size_t n = 0;
    for (int lines = 0; n < size && lines < 4; n++)
        lines += data[n] == '\n';
    const char *path = fuzz_file(0, data, n);
    if (!path)
        return 0;
    size_t ncols;
    const wl_results_col *cols = wl_serve_validate_cols(&ncols);
    wl_results_writer *w = NULL;
    if (wl_results_writer_create(sink, WL_FMT_CSV, cols, ncols, &w))
        return 0;
    wl_error err;
    wl_serve_validation v;
    (void)wl_serve_validate(path, NULL, NULL, w, NULL, NULL, &v, &err);
    wl_results_writer_free(w);
    return 0;
}
