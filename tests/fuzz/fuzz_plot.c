/* Figure kinds on any table: the first byte picks the kind and options;
 * the figure is drawn at 10 x 10 pixels into /dev/null (through a link
 * named .png, the outputs' in-place path). */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include "fuzz.h"
#include "../../plot/wattlas_plot.h"

#include <stdio.h>
#include <unistd.h>

static char plot_dir[64], plot_link[96];

static void plot_cleanup(void)
{
    unlink(plot_link);
    rmdir(plot_dir);
}

/* A link to /dev/null named .png in a directory of this process's own. */
static const char *target(void)
{
    if (!plot_link[0]) {
        snprintf(plot_dir, sizeof plot_dir, "/tmp/wattlas-fuzz-XXXXXX");
        if (!mkdtemp(plot_dir))
            return NULL;
        snprintf(plot_link, sizeof plot_link, "%s/fig.png", plot_dir);
        if (symlink("/dev/null", plot_link) != 0)
            return NULL;
        atexit(plot_cleanup);
    }
    return plot_link;
}

FUZZ_TARGET(plot)
{
    const char *out = target();
    if (!out || size < 1)
        return 0;
    wl_error err;
    wl_results_table *t = NULL;
    if (wl_results_table_load_mem((const char *)data + 1, size - 1, "fuzz.csv", &t, &err))
        return 0;
    wl_plot_options o;
    wl_plot_options_default(&o);
    o.width_in = o.height_in = 1;
    o.dpi = 10;
    o.log_x = data[0] & 1;
    o.log_y = (data[0] >> 1) & 1;
    wl_plot_kind_options k;
    memset(&k, 0, sizeof k);
    const wl_plot_kind *kind = wl_plot_kind_at((data[0] >> 2) % wl_plot_kind_count());
    switch (data[0] >> 5) {
    case 1: k.stack = 1; break;
    case 2: k.panels = "power,time,energy"; break;
    case 3: k.facet = "model"; break;
    case 4: k.normalize = 1; k.y = "batch"; break;
    case 5: k.metric = "time"; k.against = "fastest"; break;
    case 6: k.objective = "energy-within-slowdown=5"; o.legend = WL_PLOT_LEGEND_INSIDE; break;
    case 7: k.y = "model"; k.edp = 1; k.objective = "edp"; k.facet = "gpu"; break;
    default: break;
    }
    if (kind->fn) /* file kinds (timeline) read no table */
        (void)kind->fn(t, &k, &o, out, &err);
    wl_results_table_free(t);
    return 0;
}
