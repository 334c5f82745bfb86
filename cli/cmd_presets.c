/* wattlas presets list|show|derive-vf */
#include "cli.h"
#include "../presets/wattlas_presets.h"

#include <stdio.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas presets list\n"
"       wattlas presets show ID\n"
"       wattlas presets derive-vf IDLE.csv [--step-mhz N]\n\n"
"list       the built-in GPU and model presets\n"
"show ID    print a preset's INI text (GPU or model)\n"
"derive-vf  print a smoothed [vf] section from a measured idle table\n"
"           (columns sm_clock_mhz,voltage_mv,idle_power_w; default step 60 MHz)\n");
}

int cmd_presets(int argc, char **argv)
{
    const char *cmd = "presets";
    if (argc < 2)
        return usage_error(cmd, "missing subcommand (list, show, derive-vf)");
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        help(stdout);
        return 0;
    }
    if (strcmp(sub, "list") == 0) {
        if (argc > 2 && strcmp(argv[2], "--help") == 0) { help(stdout); return 0; }
        if (argc > 2)
            return usage_error(cmd, "list takes no arguments");
        printf("gpus:\n");
        for (size_t i = 0; i < wl_preset_count(WL_PRESET_GPU); i++) {
            wl_core_gpu g;
            wl_error err;
            const char *id = wl_preset_id(WL_PRESET_GPU, i);
            if (wl_preset_gpu_load(id, &g, &err) == WL_OK)
                printf("  %-18s %s, %d SMs, %.0f-%.0f MHz, %.0f GB/s %s, %.0f W\n", id, g.name,
                       g.sms, g.sm_clock_min_mhz, g.sm_clock_max_mhz, g.dram_bw_gbs, g.dram_type,
                       g.power_limit_w);
            else
                printf("  %-18s (invalid preset)\n", id);
        }
        printf("models:\n");
        for (size_t i = 0; i < wl_preset_count(WL_PRESET_MODEL); i++) {
            wl_core_model m;
            wl_error err;
            const char *id = wl_preset_id(WL_PRESET_MODEL, i);
            if (wl_preset_model_load(id, &m, &err) == WL_OK)
                printf("  %-18s %s style, %d layers, d_model %d, %d heads (%d kv), d_ff %d, %s\n",
                       id, wl_style_name(m.style), m.layers, m.d_model, m.heads, m.kv_heads,
                       m.d_ff, wl_activation_name(m.activation));
            else
                printf("  %-18s (invalid preset)\n", id);
        }
        return 0;
    }
    if (strcmp(sub, "show") == 0) {
        if (argc > 2 && strcmp(argv[2], "--help") == 0) { help(stdout); return 0; }
        if (argc != 3)
            return usage_error(cmd, "show takes one preset ID");
        const char *t = wl_preset_text(WL_PRESET_GPU, argv[2]);
        if (!t)
            t = wl_preset_text(WL_PRESET_MODEL, argv[2]);
        if (!t) {
            fprintf(stderr, "wattlas presets: no preset '%s' (see 'wattlas presets list')\n",
                    argv[2]);
            return EXIT_RUNTIME;
        }
        fputs(t, stdout);
        return 0;
    }
    if (strcmp(sub, "derive-vf") == 0) {
        const char *path = NULL;
        double step = 60;
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--help") == 0) { help(stdout); return 0; }
            if (strcmp(argv[i], "--step-mhz") == 0) {
                if (i + 1 >= argc)
                    return usage_error(cmd, "--step-mhz needs a value");
                if (parse_double_arg(cmd, "--step-mhz", argv[++i], &step))
                    return EXIT_USAGE;
                if (!(step > 0))
                    return usage_error(cmd, "--step-mhz must be positive");
            } else if (!path) {
                path = argv[i];
            } else {
                return usage_error(cmd, "unexpected argument '%s'", argv[i]);
            }
        }
        if (!path)
            return usage_error(cmd, "derive-vf needs an idle-table CSV");
        wl_error err = {0};
        if (wl_preset_derive_vf(path, step, stdout, &err))
            return runtime_error(cmd, &err);
        return 0;
    }
    return usage_error(cmd, "unknown subcommand '%s'", sub);
}
