/* Multi-GPU system presets: parsing, the checks, and a key set through
 * the field table on whatever parses. */
#include "fuzz.h"
#include "../../cluster/wattlas_cluster.h"

FUZZ_TARGET(system_preset)
{
    char *text = fuzz_text(data, size);
    wl_cluster_system s;
    wl_error err;
    if (text && wl_cluster_system_parse(text, "fuzz.ini", &s, &err) == WL_OK) {
        (void)wl_cluster_system_check(&s, &err);
        (void)wl_cluster_system_set(&s, "nic_gbps", 400, &err);
        (void)wl_cluster_system_set(&s, "gpus_per_node", 0, &err);
    }
    free(text);
    return 0;
}
