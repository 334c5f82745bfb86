/* Timeline figures of a cluster's schedule (the JSON that 'cluster
 * --timeline' writes): read and drawn at 10 x 10 pixels into /dev/null. */
#include "fuzz.h"
#include "fuzz_files.h"
#include "../../plot/wattlas_plot.h"

FUZZ_TARGET(timeline)
{
    const char *in = fuzz_file(0, data, size);
    static char link[160];
    if (!in)
        return 0;
    if (!link[0]) {
        snprintf(link, sizeof link, "%s/fig.png", fuzz_dir_buf);
        if (symlink("/dev/null", link) != 0) {
            link[0] = 0;
            return 0;
        }
    }
    wl_plot_options o;
    wl_plot_options_default(&o);
    o.width_in = o.height_in = 1;
    o.dpi = 10;
    wl_error err;
    (void)wl_plot_timeline(in, &o, link, &err);
    return 0;
}
