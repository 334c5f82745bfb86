/* Tests of sweep/: determinism across threads and shards, feasibility
 * marking, spec files, bad specs, interruption. */
#include "test_util.h"
#include "../sweep/wattlas_sweep.h"
#include "../presets/wattlas_presets.h"

#include <unistd.h>

static wl_sweep_spec *spec_of(const char *const *kv, size_t n)
{
    wl_sweep_spec *s = wl_sweep_spec_create();
    wl_error err;
    for (size_t i = 0; i < n; i += 2)
        if (wl_sweep_spec_set(s, kv[i], kv[i + 1], "test", 0, &err))
            fail_msg("%s=%s: %s", kv[i], kv[i + 1], err.text);
    if (wl_sweep_spec_finish(s, &err))
        fail_msg("finish: %s", err.text);
    return s;
}

static char *run_to_string(const wl_sweep_spec *s, int threads, unsigned shard, unsigned nshard,
                           wl_results_format fmt, wl_sweep_stats *st)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    wl_sweep_options o = {.format = fmt, .threads = threads, .shard_index = shard,
                          .shard_count = nshard};
    wl_error err;
    wl_sweep_stats tmp;
    assert_int_equal(wl_sweep_run(s, &o, f, NULL, st ? st : &tmp, &err), WL_OK);
    fclose(f);
    return buf;
}

static const char *const GRID[] = {"model", "gpt2,opt-1.3b", "batch", "1,8", "seq", "128,512",
                                   "dtype", "bf16,fp32", "clock", "510:1410:90",
                                   "set", "sms=84,108", "voltage_offset_mv", "-50,0"};

static void test_threads_identical(void **state)
{
    (void)state;
    wl_sweep_spec *s = spec_of(GRID, sizeof GRID / sizeof *GRID);
    /* 2 models x 2 x 2 x 2 dtypes x 11 clocks x 2 sms x 2 offsets */
    assert_int_equal(wl_sweep_spec_points(s), 2ULL * 2 * 2 * 2 * 11 * 2 * 2);
    wl_sweep_stats st;
    char *a = run_to_string(s, 1, 0, 0, WL_FMT_CSV, &st);
    char *b = run_to_string(s, 2, 0, 0, WL_FMT_CSV, NULL);
    char *c = run_to_string(s, 7, 0, 0, WL_FMT_CSV, NULL);
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    assert_int_equal(st.points, wl_sweep_spec_points(s));
    assert_int_equal(st.rows, st.points);
    /* header with units, every row complete */
    assert_non_null(strstr(a, "gpu,sms,model,batch,seq,dtype,attention,mode,scope,voltage_offset_mv,"
                              "sm_clock_mhz,effective_clock_mhz,voltage_mv,feasible,throttled,"
                              "time_ms,power_w,energy_j,"));
    free(a);
    free(b);
    free(c);
    char *j1 = run_to_string(s, 1, 0, 0, WL_FMT_NDJSON, NULL);
    char *j2 = run_to_string(s, 2, 0, 0, WL_FMT_NDJSON, NULL);
    assert_string_equal(j1, j2);
    assert_non_null(strstr(j1, "{\"gpu\":\"a100-pcie-40gb\",\"sms\":84,\"model\":\"gpt2\""));
    free(j1);
    free(j2);
    wl_sweep_spec_free(s);
}

