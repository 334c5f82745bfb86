/* wattlas: time, power and energy of AI workloads on GPUs at any clock.
 *
 * The public interface of libwattlas, one header per module:
 *   core     GPU description, V-f rules, workloads and builders, traces,
 *            the evaluator, first-principles energy       (wl_core_*)
 *   presets  GPU and model presets, their schema, INI files (wl_preset_*)
 *   results  number formatting, atomic outputs, CSV, tables, row writers
 *                                                           (wl_results_*)
 *   calib    measurements, validation, fitting, intervals   (wl_calib_*)
 *   sweep    grids, parallel and MPI evaluation, shards      (wl_sweep_*)
 *   pareto   fronts, objectives, savings, schedules, optima  (wl_pareto_*)
 *   plot     figures and whole-study reports                 (wl_plot_*)
 *   learn    learned predictors over measurements (XGBoost)  (wl_learn_*)
 *   serve    a serving engine simulated step by step         (wl_serve_*)
 *
 * Build against it with pkg-config: cc app.c $(pkg-config --cflags --libs
 * wattlas) after 'make install PREFIX=...' (and PKG_CONFIG_PATH pointing at
 * PREFIX/lib/pkgconfig). examples/predict.c is a whole program. */
#ifndef WATTLAS_H
#define WATTLAS_H

#include "../core/wattlas_core.h"
#include "../presets/wattlas_presets.h"
#include "../results/wattlas_results.h"
#include "../calib/wattlas_calib.h"
#include "../sweep/wattlas_sweep.h"
#include "../pareto/wattlas_pareto.h"
#include "../plot/wattlas_plot.h"
#include "../cluster/wattlas_cluster.h"
#include "../learn/wattlas_learn.h"
#include "../serve/wattlas_serve.h"

#endif
