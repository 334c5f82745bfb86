/* wattlas calibrate */
#include "cli.h"
#include "../calib/wattlas_calib.h"
#include "../presets/wattlas_presets.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas calibrate --gpu ID MEASUREMENTS.csv -o FILE.ini [options]\n\n"
"Fits the GPU's latency and power coefficients to measured rows (GSL\n"
"nonlinear least squares on ln time and ln power ratios, anchored by the\n"
"measured temperature, Huber-reweighted against outliers) and writes a\n"
"preset: the GPU's spec-sheet part unchanged plus a [calibration] section\n"
"with the fitted values and their standard errors, the data's fingerprint\n"
"and this command, and a [covariance] section for prediction intervals.\n"
"Rows that cannot be modelled or whose measurement is impossible (not\n"
"positive, below idle power, power != energy/time) are reported and\n"
"excluded. Residuals per workload and in-sample figures go to stderr. The\n"
"input may also be given as --in FILE.\n\n"
"  --fit WHAT            what the rows move: gpu (every GPU coefficient, the\n"
"                        default for a GPU with fitted coefficients), host (only\n"
"                        the host's per-kernel issue cost, from a few launch-bound\n"
"                        rows; -o then writes a host preset), gpu,host (both; the\n"
"                        host preset goes to --host-out), a list of coefficient\n"
"                        names, or auto (few-shot, the default for a GPU whose\n"
"                        coefficients are transferred: the preset's coefficients\n"
"                        are the prior, each +-REL; only those the rows identify\n"
"                        move, and the output says which; works from 3-5 rows)\n"
"  --transfer-sd REL     the prior's relative spread for --fit auto (default 0.3)\n"
"  --host ID|FILE.ini    the host the rows were measured on (default: the GPU\n"
"                        preset's host class, presets/hosts/)\n"
"  --host-out FILE.ini   where --fit gpu,host writes the fitted host preset\n"
"  --traces DIR          predict rows from traces where DIR has one\n"
"  --idle TABLE.csv      replace the preset's V-f/idle table by one derived\n"
"                        from this idle measurement (sm_clock_mhz,voltage_mv,\n"
"                        idle_power_w)\n"
"  --holdout MODEL,...   fit without these models and score them (held-out)\n"
"  --kfold K             also report K-fold cross-validated error (whole\n"
"                        workloads per fold)\n"
"  --lomo                also report leave-one-model-out error\n"
"  --from-preset         start from the preset's coefficients instead of the\n"
"                        physical defaults (the result may then depend on them)\n"
"  --prior-weight W      pull towards the physical defaults (default 0.3,\n"
"                        chosen by leave-one-model-out cross-validation)\n"
"  --quiet               no per-row and per-workload lines on stderr\n");
}

typedef struct {
    const char *traces, *gpu_id, *out, *holdout, *idle, *path, *host, *host_out;
    int fit_gpu, fit_host; /* --fit: the GPU's coefficients, the host's issue cost */
    int fit_given;         /* --fit was given (else chosen by the GPU's coefficients) */
    wl_core_strlist held_out; /* --holdout's models */
    long long kfold;
    int lomo, quiet;
    wl_calib_fit_options fit;
    char *command;
} cal_opts;

/* The coefficients of the host's issue cost (host) or all the others. */
static unsigned long long coef_mask(int host)
{
    unsigned long long m = 0;
    for (int i = 0; i < wl_calib_param_count(); i++)
        if (wl_core_coef_is_host(wl_calib_param_name(i)) == host)
            m |= 1ull << i;
    return m;
}

