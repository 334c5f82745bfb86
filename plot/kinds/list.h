/* The figure kinds, in the order `wattlas plot --help` lists them: one line
 * per file of this folder, each file defining wl_plot_kind_ID (its name,
 * help, draw function and options). To add a kind, write plot/kinds/ID.c
 * beside the others and add its line here; the Makefile builds every file
 * of the folder. Included twice by plot/kinds.c, and by kinds_internal.h. */
WL_PLOT_KIND(energy_freq)
WL_PLOT_KIND(pareto)
WL_PLOT_KIND(pareto_norm)
WL_PLOT_KIND(heatmap)
WL_PLOT_KIND(savings)
WL_PLOT_KIND(validation)
WL_PLOT_KIND(gpus)
WL_PLOT_KIND(compare)
WL_PLOT_KIND(importance)
WL_PLOT_KIND(timeline)