static void test_shards_merge(void **state)
{
    (void)state;
    wl_sweep_spec *s = spec_of(GRID, sizeof GRID / sizeof *GRID);
    char *full = run_to_string(s, 2, 0, 0, WL_FMT_CSV, NULL);
    const char *paths[5];
    char names[5][600];
    /* 5 shards (counted from 1): slice boundaries fall inside outer
     * combinations; each starts with its '#' line */
    for (unsigned i = 1; i <= 5; i++) {
        char *part = run_to_string(s, 2, i, 5, WL_FMT_CSV, NULL);
        char want[64];
        snprintf(want, sizeof want, "# wattlas-shard %u/5 sweep=", i);
        assert_memory_equal(part, want, strlen(want));
        snprintf(names[i - 1], sizeof names[0], "%s", test_path(i == 1 ? "s1.csv" : i == 2 ? "s2.csv"
                                                               : i == 3 ? "s3.csv" : i == 4 ? "s4.csv"
                                                                        : "s5.csv"));
        test_write_file(names[i - 1], part);
        free(part);
    }
    /* any order */
    const int order[5] = {3, 0, 4, 1, 2};
    for (int i = 0; i < 5; i++)
        paths[i] = names[order[i]];
    char *merged = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&merged, &len);
    wl_error err;
    assert_int_equal(wl_sweep_merge(paths, 5, m, &err), WL_OK);
    fclose(m);
    assert_string_equal(merged, full);
    free(merged);
    /* a shard missing, given twice, or of another sweep is refused */
    m = open_memstream(&merged, &len);
    assert_int_not_equal(wl_sweep_merge(paths, 4, m, &err), WL_OK);
    assert_non_null(strstr(err.text, "shards were given"));
    const char *twice[5] = {names[0], names[1], names[2], names[3], names[3]};
    assert_int_not_equal(wl_sweep_merge(twice, 5, m, &err), WL_OK);
    assert_non_null(strstr(err.text, "twice"));
    fclose(m);
    free(merged);
    const char *kv[] = {"model", "gpt2", "clock", "900,1000"};
    wl_sweep_spec *other = spec_of(kv, 4);
    char *o2 = run_to_string(other, 1, 2, 5, WL_FMT_CSV, NULL);
    test_write_file(test_path("other.csv"), o2);
    free(o2);
    wl_sweep_spec_free(other);
    const char *mixed[5] = {names[0], test_path("other.csv"), names[2], names[3], names[4]};
    m = open_memstream(&merged, &len);
    assert_int_not_equal(wl_sweep_merge(mixed, 5, m, &err), WL_OK);
    assert_non_null(strstr(err.text, "another sweep"));
    fclose(m);
    free(merged);
    /* a row with a column too few or too many is refused, not passed on */
    char *p4 = run_to_string(s, 1, 4, 5, WL_FMT_CSV, NULL);
    for (int extra = 0; extra < 2; extra++) {
        size_t n4 = strlen(p4);
        char *bad = malloc(n4 + 8); /* room for the ",1" an extra column adds */
        assert_non_null(bad);
        memcpy(bad, p4, n4 + 1);
        char *row = strchr(strchr(strchr(bad, '\n') + 1, '\n') + 1, '\n') + 1; /* 2nd row */
        char *eol = strchr(row, '\n');
        if (extra) {
            memmove(eol + 2, eol, strlen(eol) + 1);
            eol[0] = ',', eol[1] = '1';
        } else {
            char *comma = eol;
            while (*comma != ',')
                comma--;
            memmove(comma, eol, strlen(eol) + 1);
        }
        test_write_file(names[3], bad);
        free(bad);
        m = open_memstream(&merged, &len);
        assert_int_equal(wl_sweep_merge(paths, 5, m, &err), WL_EPARSE);
        assert_non_null(strstr(err.text, "columns"));
        assert_int_equal(err.line, 4);
        fclose(m);
        free(merged);
    }
    test_write_file(names[3], p4);
    free(p4);
    /* a truncated or incomplete shard is refused */
    FILE *f = fopen(names[4], "a");
    fputs("a100-pcie-40gb,84,gpt2", f);
    fclose(f);
    m = open_memstream(&merged, &len);
    assert_int_equal(wl_sweep_merge(paths, 5, m, &err), WL_EPARSE);
    fclose(m);
    free(merged);
    char *part = run_to_string(s, 1, 5, 5, WL_FMT_CSV, NULL);
    char *cut = strrchr(part, '\n');
    *cut = 0;
    cut = strrchr(part, '\n'); /* drop the end line ... */
    *cut = 0;
    cut = strrchr(part, '\n'); /* ... and the last whole row */
    cut[1] = 0;
    test_write_file(names[4], part);
    free(part);
    m = open_memstream(&merged, &len);
    assert_int_equal(wl_sweep_merge(paths, 5, m, &err), WL_EPARSE);
    assert_non_null(strstr(err.text, "incomplete"));
    fclose(m);
    free(merged);
    free(full);
    wl_sweep_spec_free(s);
}

/* An undervolt below the alpha-power-law critical voltage is marked, not
 * dropped; the nominal curve is always feasible. */