/* --fit gpu|host|gpu,host|NAME,...: which coefficients the rows move. */
static int fit_option(cal_opts *o, const char *value)
{
    wl_core_strlist l = {0};
    wl_error err = {0};
    int rc = 0;
    if (wl_core_parse_names(value, "--fit", 0, "fit", &l, &err))
        return cli_fail("calibrate", &err);
    o->fit.free_mask = 0;
    o->fit_gpu = o->fit_host = 0;
    o->fit.auto_select = 0;
    o->fit_given = 1;
    const unsigned long long host = coef_mask(1);
    if (l.n == 1 && !strcmp(l.v[0], "auto")) {
        wl_core_strlist_free(&l);
        o->fit.auto_select = 1;
        o->fit_gpu = 1;
        return 0;
    }
    for (size_t i = 0; i < l.n && !rc; i++) {
        int k;
        if (!strcmp(l.v[i], "auto"))
            rc = cli_usage("calibrate", "--fit auto: alone, not in a list");
        else if (!strcmp(l.v[i], "gpu"))
            o->fit.free_mask |= coef_mask(0);
        else if (!strcmp(l.v[i], "host"))
            o->fit.free_mask |= host;
        else if ((k = wl_calib_param_index(l.v[i])) >= 0)
            o->fit.free_mask |= 1ull << k;
        else
            rc = cli_usage("calibrate", "--fit: expected gpu, host or coefficient names "
                           "(as in [calibration]), got '%.60s'", l.v[i]);
    }
    wl_core_strlist_free(&l);
    o->fit_host = (o->fit.free_mask & host) != 0;
    o->fit_gpu = (o->fit.free_mask & ~host) != 0;
    return rc;
}

static int cal_parse(int argc, char **argv, cal_opts *o)
{
    const char *cmd = "calibrate";
    static const struct option lo[] = {{"traces", required_argument, 0, 't'},
                                       {"gpu", required_argument, 0, 'g'},
                                       {"idle", required_argument, 0, 'i'},
                                       {"holdout", required_argument, 0, 'H'},
                                       {"kfold", required_argument, 0, 'k'},
                                       {"lomo", no_argument, 0, 'L'},
                                       {"from-preset", no_argument, 0, 'F'},
                                       {"prior-weight", required_argument, 0, 'p'},
                                       {"in", required_argument, 0, 'N'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"fit", required_argument, 0, 'W'},
                                       {"host", required_argument, 0, 'O'},
                                       {"host-out", required_argument, 0, 'U'},
                                       {"transfer-sd", required_argument, 0, 'T'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *in = NULL;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 't': o->traces = optarg; break;
        case 'g': o->gpu_id = optarg; break;
        case 'i': o->idle = optarg; break;
        case 'H': {
            wl_error err = {0};
            o->holdout = optarg;
            wl_core_strlist_free(&o->held_out);
            if (wl_core_parse_names(optarg, "--holdout", 0, "", &o->held_out, &err))
                rc = cli_fail(cmd, &err);
            break;
        }
        case 'L': o->lomo = 1; break;
        case 'F': o->fit.from_defaults = 0; break;
        case 'N': in = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'k': rc = cli_int(cmd, "--kfold", optarg, 2, 1000, &o->kfold); break;
        case 'p': rc = cli_real(cmd, "--prior-weight", optarg, 0, 1e6, &o->fit.prior_weight); break;
        case 'o': o->out = optarg; break;
        case 'O': o->host = optarg; break;
        case 'U': o->host_out = optarg; break;
        case 'W': rc = fit_option(o, optarg); break;
        case 'T': rc = cli_real(cmd, "--transfer-sd", optarg, 0.01, 10, &o->fit.transfer_rel); break;
        case 'h': help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv); break;
        }
    }
    if (!rc)
        rc = cli_input(cmd, in, argc, argv, optind, &o->path);
    if (rc)
        return rc;
    if (!o->gpu_id)
        return cli_usage(cmd, "--gpu is required");
    if (!o->fit_given) {
        o->fit_gpu = 1; /* every GPU coefficient, the host held (or auto: cal_run) */
        o->fit.free_mask = coef_mask(0);
    }
    if (o->fit_host && o->fit_gpu && !o->host_out)
        return cli_usage(cmd, "--fit with the host and GPU coefficients needs --host-out FILE.ini");
    if (o->host_out && o->fit_given && !(o->fit_host && o->fit_gpu) && !o->fit.auto_select)
        return cli_usage(cmd, "--host-out: only with --fit gpu,host or auto (--fit host writes -o)");
    if (!o->out)
        return cli_usage(cmd, "-o FILE.ini is required");
    if (!o->path)
        return cli_usage(cmd, "expected one MEASUREMENTS.csv");
    if (!(o->command = cli_command_line(argc, argv))) {
        fprintf(stderr, "wattlas %s: out of memory\n", cmd);
        return EXIT_RUNTIME;
    }
    return 0;
}

