/* Board energy per operation at peak against the arithmetic's first
 * principles, per precision of one GPU (wattlas energy-check). */
#include "sweep_internal.h"
#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const wl_results_col cols[] = {
    WL_RESULTS_COL("gpu", WL_COL_TEXT, 0, 14),
    WL_RESULTS_COL("dtype", WL_COL_TEXT, 0, 5),
    WL_RESULTS_COL("unit", WL_COL_TEXT, 0, 6),
    WL_RESULTS_COL("process_nm", WL_COL_NUM, -1, 0),
    WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("peak_tflops", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("board_w", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("board_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("mult_pj", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("add_pj", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("arith_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("reg_pj_per_byte", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("operand_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("residual_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("first_principles_pct", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("model_gemm_mnk", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("model_power_w", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("model_tflops", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("model_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("model_compute_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("model_memory_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("model_static_pj_per_flop", WL_COL_NUM, 4, 0),
};
#define NCOLS (sizeof cols / sizeof *cols)
_Static_assert(NCOLS <= WL_SWEEP_ENERGY_CHECK_COLS, "WL_SWEEP_ENERGY_CHECK_COLS too small");

size_t wl_sweep_energy_check_cols(wl_results_col *out)
{
    memcpy(out, cols, sizeof cols);
    return NCOLS;
}

/* The arithmetic and its register operands over the board's energy per
 * operation at peak, in %: one figure for the column and for the note on
 * a peak the TDP cannot hold */
static double first_principles_pct(const wl_core_energy_check *e)
{
    return 100.0 * (e->arith_pj_per_flop + e->operand_pj_per_flop) / e->board_pj_per_flop;
}

/* One GPU's rows; w NULL: checked only (every GPU is, before any row). */
static int check_one(const char *gpu_id, const char *dtypes, wl_results_writer *w, wl_error *err)
{
    wl_core_gpu g;
    int rc = wl_preset_gpu_load(gpu_id, &g, err);
    if (rc) {
        if (!err->line && !strcmp(err->field, "gpu"))
            wl_error_locate(err, "gpu", 0); /* no such preset: the option's value */
        return rc;
    }
    if (!(g.process_nm > 0)) {
        wl_error_set(err, gpu_id, 0, "process_nm", "the preset gives no process node");
        return WL_EINVAL;
    }
    int want[WL_DT_COUNT] = {0};
    if (dtypes) {
        wl_core_strlist l = {0};
        if ((rc = wl_core_parse_names(dtypes, "dtype", 0, "dtype", &l, err)))
            return rc;
        for (size_t i = 0; !rc && i < l.n; i++) {
            wl_dtype dt;
            if (wl_dtype_parse(l.v[i], &dt)) {
                wl_error_set(err, "dtype", 0, "dtype", "unknown precision '%.40s'", l.v[i]);
                rc = WL_EINVAL;
            } else if (!(g.tc_flop_per_clk_sm[dt] > 0) && !(g.cuda_flop_per_clk_sm[dt] > 0)) {
                wl_error_set(err, "dtype", 0, "dtype", "%s has no %s", g.id, wl_dtype_name(dt));
                rc = WL_EINVAL;
            } else {
                want[dt] = 1;
            }
        }
        wl_core_strlist_free(&l);
        if (rc)
            return rc;
    } else {
        for (int d = 0; d < WL_DT_COUNT; d++)
            want[d] = g.tc_flop_per_clk_sm[d] > 0 || g.cuda_flop_per_clk_sm[d] > 0;
    }
    /* every precision first, so that an error leaves no row written */
    wl_core_energy_check ec[WL_DT_COUNT];
    for (int d = 0; d < WL_DT_COUNT; d++)
        if (want[d] && (rc = wl_core_energy_check_run(&g, (wl_dtype)d, &ec[d], err)))
            return rc;
    if (!w)
        return WL_OK;
    char tdp[WL_CORE_NUM_TEXT];
    wl_core_num_text(tdp, sizeof tdp, g.tdp_w > 0 ? g.tdp_w : g.power_limit_w);
    wl_results_writer_note(w, "%s, %g nm, %s W TDP, peak at the maximum clock; pJ per FLOP "
                              "(per OP for int8)", g.id, g.process_nm, tdp);
    for (int d = 0; d < WL_DT_COUNT && !rc; d++) {
        if (!want[d])
            continue;
        const wl_core_energy_check *e = &ec[d];
        const double v[19] = {g.process_nm, e->clock_mhz, e->peak_tflops, e->board_w,
                              e->board_pj_per_flop, e->mult_pj, e->add_pj, e->arith_pj_per_flop,
                              e->reg_pj_per_byte, e->operand_pj_per_flop, e->residual_pj_per_flop,
                              first_principles_pct(e),
                              (double)e->gemm_mnk, e->model_power_w, e->model_tflops,
                              e->model_pj_per_flop, e->model_compute_pj, e->model_memory_pj,
                              e->model_static_pj};
        wl_results_cell cells[NCOLS];
        cells[0] = (wl_results_cell){g.id, NAN};
        cells[1] = (wl_results_cell){wl_dtype_name(e->dtype), NAN};
        cells[2] = (wl_results_cell){e->tensor_core ? "tensor" : "cuda", NAN};
        for (int i = 0; i < 19; i++)
            cells[3 + i] = (wl_results_cell){NULL, v[i]};
        if (wl_results_writer_row(w, cells)) {
            wl_error_set(err, "energy-check", 0, "", "could not write a row");
            rc = WL_EIO;
        }
    }
    /* TDP / peak is what the board spends per operation only where it can
     * hold that peak: a row whose arithmetic alone needs more than the TDP
     * is a datasheet peak the board cannot sustain (the L4's fp32: 88 W of
     * arithmetic and register operands at 30.3 TFLOPS, against 72 W), said
     * so, with the model's own unthrottled power there */
    for (int d = 0; d < WL_DT_COUNT && !rc; d++) {
        const wl_core_energy_check *e = &ec[d];
        if (want[d] && first_principles_pct(e) > 100)
            wl_results_writer_note(w, "%s %s: the arithmetic and its register operands alone at "
                                      "peak take %.0f W, above the %s W TDP: the board cannot "
                                      "hold its datasheet peak in %s (the model's %lld^3 GEMM "
                                      "draws %.0f W there unthrottled)", g.id,
                                   wl_dtype_name(e->dtype), first_principles_pct(e) / 100 * e->board_w,
                                   tdp, wl_dtype_name(e->dtype), e->gemm_mnk, e->model_power_w);
    }
    if (!rc)
        wl_results_writer_note(w, "board = TDP / peak; mult + add per MAC (a tensor core: an int "
                                  "add into its K-product dot + 1/K fp32 add; Jouppi et al. ISCA "
                                  "2021, 7 nm, node^0.567, or the preset's [technology]); arith "
                                  "= (mult + add) / 2; operand = register bytes per MAC x pJ/B / "
                                  "2; first_principles_pct = (arith + operand) / board");
    return rc;
}

/* A list of GPUs as compare and sweep take them: each checked before the
 * first row is written, so that an error leaves none. */
int wl_sweep_energy_check(const char *gpu_ids, const char *dtypes, wl_results_writer *w,
                          wl_error *err)
{
    wl_core_strlist l = {0};
    int rc = wl_core_parse_names(gpu_ids, "gpu", 0, "gpu", &l, err);
    for (int pass = 0; !rc && pass < 2; pass++)
        for (size_t i = 0; !rc && i < l.n; i++)
            rc = check_one(l.v[i], dtypes, pass ? w : NULL, err);
    wl_core_strlist_free(&l);
    return rc;
}