static void test_infeasible_marking(void **state)
{
    (void)state;
    const char *kv[] = {"clock", "510:1410:90", "voltage_offset_mv", "-200,-20,0"};
    wl_sweep_spec *s = spec_of(kv, 4);
    char *out = run_to_string(s, 1, 0, 0, WL_FMT_CSV, NULL);
    int rows = 0, infeasible = 0, nominal_infeasible = 0;
    for (char *line = strchr(out, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        rows++;
        /* gpu,model,batch,seq,dtype,attention,mode,scope,voltage_offset_mv,sm_clock,eff,volt,feasible */
        char *p = line;
        for (int c = 0; c < 12; c++)
            p = strchr(p, ',') + 1;
        int feas = *p == '1';
        char *o = line;
        for (int c = 0; c < 8; c++)
            o = strchr(o, ',') + 1;
        double off = strtod(o, NULL);
        infeasible += !feas;
        nominal_infeasible += !feas && off == 0;
    }
    assert_int_equal(rows, 33);
    assert_int_equal(nominal_infeasible, 0);
    assert_true(infeasible >= 5); /* -200 mV cannot hold the upper clocks */
    free(out);
    wl_sweep_spec_free(s);
    /* the law itself: f_max rises with voltage, and the curve's top less the
     * guardband is exactly on it */
    wl_core_gpu g;
    test_gpu(&g);
    g.vth_mv = 350;
    g.alpha_power = 1.3;
    g.vf_guardband_mv = 50;
    assert_close(wl_core_gpu_fmax_mhz(&g, 905 - 50), 1410, 1e-9);
    assert_true(wl_core_gpu_fmax_mhz(&g, 700) < wl_core_gpu_fmax_mhz(&g, 800));
    assert_true(wl_core_gpu_feasible(&g, 1410, 905));
    assert_false(wl_core_gpu_feasible(&g, 1410, 800));
    assert_close(wl_core_gpu_fmax_mhz(&g, 300), 0, 0); /* below threshold */
}

static void test_spec_file_and_errors(void **state)
{
    (void)state;
    const char *p = test_path("wattlas-test-spec.ini");
    FILE *f = fopen(p, "w");
    fputs("; a study\n[sweep]\nmodel = gpt2, opt-1.3b\nbatch = 1, 8\nseq = 128, 512\n"
          "dtype = bf16, fp32\nclock = 510:1410:90\nvoltage_offset_mv = -50, 0\n"
          "[set]\nsms = 84, 108\n", f);
    fclose(f);
    wl_sweep_spec *a = wl_sweep_spec_create();
    wl_error err;
    assert_int_equal(wl_sweep_spec_load(a, p, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_finish(a, &err), WL_OK);
    wl_sweep_spec *b = spec_of(GRID, sizeof GRID / sizeof *GRID);
    char *x = run_to_string(a, 2, 0, 0, WL_FMT_CSV, NULL);
    char *y = run_to_string(b, 2, 0, 0, WL_FMT_CSV, NULL);
    assert_string_equal(x, y);
    free(x);
    free(y);
    wl_sweep_spec_free(a);
    wl_sweep_spec_free(b);
    /* errors name the file, line and field */
    f = fopen(p, "w");
    fputs("[sweep]\nmodel = gpt2\nclock = 900:100:10\n", f);
    fclose(f);
    a = wl_sweep_spec_create();
    assert_int_not_equal(wl_sweep_spec_load(a, p, &err), WL_OK);
    assert_string_equal(err.source, p);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.field, "clock");
    wl_sweep_spec_free(a);
    f = fopen(p, "w");
    fputs("[sweep]\nmodel = gpt2\n[set]\nwarp_drive = 1\n", f);
    fclose(f);
    a = wl_sweep_spec_create();
    assert_int_not_equal(wl_sweep_spec_load(a, p, &err), WL_OK);
    assert_int_equal(err.line, 4);
    assert_string_equal(err.field, "warp_drive");
    wl_sweep_spec_free(a);
    f = fopen(p, "w");
    fputs("[sweep]\nflavour = mint\n", f);
    fclose(f);
    a = wl_sweep_spec_create();
    assert_int_not_equal(wl_sweep_spec_load(a, p, &err), WL_OK);
    assert_int_equal(err.line, 2);
    wl_sweep_spec_free(a);
    unlink(p);
    /* values are checked when they are set, with their origin */
    a = wl_sweep_spec_create();
    assert_int_equal(wl_sweep_spec_set(a, "set", "sms=0,108", "--set", 0, &err), WL_EINVAL);
    assert_string_equal(err.source, "--set");
    assert_string_equal(err.field, "sms");
    assert_int_equal(wl_sweep_spec_set(a, "dtype", "int4", "--dtype", 0, &err), WL_EINVAL);
    assert_int_not_equal(wl_sweep_spec_set(a, "clock", "fast", "--clock", 0, &err), WL_OK);
    assert_int_not_equal(wl_sweep_spec_set(a, "batch", "99999999999", "--batch", 0, &err), WL_OK);
    assert_non_null(strstr(err.text, "[1, 1000000]"));
    assert_int_not_equal(wl_sweep_spec_set(a, "clock", "900,", "--clock", 0, &err), WL_OK);
    assert_non_null(strstr(err.text, "empty item"));
    wl_sweep_spec_free(a);
    /* errors found in finish name where the values came from: an unknown
     * model, a set value that breaks a relation, in a spec file */
    a = wl_sweep_spec_create();
    assert_int_equal(wl_sweep_spec_set(a, "model", "gpt9000", "--model", 0, &err), WL_OK);
    assert_int_not_equal(wl_sweep_spec_finish(a, &err), WL_OK);
    assert_string_equal(err.source, "--model");
    wl_sweep_spec_free(a);
    test_write_file(p, "[sweep]\nmodel = gpt2\ndtype = bf17\n");
    a = wl_sweep_spec_create();
    assert_int_not_equal(wl_sweep_spec_load(a, p, &err), WL_OK);
    assert_string_equal(err.source, p);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.field, "dtype");
    wl_sweep_spec_free(a);
    test_write_file(p, "[sweep]\nmodel = gpt2\n\n[set]\nsm_clock_min_mhz = 1500\n");
    a = wl_sweep_spec_create();
    assert_int_equal(wl_sweep_spec_load(a, p, &err), WL_OK);
    assert_int_not_equal(wl_sweep_spec_finish(a, &err), WL_OK);
    assert_string_equal(err.source, p);
    assert_int_equal(err.line, 5);
    wl_sweep_spec_free(a);
    test_write_file(p, "[sweep]\nmodel = gpt9000\n");
    a = wl_sweep_spec_create();
    assert_int_equal(wl_sweep_spec_load(a, p, &err), WL_OK);
    assert_int_not_equal(wl_sweep_spec_finish(a, &err), WL_OK);
    assert_string_equal(err.source, p);
    assert_int_equal(err.line, 2);
    wl_sweep_spec_free(a);
    /* the command line replaces a spec file's axis, repeated options add */
    test_write_file(p, "[sweep]\nmodel = gpt2\nclock = 510, 600\n");
    a = wl_sweep_spec_create();
    assert_int_equal(wl_sweep_spec_load(a, p, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_set(a, "clock", "900", "--clock", 0, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_set(a, "clock", "1000", "--clock", 0, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_finish(a, &err), WL_OK);
    size_t nclk;
    const double *clk = wl_sweep_spec_clocks(a, &nclk);
    assert_int_equal(nclk, 2);
    assert_close(clk[0], 900, 0);
    assert_close(clk[1], 1000, 0);
    wl_sweep_spec_free(a);
}

/* A stop request in the middle of a run leaves whole rows only, and fewer
 * than the whole grid. */
typedef struct {
    volatile sig_atomic_t *stop;
    int calls;
} stop_after;

static void stop_on_third(void *user, unsigned long long done, unsigned long long total)
{
    stop_after *s = user;
    (void)total;
    if (done > 0 && ++s->calls == 3)
        *s->stop = 1;
}

static void test_interrupt(void **state)
{
    (void)state;
    wl_sweep_spec *s = spec_of(GRID, sizeof GRID / sizeof *GRID);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    volatile sig_atomic_t stop = 0;
    stop_after sa = {&stop, 0};
    wl_sweep_options o = {.format = WL_FMT_CSV, .threads = 2, .progress = stop_on_third,
                          .progress_user = &sa};
    wl_sweep_stats st;
    wl_error err;
    assert_int_equal(wl_sweep_run(s, &o, f, &stop, &st, &err), WL_OK);
    fclose(f);
    assert_true(st.interrupted);
    /* the stop came after three chunks of 2 offsets x 11 clocks; the rows
     * finished by then (ready chunks, and a chunk cut at the point it
     * reached) follow in order: a prefix of the whole run's rows */
    assert_true(st.rows >= 3 * 22);
    assert_true(st.rows < wl_sweep_spec_points(s));
    assert_int_equal(buf[len - 1], '\n');
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    assert_int_equal(lines, st.rows + 1); /* the header and whole rows */
    char *whole = NULL;
    size_t wlen = 0;
    FILE *g = open_memstream(&whole, &wlen);
    wl_sweep_options o2 = {.format = WL_FMT_CSV, .threads = 2};
    assert_int_equal(wl_sweep_run(s, &o2, g, NULL, &st, &err), WL_OK);
    fclose(g);
    assert_true(wlen > len && memcmp(whole, buf, len) == 0);
    free(whole);
    free(buf);
    wl_sweep_spec_free(s);
}

/* Kernel scope: one row per kernel class and point; their busy times add
 * up to the GPU busy time. */
static void test_kernel_scope(void **state)
{
    (void)state;
    const char *kv[] = {"model", "gpt2", "clock", "900", "scope", "kernel"};
    wl_sweep_spec *s = spec_of(kv, 6);
    wl_sweep_stats st;
    char *out = run_to_string(s, 1, 0, 0, WL_FMT_CSV, &st);
    assert_int_equal(st.points, 1);
    assert_int_equal(st.rows, 5); /* gemm, batched_gemm, softmax, norm, elementwise */
    assert_non_null(strstr(out, ",kernel_class,class_launches,class_time_ms,class_dyn_energy_j,"
                                "class_energy_j,class_gflop,class_dram_gb\n"));
    /* 14 + 12 x 16 on transformers 5.x (test_cli derives it) */
    assert_non_null(strstr(out, ",elementwise,206,"));
    free(out);
    wl_sweep_spec_free(s);
}

/* A measured idle table replaces one GPU's idle curve and leaves the
 * others alone; a bare table with several GPUs, or one naming no GPU of
 * the sweep, is an error. */
static void test_idle_tables(void **state)
{
    (void)state;
    const char *p = test_path("wattlas-test-sweep-idle.csv");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("sm_clock_mhz,voltage_mv,idle_power_w\n", f);
    for (int mhz = 210; mhz <= 2040; mhz += 15)
        fprintf(f, "%d,,10\n", mhz);
    fclose(f);
    char idle[128];
    snprintf(idle, sizeof idle, "NVIDIA A10=%s", p);
    const char *const base[] = {"gpu", "a10-24gb,l4-24gb", "model", "gpt2", "clock", "900"};
    const char *const with[] = {"gpu", "a10-24gb,l4-24gb", "model", "gpt2", "clock", "900",
                                "idle", idle};
    wl_sweep_spec *a = spec_of(base, 6), *b = spec_of(with, 8);
    char *ta = run_to_string(a, 1, 0, 0, WL_FMT_CSV, NULL);
    char *tb = run_to_string(b, 1, 0, 0, WL_FMT_CSV, NULL);
    const char *a10a = strstr(ta, "\na10-24gb,"), *a10b = strstr(tb, "\na10-24gb,");
    const char *l4a = strstr(ta, "\nl4-24gb,"), *l4b = strstr(tb, "\nl4-24gb,");
    assert_non_null(a10a);
    assert_non_null(a10b);
    assert_non_null(l4a);
    assert_non_null(l4b);
    assert_string_equal(l4a, l4b); /* the L4 row is last and unchanged */
    /* power_w is the 16th column */
    double pw[2];
    const char *rows[2] = {a10a + 1, a10b + 1};
    for (int r = 0; r < 2; r++) {
        const char *q = rows[r];
        for (int k = 0; k < 15; k++)
            q = strchr(q, ',') + 1;
        pw[r] = atof(q);
    }
    assert_true(pw[0] - pw[1] > 20.0); /* rule ~37 W at 900 MHz, table 10 W */
    free(ta);
    free(tb);
    wl_sweep_spec_free(a);
    wl_sweep_spec_free(b);
    wl_error err;
    a = wl_sweep_spec_create();
    assert_int_equal(wl_sweep_spec_set(a, "gpu", "a10-24gb,l4-24gb", "cli", 0, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_set(a, "idle", p, "cli", 0, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_finish(a, &err), WL_EINVAL);
    assert_string_equal(err.field, "idle");
    wl_sweep_spec_free(a);
    a = wl_sweep_spec_create();
    snprintf(idle, sizeof idle, "h100-sxm-80gb=%s", p);
    assert_int_equal(wl_sweep_spec_set(a, "gpu", "a10-24gb", "cli", 0, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_set(a, "idle", idle, "cli", 0, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_finish(a, &err), WL_EINVAL);
    assert_non_null(strstr(err.text, "names no GPU"));
    wl_sweep_spec_free(a);
    unlink(p);
}

/* Field `col` (0-based) of a CSV line, as a number. */
static double csv_num(const char *line, int col)
{
    for (int c = 0; c < col && line; c++) {
        line = strchr(line, ',');
        line = line ? line + 1 : NULL;
    }
    return line ? strtod(line, NULL) : NAN;
}

/* Column index of name in a CSV header line, -1 if absent. */
static int csv_col(const char *header, const char *name)
{
    size_t n = strlen(name);
    int c = 0;
    for (const char *p = header; p && *p && *p != '\n'; c++) {
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\n' || !p[n]))
            return c;
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    return -1;
}

/* clock = max is the top clock as set (a lower bin through --set
 * sm_clock_max_mhz), and lowering the top clock of one die leaves a run
 * below both tops alone: the same SMs hold the same bytes in flight per
 * clock. A spec key that moves calibrated coefficients says so in a note;
 * a coefficient set by hand does not. */
static void test_clock_max_as_set(void **state)
{
    (void)state;
    const char *kv[] = {"gpu", "h100-sxm-80gb", "model", "gpt2", "clock", "max",
                        "set", "sm_clock_max_mhz=1500,1980"};
    wl_sweep_spec *s = spec_of(kv, 8);
    char *out = run_to_string(s, 1, 0, 0, WL_FMT_CSV, NULL);
    int cs = csv_col(out, "sm_clock_mhz"), cm = csv_col(out, "sm_clock_max_mhz");
    assert_true(cs >= 0 && cm >= 0);
    int rows = 0;
    for (char *line = strchr(out, '\n') + 1; *line; line = strchr(line, '\n') + 1, rows++)
        assert_close(csv_num(line, cs), csv_num(line, cm), 0);
    assert_int_equal(rows, 2);
    free(out);
    wl_sweep_spec_free(s);

    const char *kv2[] = {"gpu", "h100-sxm-80gb", "model", "gpt2", "batch", "8", "seq", "512",
                         "clock", "990", "set", "sm_clock_max_mhz=1500,1980"};
    s = spec_of(kv2, 12);
    out = run_to_string(s, 1, 0, 0, WL_FMT_CSV, NULL);
    int ct = csv_col(out, "time_ms"), ce = csv_col(out, "energy_j");
    char *l1 = strchr(out, '\n') + 1, *l2 = strchr(l1, '\n') + 1;
    assert_true(*l2);
    assert_close(csv_num(l1, ct), csv_num(l2, ct), 1e-9 * csv_num(l1, ct));
    assert_close(csv_num(l1, ce), csv_num(l2, ce), 1e-9 * csv_num(l1, ce));
    for (size_t i = 0; i < wl_sweep_spec_note_count(s); i++)
        assert_null(strstr(wl_sweep_spec_note(s, i), "transfer rules"));
    free(out);
    wl_sweep_spec_free(s);

    const char *kv3[] = {"gpu", "h100-sxm-80gb", "model", "gpt2", "clock", "990",
                         "set", "dram_bw_gbs=6700"};
    s = spec_of(kv3, 8);
    int said = 0;
    for (size_t i = 0; i < wl_sweep_spec_note_count(s); i++) {
        const char *n = wl_sweep_spec_note(s, i);
        said |= strstr(n, "transfer rules") && strstr(n, "mem_path_gbs") &&
                strstr(n, "dram_background_w") && !strstr(n, "c_tc_w");
    }
    assert_true(said);
    wl_sweep_spec_free(s);
    const char *kv4[] = {"gpu", "h100-sxm-80gb", "model", "gpt2", "clock", "990",
                         "set", "c_tc_w=300"};
    s = spec_of(kv4, 8);
    for (size_t i = 0; i < wl_sweep_spec_note_count(s); i++)
        assert_null(strstr(wl_sweep_spec_note(s, i), "transfer rules"));
    wl_sweep_spec_free(s);
}

/* Writes the built-in h100-sxm-80gb preset to path, its [memory]
 * dram_bw_gbs replaced by bw (0: unchanged). */
static void write_h100_copy(const char *path, double bw)
{
    const char *text = wl_preset_text(WL_PRESET_GPU, "h100-sxm-80gb");
    assert_non_null(text);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    int done = 0;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
        if (bw > 0 && !done && !strncmp(p, "dram_bw_gbs", 11)) {
            fprintf(f, "dram_bw_gbs = %g\n", bw);
            done = 1;
        } else {
            fwrite(p, 1, n, f);
        }
        p += n;
    }
    fclose(f);
    assert_true(bw <= 0 || done);
}

/* An edited copy of a built-in preset keeps the built-in's id in its file;
 * beside the built-in it is named by its file's stem, with a note, and an
 * unedited copy keeps the id. */
static void test_edited_copy_named(void **state)
{
    (void)state;
    char mine[600], same[600], clash[600];
    snprintf(mine, sizeof mine, "%s", test_path("mine.ini"));
    snprintf(same, sizeof same, "%s", test_path("same.ini"));
    snprintf(clash, sizeof clash, "%s", test_path("h100-sxm-80gb.ini"));
    write_h100_copy(mine, 6700);
    write_h100_copy(same, 0);
    write_h100_copy(clash, 4000);
    char list[2000];
    snprintf(list, sizeof list, "h100-sxm-80gb,%s,%s,%s", mine, same, clash);
    const char *kv[] = {"gpu", list, "model", "gpt2", "clock", "990"};
    wl_sweep_spec *s = spec_of(kv, 6);
    assert_string_equal(wl_sweep_spec_gpu(s, 0)->id, "h100-sxm-80gb");
    assert_string_equal(wl_sweep_spec_gpu(s, 1)->id, "mine");
    assert_string_equal(wl_sweep_spec_gpu(s, 2)->id, "h100-sxm-80gb");
    assert_string_equal(wl_sweep_spec_gpu(s, 3)->id, "h100-sxm-80gb-edited");
    assert_close(wl_sweep_spec_gpu(s, 1)->dram_bw_gbs, 6700, 0);
    int said = 0;
    for (size_t i = 0; i < wl_sweep_spec_note_count(s); i++) {
        const char *n = wl_sweep_spec_note(s, i);
        said += strstr(n, "dram_bw_gbs differs") && (strstr(n, "named mine") ||
                                                     strstr(n, "named h100-sxm-80gb-edited"));
    }
    assert_int_equal(said, 2);
    wl_sweep_spec_free(s);
}

/* An unknown --set key names the close ones and where the list is. */
/* A --set grid larger than is checked variant by variant up front: each
 * value is checked on its own before anything is written (a bad one names
 * its key), a combination that is bad only together stops the run at its
 * chunk with its error; a clock step that would make more clocks than a
 * list may hold is refused. */
static void test_set_grid_checks(void **state)
{
    (void)state;
    wl_sweep_spec *s = wl_sweep_spec_create();
    wl_error err;
    /* 2 x 2 x 10001 variants: past the up-front check of every one */
    const char *kv[] = {"model", "gpt2", "clock", "1200", "set", "sm_clock_min_mhz=210,1250",
                        "set", "sm_clock_max_mhz=1410,1240", "set", "dram_bw_gbs=1500:2500:0.1"};
    for (size_t i = 0; i < sizeof kv / sizeof *kv; i += 2)
        assert_int_equal(wl_sweep_spec_set(s, kv[i], kv[i + 1], "spec.ini", (int)i + 1, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_finish(s, &err), WL_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    wl_sweep_options o = {.format = WL_FMT_CSV, .threads = 2};
    wl_sweep_stats st;
    /* min 1250 with max 1240: the last quarter of the variants (the first
     * key outermost), reached after the other three */
    assert_int_equal(wl_sweep_run(s, &o, f, NULL, &st, &err), WL_EINVAL);
    assert_non_null(strstr(err.text, "sm_clock_min_mhz <= sm_clock_max_mhz"));
    assert_int_equal(st.points, 3 * 10001);
    fclose(f);
    free(buf);
    wl_sweep_spec_free(s);
    /* one value bad on its own: refused before any row */
    s = wl_sweep_spec_create();
    const char *kv2[] = {"model", "gpt2", "set", "sm_clock_min_mhz=210,1500", "set",
                         "dram_bw_gbs=1500:2500:0.1"};
    for (size_t i = 0; i < sizeof kv2 / sizeof *kv2; i += 2)
        assert_int_equal(wl_sweep_spec_set(s, kv2[i], kv2[i + 1], "spec.ini", (int)i + 1, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_finish(s, &err), WL_EINVAL);
    assert_string_equal(err.field, "sm_clock_min_mhz");
    assert_int_equal(err.line, 3);
    assert_non_null(strstr(err.text, "sm_clock_min_mhz = 1500"));
    wl_sweep_spec_free(s);
    /* a step of 1e-9 MHz: 1.2e12 clocks, not cut to a million */
    s = wl_sweep_spec_create();
    assert_int_equal(wl_sweep_spec_set(s, "set", "sm_clock_step_mhz=1e-9", "spec.ini", 2, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_finish(s, &err), WL_EINVAL);
    assert_string_equal(err.field, "sm_clock_step_mhz");
    assert_non_null(strstr(err.text, "coarser step"));
    wl_sweep_spec_free(s);
    /* 1000 x 99,991 x 901 variants: warned of with its size and axes
     * before work starts; a shard of it sets up and runs at once (the rows
     * counted in closed form, not variant by variant); 100 voltage offsets
     * more pass the 1e15 points a sweep indexes: refused, naming the
     * largest axis where it was given */
    s = wl_sweep_spec_create();
    const char *kv3[] = {"model", "gpt2", "clock", "1000", "set", "sms=1:1000:1",
                         "set", "dram_bw_gbs=1000:100990:1", "set", "power_limit_w=150:1050:1"};
    for (size_t i = 0; i < sizeof kv3 / sizeof *kv3; i += 2)
        assert_int_equal(wl_sweep_spec_set(s, kv3[i], kv3[i + 1], "spec.ini", (int)i + 1, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_finish(s, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_warning_count(s), 1);
    assert_non_null(strstr(wl_sweep_spec_warning(s, 0),
                           "9.01e+10 points (sms 1000 x dram_bw_gbs 99991 x power_limit_w 901)"));
    buf = NULL;
    f = open_memstream(&buf, &len);
    o.shard_index = 500000;
    o.shard_count = 1000000;
    assert_int_equal(wl_sweep_run(s, &o, f, NULL, &st, &err), WL_OK);
    fclose(f);
    assert_int_equal(st.points, 90092); /* 9.0092e10 / 1e6 */
    assert_non_null(strstr(buf, " rows=90092 "));
    free(buf);
    wl_sweep_spec_free(s);
    s = wl_sweep_spec_create();
    for (size_t i = 0; i < sizeof kv3 / sizeof *kv3; i += 2)
        assert_int_equal(wl_sweep_spec_set(s, kv3[i], kv3[i + 1], "spec.ini", (int)i + 1, &err), WL_OK);
    /* (1000 is the spec's clock already: a value twice is refused) */
    assert_int_equal(wl_sweep_spec_set(s, "clock", "400:999:1, 1001:1400:1", "spec.ini", 20, &err),
                     WL_OK);
    assert_int_equal(wl_sweep_spec_set(s, "voltage_offset_mv", "-50:49:1", "spec.ini", 21, &err), WL_OK);
    assert_int_equal(wl_sweep_spec_finish(s, &err), WL_EINVAL);
    assert_string_equal(err.field, "dram_bw_gbs");
    assert_int_equal(err.line, 7);
    /* 9.0092e10 x 100 offsets x 1001 clocks */
    assert_non_null(strstr(err.text, "9.02e+15 points ("));
    assert_non_null(strstr(err.text, "voltage_offset_mv 100 x clock 1001)"));
    wl_sweep_spec_free(s);
}

static void test_set_key_hint(void **state)
{
    (void)state;
    wl_sweep_spec *s = wl_sweep_spec_create();
    wl_error err;
    assert_int_not_equal(wl_sweep_spec_set(s, "set", "dram_bw=6700", "spec.ini", 7, &err), WL_OK);
    assert_string_equal(err.source, "spec.ini");
    assert_int_equal(err.line, 7);
    assert_string_equal(err.field, "dram_bw");
    assert_non_null(strstr(err.text, "did you mean dram_bw_gbs?"));
    assert_non_null(strstr(err.text, "presets show"));
    /* a sweep key too (Python's keywords are these keys) */
    assert_int_not_equal(wl_sweep_spec_set(s, "clocks", "990", "py", 0, &err), WL_OK);
    assert_non_null(strstr(err.text, "unknown sweep key; did you mean clock?"));
    wl_sweep_spec_free(s);
}

/* A long clock list: a combination's points are cut into chunks of at
 * most 4096 (its rows formatted in memory before they are written), and
 * the output is the same for any thread count and any sharding: 2 GPUs
 * with clock grids of their own x 2 models x 2 offsets x up to 9,001 clocks. */
static void test_long_clock_list(void **state)
{
    (void)state;
    static const char *const kv[] = {"gpu", "a100-pcie-40gb,h100-sxm-80gb", "model", "gpt2,bert-large",
                                     "clock", "210:2010:0.2", "voltage_offset_mv", "-20,0"};
    wl_sweep_spec *s = spec_of(kv, sizeof kv / sizeof *kv);
    wl_sweep_options o = {.format = WL_FMT_CSV, .threads = 1};
    wl_sweep_plan *p = NULL;
    wl_error err;
    assert_int_equal(wl_sweep_plan_create(s, &o, &p, &err), WL_OK);
    assert_true(wl_sweep_plan_chunks(p) >= 4 * 3);
    unsigned long long rows = 0;
    for (unsigned long long i = 0; i < wl_sweep_plan_chunks(p); i++) {
        wl_results_buf b = {0};
        wl_sweep_tally t;
        assert_int_equal(wl_sweep_plan_chunk(p, i, NULL, &b, &t, &err), WL_OK);
        unsigned long long n = 0;
        for (size_t k = 0; k < b.n; k++)
            n += b.p[k] == '\n';
        assert_true(n <= 4096);
        assert_int_equal(n, t.points);
        rows += n;
        wl_results_buf_free(&b);
    }
    wl_sweep_plan_free(p);
    wl_sweep_stats st;
    char *a = run_to_string(s, 1, 0, 0, WL_FMT_CSV, &st);
    assert_int_equal(rows, st.points);
    assert_true(rows > 4ULL * 2 * 4096);
    char *b = run_to_string(s, 2, 0, 0, WL_FMT_CSV, NULL);
    assert_string_equal(a, b);
    /* the clocks in order: they fall back only between the 8 runs of
     * (gpu, model, offset) */
    const char *line = strchr(a, '\n') + 1;
    double prev = -1;
    unsigned long long n = 0, falls = 0;
    while (*line) {
        const char *c = line;
        for (int f = 0; f < 9; f++) /* the sm_clock_mhz column */
            c = strchr(c, ',') + 1;
        double clk = strtod(c, NULL);
        falls += clk < prev;
        assert_true(clk != prev);
        prev = clk;
        n++;
        line = strchr(line, '\n') + 1;
    }
    assert_int_equal(n, rows);
    assert_int_equal(falls, 7);
    /* three shards, merged, are the whole run */
    const char *paths[3];
    char names[3][600];
    for (unsigned i = 1; i <= 3; i++) {
        char *part = run_to_string(s, 2, i, 3, WL_FMT_CSV, NULL);
        snprintf(names[i - 1], sizeof names[0], "%s", test_path(i == 1 ? "l1.csv" : i == 2 ? "l2.csv" : "l3.csv"));
        test_write_file(names[i - 1], part);
        paths[i - 1] = names[i - 1];
        free(part);
    }
    char *merged = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&merged, &len);
    assert_int_equal(wl_sweep_merge(paths, 3, m, &err), WL_OK);
    fclose(m);
    assert_string_equal(merged, a);
    free(merged);
    free(a);
    free(b);
    wl_sweep_spec_free(s);
    /* GPUs whose clock lists differ, each with several combinations inside
     * a slice: each shard's rows= is its rows, which merge checks */
    static const char *const kv2[] = {"gpu", "a100-pcie-40gb,h100-sxm-80gb", "model",
                                      "gpt2,bert-large,opt-1.3b", "batch", "1,2",
                                      "clock", "210:2010:100"};
    s = spec_of(kv2, sizeof kv2 / sizeof *kv2);
    a = run_to_string(s, 1, 0, 0, WL_FMT_CSV, NULL);
    for (unsigned i = 1; i <= 2; i++) {
        char *part = run_to_string(s, 1, i, 2, WL_FMT_CSV, NULL);
        test_write_file(names[i - 1], part);
        free(part);
    }
    m = open_memstream(&merged, &len);
    assert_int_equal(wl_sweep_merge(paths, 2, m, &err), WL_OK);
    fclose(m);
    assert_string_equal(merged, a);
    free(merged);
    free(a);
    wl_sweep_spec_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_tables),
        cmocka_unit_test(test_clock_max_as_set),
        cmocka_unit_test(test_edited_copy_named),
        cmocka_unit_test(test_set_key_hint), cmocka_unit_test(test_set_grid_checks),
        cmocka_unit_test(test_threads_identical),  cmocka_unit_test(test_shards_merge),
        cmocka_unit_test(test_long_clock_list),
        cmocka_unit_test(test_infeasible_marking), cmocka_unit_test(test_spec_file_and_errors),
        cmocka_unit_test(test_interrupt),          cmocka_unit_test(test_kernel_scope),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