static void print_metrics(const char *what, const wl_calib_metrics *m)
{
    char t[200];
    wl_calib_mape_text(t, sizeof t, m->n, m->n_power, m->mape_time, m->mape_power,
                       m->mape_energy);
    fprintf(stderr, "%s (%zu rows): MAPE %s", what, m->n, t);
    if (m->n_regret)
        fprintf(stderr, "; clock regret worst %.2f%% (%s), mean %.2f%%", m->worst_regret,
                m->worst_regret_workload, m->mean_regret);
    fputc('\n', stderr);
}

static void print_wl(void *user, const wl_calib_wl_stats *s)
{
    (void)user;
    if (!s->n_power) { /* time only */
        fprintf(stderr, "  %-34s %3zu  %6.2f %+7.2f  %6s %7s  %6s %7s\n", s->key, s->n,
                s->mape_time, s->bias_time, "-", "-", "-", "-");
        return;
    }
    fprintf(stderr, "  %-34s %3zu  %6.2f %+7.2f  %6.2f %+7.2f  %6.2f %+7.2f\n", s->key, s->n,
            s->mape_time, s->bias_time, s->mape_power, s->bias_power, s->mape_energy,
            s->bias_energy);
}

/* Whether a model is in the list. */
static int listed(const wl_core_strlist *list, const char *model)
{
    for (size_t i = 0; i < list->n; i++)
        if (strcmp(list->v[i], model) == 0)
            return 1;
    return 0;
}

/* Cross-validated figures on the training rows (held-out rows in no fold). */
static void crossval(const cal_opts *o, wl_calib_problem *p, const unsigned char *train,
                     size_t n, int *fold)
{
    if (o->kfold) {
        int nf = wl_calib_folds_kfold(p, (int)o->kfold, fold);
        for (size_t i = 0; i < n; i++)
            if (!train[i])
                fold[i] = -2; /* held out entirely: in no fold, in no training set */
        wl_calib_metrics km;
        if (nf >= 2 && wl_calib_crossval(p, fold, nf, &o->fit, &km, NULL) == WL_OK) {
            char what[64];
            snprintf(what, sizeof what, "%d-fold cross-validated", nf);
            print_metrics(what, &km);
        } else {
            fprintf(stderr, "%lld-fold: too few workloads\n", o->kfold);
        }
    }
    if (o->lomo) {
        char names[64][64];
        wl_calib_metrics per[64], lm;
        int nf = wl_calib_folds_by_model(p, fold, names, 64);
        for (size_t i = 0; i < n; i++)
            if (!train[i])
                fold[i] = -2;
        if (nf >= 2 && wl_calib_crossval(p, fold, nf, &o->fit, &lm, per) == WL_OK) {
            for (int f = 0; f < nf; f++)
                fprintf(stderr, "  without %-12s (%3zu rows): time %5.1f%%  power %5.1f%%  energy %5.1f%%\n",
                        names[f], per[f].n, per[f].mape_time, per[f].mape_power,
                        per[f].mape_energy);
            print_metrics("leave-one-model-out", &lm);
        }
    }
}

/* The host's issue cost before and after, with its standard error. */
static void report_host(const wl_core_gpu *before, const wl_core_gpu *after,
                        const wl_calib_fit_info *info)
{
    double se[WL_CALIB_MAXP] = {0};
    if (info->unc.valid)
        wl_calib_stderr(&info->unc, se);
    int k = wl_calib_param_index("host_launch_us"), ko = wl_calib_param_index("host_op_launch_us");
    const char *id = before->host_id[0] ? before->host_id : "(the preset's own)";
    if (info->fitted >> k & 1ull)
        fprintf(stderr, "host %s: issue cost %.2f us per kernel of a model -> %.2f +- %.2f us\n",
                id, before->coef.host_launch_us, after->coef.host_launch_us, se[k]);
    if (info->fitted >> ko & 1ull)
        fprintf(stderr, "host %s: issue cost %.2f us per kernel of a bare op in a loop -> "
                        "%.2f +- %.2f us\n", id,
                wl_core_coeffs_op_launch_us(&before->coef),
                after->coef.host_op_launch_us, se[ko]);
}

/* The fitted host as a preset named after its file. */
static int write_host(const cal_opts *o, const char *path, const wl_core_gpu *fitted,
                      const wl_calib_fit_info *info, size_t rows, wl_error *err)
{
    /* a bare op's cost only when rows of bare ops fitted it (else, unstated,
     * it is the model's) */
    int ko = wl_calib_param_index("host_op_launch_us");
    wl_core_host h = {.launch_us = fitted->coef.host_launch_us,
                      .op_launch_us = info->fitted >> ko & 1ull ? fitted->coef.host_op_launch_us : 0};
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t bl = strlen(base);
    if (bl > 4 && !strcmp(base + bl - 4, ".ini"))
        bl -= 4;
    if (!bl || bl >= sizeof h.id)
        base = "host", bl = 4; /* no usable name in the path */
    snprintf(h.id, sizeof h.id, "%.*s", (int)bl, base);
    snprintf(h.name, sizeof h.name, "host fitted to %.100s", o->path);
    double se[WL_CALIB_MAXP] = {0};
    if (info->unc.valid) {
        wl_calib_stderr(&info->unc, se);
        h.launch_us_stderr = se[wl_calib_param_index("host_launch_us")];
        h.op_launch_us_stderr = h.op_launch_us > 0 ? se[ko] : 0;
    }
    char *src = wl_core_strprintf("fitted by wattlas calibrate to %zu rows of %s (GPU %s)", rows,
                                  o->path, fitted->id);
    if (!src) {
        wl_error_set(err, path, 0, "", "out of memory");
        return WL_ENOMEM;
    }
    wl_results_out *out = NULL;
    int rc = wl_results_out_open(path, &out, err);
    if (!rc) {
        FILE *f = wl_results_out_stream(out);
        wl_preset_write_host(f, &h);
        wl_calib_write_info(f, "source", src);
        wl_calib_write_info(f, "command", o->command);
        rc = wl_results_out_commit(out, err);
    }
    free(src);
    return rc;
}

/* What a few-shot fit moved (prior -> fitted +- se, and the information the
 * rows gave it in units of the prior's) and what it held; *note gets the
 * one-line summary for the preset. */
static void report_few_shot(const wl_core_gpu *before, const wl_core_gpu *after,
                            const wl_calib_fit_info *info, const wl_calib_fit_options *fo,
                            size_t rows, char **note)
{
    double se[WL_CALIB_MAXP] = {0};
    if (info->unc.valid)
        wl_calib_stderr(&info->unc, se);
    const char *prior = before->coef_source[0] ? before->coef_source : "the preset's calibration";
    fprintf(stderr, "few-shot: prior %s, each coefficient +-%.0f%%; %zu rows identify %d of %d "
                    "coefficients:\n", prior, 100 * fo->transfer_rel, rows, info->n_chosen,
            wl_calib_param_count());
    char *list = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&list, &len);
    for (int j = 0; j < info->n_chosen; j++) {
        int i = info->chosen[j];
        const char *name = wl_calib_param_name(i);
        double v0 = 0, v1 = 0;
        wl_preset_gpu_get(before, name, &v0);
        wl_preset_gpu_get(after, name, &v1);
        fprintf(stderr, "  %-20s %12.6g -> %12.6g +- %-10.4g (information %.1fx the prior's)\n",
                name, v0, v1, se[i], info->gain[j]);
        if (m)
            fprintf(m, "%s%s", j ? ", " : "", name);
    }
    if (!info->n_chosen)
        fprintf(stderr, "  none: the rows add less than the prior knows; the transfer stands\n");
    fprintf(stderr, "  the other %d stay at the prior (their standard errors are its spread)\n",
            wl_calib_param_count() - info->n_chosen);
    if (m && fclose(m) == 0)
        *note = wl_core_strprintf("prior %s (+-%g each); fitted to %zu rows: %s; the others "
                                  "held at the prior", prior, fo->transfer_rel, rows,
                                  info->n_chosen ? list : "none");
    free(list);
}

static int cal_run(const cal_opts *o)
{
    const char *cmd = "calibrate";
    wl_error err = {0};
    wl_core_gpu gpu;
    int status = EXIT_RUNTIME;
    char *file_text = NULL, *vf_text = NULL, *few_note = NULL;
    wl_calib_fit_options fo = o->fit;
    wl_calib_uncertainty pu;
    wl_calib_set *set = NULL;
    wl_calib_problem *p = NULL;
    unsigned char *train = NULL, *test = NULL;
    int *fold = NULL;
    wl_results_out *out = NULL;
    int rc = wl_preset_gpu_load(o->gpu_id, &gpu, &err);
    if (rc) {
        if (rc == WL_ENOTFOUND && !err.line)
            wl_error_locate(&err, "--gpu", 0);
        status = cli_fail(cmd, &err);
        goto done;
    }
    if (o->host && (rc = wl_preset_gpus_set_host(o->host, &gpu, 1, &err))) {
        if (rc == WL_ENOTFOUND && !err.line)
            wl_error_locate(&err, "--host", 0);
        status = cli_fail(cmd, &err);
        goto done;
    }
    /* a GPU that has only transferred coefficients is calibrated few-shot
     * unless --fit says otherwise; the transfer (and the source's own
     * uncertainty) is the prior */
    if (!o->fit_given && gpu.coef_source[0])
        fo.auto_select = 1;
    if (fo.auto_select) {
        wl_error e2 = {0};
        if (wl_calib_uncertainty_load(o->gpu_id, &pu, &e2) == WL_OK && pu.valid)
            fo.prior_unc = &pu;
        fo.free_mask = 0; /* every coefficient, the host's issue cost included */
    } else if (o->host_out && !(o->fit_host && o->fit_gpu)) {
        status = cli_usage(cmd, "--host-out: only with --fit gpu,host or auto (--fit host writes -o)");
        goto done;
    }
    /* the preset text to carry over */
    const char *text;
    if (wl_preset_find(WL_PRESET_GPU, o->gpu_id, &text, &file_text, NULL, 0, &err)) {
        status = cli_fail(cmd, &err);
        goto done;
    }
    if (o->idle) {
        wl_core_gpu g2;
        char *spec = NULL;
        if (wl_calib_vf_section(o->idle, gpu.v_ref_mv, &vf_text, &err) ||
            !(spec = wl_calib_preset_spec(text, vf_text)) ||
            wl_preset_gpu_parse(spec, o->idle, &g2, &err)) {
            free(spec);
            status = cli_fail(cmd, &err);
            goto done;
        }
        free(spec);
        gpu.vf = g2.vf;
    }
    if (wl_calib_load(o->path, &set, &err) || wl_calib_problem_create(&gpu, set, o->traces, &p, &err)) {
        status = cli_fail(cmd, &err);
        goto done;
    }
    size_t n = wl_calib_count(set), used = 0, held = 0;
    train = calloc(n, 1);
    test = calloc(n, 1);
    fold = calloc(n, sizeof *fold);
    if (!train || !test || !fold) {
        fprintf(stderr, "wattlas calibrate: out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const char *reason = NULL;
        const wl_calib_row *r = wl_calib_row_at(set, i);
        if (!wl_calib_row_scored(p, i, &reason)) {
            if (!o->quiet)
                fprintf(stderr, "%s:%d: excluded: %s\n", o->path, r->line, reason);
            continue;
        }
        int out_of_fit = o->holdout && listed(&o->held_out, r->model);
        test[i] = (unsigned char)out_of_fit;
        train[i] = (unsigned char)!out_of_fit;
        used += !out_of_fit;
        held += (size_t)out_of_fit;
    }
    if (o->holdout && !held) {
        status = cli_usage(cmd, "--holdout %s matches no usable row", o->holdout);
        goto done;
    }
    wl_calib_metrics before, after;
    wl_calib_score(p, train, &before);
    wl_core_gpu fitted;
    wl_calib_fit_info info;
    rc = wl_calib_fit(p, train, &fo, &fitted, &info);
    if (rc) {
        fprintf(stderr, "wattlas calibrate: %s: cannot fit: %s\n", o->path,
                info.message[0] ? info.message : wl_core_strerror(rc));
        goto done;
    }
    wl_calib_problem_set_gpu(p, &fitted);
    wl_calib_score(p, train, &after);
    fprintf(stderr, "fit: %zu rows, %d iterations, cost %.4f -> %.4f\n", used, info.iterations,
            info.cost_initial, info.cost_final);
    if (!o->quiet) {
        fprintf(stderr, "residuals per workload (in-sample; MAPE and mean signed error, %%):\n"
                        "  %-34s %3s  %6s %7s  %6s %7s  %6s %7s\n",
                "workload", "n", "time", "bias", "power", "bias", "energy", "bias");
        wl_calib_per_workload(p, train, print_wl, NULL);
    }
    print_metrics("in-sample before", &before);
    print_metrics("in-sample after ", &after);
    if (o->holdout) {
        wl_calib_metrics hm;
        if (!o->quiet) {
            fprintf(stderr, "held-out residuals per workload:\n");
            wl_calib_per_workload(p, test, print_wl, NULL);
        }
        if (wl_calib_score(p, test, &hm) == WL_OK)
            print_metrics("held-out", &hm);
    }
    int host_fitted = (info.fitted & coef_mask(1)) != 0;
    if (fo.auto_select)
        report_few_shot(&gpu, &fitted, &info, &fo, used, &few_note);
    if (host_fitted)
        report_host(&gpu, &fitted, &info);
    if (fo.auto_select && host_fitted && fitted.host_id[0]) {
        /* the issue cost of the machine these rows came from now belongs
         * to the written preset */
        fprintf(stderr, "note: the host's issue cost was fitted with these rows: %s holds it "
                        "in [calibration] in place of host = %s\n", o->out, fitted.host_id);
        fitted.host_id[0] = 0;
    }
    wl_calib_problem_set_gpu(p, &gpu);
    crossval(o, p, train, n, fold);
    if (fo.auto_select && o->host_out && !host_fitted)
        fprintf(stderr, "note: the rows do not identify the host's issue cost: %s not written\n",
                o->host_out);
    if (host_fitted && (o->fit_host || o->host_out) &&
        (rc = write_host(o, o->fit_gpu ? o->host_out : o->out, &fitted, &info, used, &err))) {
        status = cli_fail(cmd, &err);
        goto done;
    }
    if (o->fit_gpu) {
        if (wl_results_out_open(o->out, &out, &err)) {
            status = cli_fail(cmd, &err);
            goto done;
        }
        wl_calib_preset_info pi = {.preset_text = text, .vf_text = vf_text, .data_path = o->path,
                                   .command = o->command, .fitted_rows = used, .in_sample = &after,
                                   .few_shot = few_note};
        wl_calib_write_preset(wl_results_out_stream(out), &fitted, &info, &pi);
        rc = wl_results_out_commit(out, &err);
        out = NULL;
        if (rc) {
            status = cli_fail(cmd, &err);
            goto done;
        }
        if (o->host && !host_fitted)
            fprintf(stderr, "note: fitted with host %s; the preset names its own host class "
                            "(predict with --host %s for the machine these rows came from)\n",
                    gpu.host_id, o->host);
    }
    status = 0;
done:
    wl_results_out_abort(out);
    free(train);
    free(test);
    free(fold);
    free(file_text);
    free(vf_text);
    free(few_note);
    wl_calib_problem_free(p);
    wl_calib_free(set);
    return status;
}

int cmd_calibrate(int argc, char **argv)
{
    cal_opts o = {0};
    wl_calib_fit_options_default(&o.fit);
    int rc = cal_parse(argc, argv, &o);
    if (rc == CLI_HELP)
        rc = 0;
    else if (!rc)
        rc = cal_run(&o);
    free(o.command);
    wl_core_strlist_free(&o.held_out);
    return rc;
}
