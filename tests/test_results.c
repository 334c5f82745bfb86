/* Tests of results/: CSV reading, atomic output. */
#include "test_util.h"
#include "../results/wattlas_results.h"

#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_csv_read(void **state)
{
    (void)state;
    const char *p = test_path("wattlas-test-read.csv");
    test_write_file(p, "a,b,c\n1,\"x, y\",3\n\n4,\"say \"\"hi\"\"\",6\r\n");
    wl_results_csv *c = NULL;
    wl_error err;
    assert_int_equal(wl_results_csv_open(p, &c, &err), WL_OK);
    assert_int_equal(wl_results_csv_ncols(c), 3);
    assert_int_equal(wl_results_csv_col(c, "c"), 2);
    assert_int_equal(wl_results_csv_col(c, "zz"), -1);
    assert_int_equal(wl_results_csv_next(c, &err), 1);
    assert_string_equal(wl_results_csv_field(c, 1), "x, y");
    assert_int_equal(wl_results_csv_line(c), 2);
    assert_int_equal(wl_results_csv_next(c, &err), 1);
    assert_string_equal(wl_results_csv_field(c, 1), "say \"hi\"");
    assert_string_equal(wl_results_csv_field(c, 2), "6");
    assert_int_equal(wl_results_csv_line(c), 4);
    assert_int_equal(wl_results_csv_next(c, &err), 0);
    wl_results_csv_close(c);
    unlink(p);
}

static void test_csv_errors(void **state)
{
    (void)state;
    const char *p = test_path("wattlas-test-bad.csv");
    wl_results_csv *c = NULL;
    wl_error err;
    test_write_file(p, "a,b\n1,2\n3\n");
    assert_int_equal(wl_results_csv_open(p, &c, &err), WL_OK);
    assert_int_equal(wl_results_csv_next(c, &err), 1);
    assert_int_equal(wl_results_csv_next(c, &err), -WL_EPARSE);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.source, p);
    assert_non_null(strstr(err.text, "expected 2 columns"));
    wl_results_csv_close(c);
    test_write_file(p, "a,b\n\"open,2\n");
    assert_int_equal(wl_results_csv_open(p, &c, &err), WL_OK);
    assert_int_equal(wl_results_csv_next(c, &err), -WL_EPARSE);
    assert_non_null(strstr(err.text, "unterminated"));
    wl_results_csv_close(c);
    test_write_file(p, "");
    assert_int_equal(wl_results_csv_open(p, &c, &err), WL_EPARSE);
    assert_int_equal(wl_results_csv_open("/nonexistent/x.csv", &c, &err), WL_EIO);
    unlink(p);
}

/* Output appears only on commit; abort leaves nothing behind. */
static void test_atomic_output(void **state)
{
    (void)state;
    const char *p = test_path("wattlas-test-out.csv");
    unlink(p);
    wl_results_out *o = NULL;
    wl_error err;
    assert_int_equal(wl_results_out_open(p, &o, &err), WL_OK);
    fprintf(wl_results_out_stream(o), "x_ms\n1\n");
    assert_int_not_equal(access(p, F_OK), 0); /* not there until committed */
    assert_int_equal(wl_results_out_commit(o, &err), WL_OK);
    assert_int_equal(access(p, F_OK), 0);
    assert_int_equal(wl_results_out_open(p, &o, &err), WL_OK);
    fprintf(wl_results_out_stream(o), "partial");
    wl_results_out_abort(o);
    FILE *f = fopen(p, "r");
    char buf[64] = {0};
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "x_ms\n"); /* the old file is intact */
    /* an output cut short goes beside the file, which keeps what it held */
    char part[600], name[700];
    snprintf(part, sizeof part, "%s.partial", p);
    unlink(part);
    assert_int_equal(wl_results_out_open(p, &o, &err), WL_OK);
    fprintf(wl_results_out_stream(o), "y_ms\n2\n");
    assert_int_equal(wl_results_out_commit_partial(o, name, sizeof name, &err), WL_OK);
    assert_string_equal(name, part);
    f = fopen(p, "r");
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "x_ms\n");
    f = fopen(part, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "y_ms\n");
    unlink(part);
    unlink(p);
    wl_results_out_abort(NULL);
    assert_int_equal(wl_results_out_open("/nonexistent/dir/out.csv", &o, &err), WL_EIO);
}

static void test_writers(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    wl_results_csv_str(f, "plain");
    fputc('|', f);
    wl_results_csv_str(f, "a,\"b\"");
    fputc('|', f);
    wl_results_json_str(f, "q\"\\\n");
    fputc('|', f);
    wl_results_num(f, 1.23456, 2);
    fputc('|', f);
    wl_results_num(f, NAN, 2);
    fclose(f);
    assert_string_equal(buf, "plain|\"a,\"\"b\"\"\"|\"q\\\"\\\\\\n\"|1.23|");
    free(buf);
}

/* The one number formatter gives printf's digits: correctly rounded from
 * the binary value, exact halves to even; never a partial number. */
static void test_number_format(void **state)
{
    (void)state;
    char a[WL_RESULTS_NUM_MAX], b[WL_RESULTS_NUM_MAX];
    /* exact halves: 1412.25 is exactly representable, printf rounds to even */
    assert_int_equal(wl_results_fmt(a, sizeof a, 1412.25, 1), 6);
    assert_string_equal(a, "1412.2");
    wl_results_fmt(a, sizeof a, 1412.75, 1);
    assert_string_equal(a, "1412.8");
    wl_results_fmt(a, sizeof a, 0.125, 2);
    assert_string_equal(a, "0.12");
    wl_results_fmt(a, sizeof a, 2.5, 0);
    assert_string_equal(a, "2");
    /* no "-0.00" */
    wl_results_fmt(a, sizeof a, -0.001, 2);
    assert_string_equal(a, "0.00");
    wl_results_fmt(a, sizeof a, -1.5, 1);
    assert_string_equal(a, "-1.5");
    /* nor "-0" (issue 77: serve --rate -0 printed rate_rps -0) */
    wl_results_fmt(a, sizeof a, -0.0, 0);
    assert_string_equal(a, "0");
    wl_results_fmt_param(a, sizeof a, -0.0);
    assert_string_equal(a, "0");
    /* huge values: every digit, bounded */
    assert_int_equal(wl_results_fmt(a, sizeof a, 1e308, 9), 309 + 1 + 9);
    snprintf(b, sizeof b, "%.9f", 1e308);
    assert_string_equal(a, b);
    assert_int_equal(wl_results_fmt(a, sizeof a, -1.7976931348623157e308, 17), 310 + 18);
    /* too small a buffer: nothing rather than part of a number */
    char small[8];
    assert_int_equal(wl_results_fmt(small, sizeof small, 123456789.0, 2), 0);
    assert_string_equal(small, "");
    assert_int_equal(wl_results_fmt(a, sizeof a, NAN, 3), 0);
    assert_int_equal(wl_results_fmt(a, sizeof a, INFINITY, 3), 0);
    /* agreement with printf over a million values of every magnitude */
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int dec = (int)(x % 10);
        double v;
        if (i % 4 == 0) /* exact binary fractions: halves at every scale */
            v = (double)(long long)(x >> 20) / (double)(1LL << (x % 20));
        else if (i % 4 == 1) { /* next to a decimal half, on either side */
            v = ((double)(x % 10000000) + 0.5) / pow(10.0, dec);
            v = (x >> 40) & 1 ? nextafter(v, 1e300) : (x >> 41) & 1 ? nextafter(v, -1e300) : v;
        } else
            v = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * pow(10.0, (double)(x % 24) - 6);
        wl_results_fmt(a, sizeof a, v, dec);
        snprintf(b, sizeof b, "%.*f", dec, v);
        const char *want = b;
        if (b[0] == '-' && strspn(b + 1, "0.") == strlen(b + 1))
            want = b + 1;
        if (strcmp(a, want) != 0)
            fail_msg("%.17g with %d decimals: got %s, printf %s", v, dec, a, b);
    }
}

/* BOM, comment lines, NUL bytes, directories; numbers checked by the one
 * grammar. */
static void test_csv_hostile(void **state)
{
    (void)state;
    wl_results_csv *c = NULL;
    wl_error err;
    const char bom[] = "\xEF\xBB\xBF" "a,b\n1,2\n";
    assert_int_equal(wl_results_csv_open_mem(bom, strlen(bom), "bom.csv", &c, &err), WL_OK);
    assert_int_equal(wl_results_csv_col(c, "a"), 0);
    wl_results_csv_close(c);
    const char com[] = "# wattlas-shard 1/2\n# more\nx_ms\n1\n";
    assert_int_equal(wl_results_csv_open_mem(com, strlen(com), "c.csv", &c, &err), WL_OK);
    assert_string_equal(wl_results_csv_comments(c), "# wattlas-shard 1/2\n# more");
    assert_int_equal(wl_results_csv_next(c, &err), 1);
    assert_int_equal(wl_results_csv_line(c), 4);
    wl_results_csv_close(c);
    const char nul[] = "a,b\n1,\0002\n";
    assert_int_equal(wl_results_csv_open_mem(nul, sizeof nul - 1, "nul.csv", &c, &err), WL_OK);
    assert_int_equal(wl_results_csv_next(c, &err), -WL_EPARSE);
    assert_non_null(strstr(err.text, "NUL"));
    assert_int_equal(err.line, 2);
    wl_results_csv_close(c);
    assert_int_equal(wl_results_csv_open(test_dir(), &c, &err), WL_EIO);
    assert_non_null(strstr(err.text, "is a directory"));
    const char nums[] = "v\n1.5\n\nnan\n1e999\n-inf\n 2 \nabc\n";
    assert_int_equal(wl_results_csv_open_mem(nums, strlen(nums), "n.csv", &c, &err), WL_OK);
    double v;
    int want[] = {WL_OK, WL_EPARSE, WL_EPARSE, WL_EPARSE, WL_OK, WL_EPARSE};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(wl_results_csv_next(c, &err), 1);
        assert_int_equal(wl_results_csv_num(c, 0, &v, &err), want[i]);
    }
    assert_string_equal(err.field, "v");
    assert_int_equal(err.line, 8);
    wl_results_csv_close(c);
    /* hexadecimal is not a number here (strtod would read 0x16 as 22) */
    const char hex[] = "time_ms\n0x16\n";
    assert_int_equal(wl_results_csv_open_mem(hex, strlen(hex), "h.csv", &c, &err), WL_OK);
    assert_int_equal(wl_results_csv_next(c, &err), 1);
    assert_int_equal(wl_results_csv_num(c, 0, &v, &err), WL_EPARSE);
    wl_results_csv_close(c);
    /* a column named twice: refused, both places named */
    const char dup[] = "# c\ngpu,time_ms,power_w,time_ms\na,1,2,3\n";
    assert_int_equal(wl_results_csv_open_mem(dup, strlen(dup), "d.csv", &c, &err), WL_EPARSE);
    assert_string_equal(err.field, "time_ms");
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.text, "columns 2 and 4"));
    wl_results_csv_close(c);
}

/* One writer for every format; tables hide constant columns. */
static void test_row_writer(void **state)
{
    (void)state;
    static const wl_results_col cols[] = {
        WL_RESULTS_COL("gpu", WL_COL_TEXT, 0, 0), WL_RESULTS_COL("time_ms", WL_COL_NUM, 3, 0),
        WL_RESULTS_COL("feasible", WL_COL_BOOL, 0, 0), WL_RESULTS_COL("n", WL_COL_INT, 0, 0),
        WL_RESULTS_COL("raw", WL_COL_AUTO, 0, 0)};
    const wl_results_cell rows[2][5] = {
        {{"a,b", NAN}, {NULL, 1.23456}, {NULL, 1}, {NULL, 42}, {"7.5", NAN}},
        {{"c", NAN}, {NULL, NAN}, {NULL, 0}, {NULL, 3}, {"x\"y", NAN}}};
    const char *want[4] = {
        "gpu,time_ms,feasible,n,raw\n\"a,b\",1.235,1,42,7.5\nc,,0,3,\"x\"\"y\"\n",
        "{\"gpu\":\"a,b\",\"time_ms\":1.235,\"feasible\":true,\"n\":42,\"raw\":7.5}\n"
        "{\"gpu\":\"c\",\"time_ms\":null,\"feasible\":false,\"n\":3,\"raw\":\"x\\\"y\"}\n",
        "[\n  {\"gpu\": \"a,b\", \"time_ms\": 1.235, \"feasible\": true, \"n\": 42, \"raw\": 7.5},\n"
        "  {\"gpu\": \"c\", \"time_ms\": null, \"feasible\": false, \"n\": 3, \"raw\": \"x\\\"y\"}\n]\n",
        NULL};
    const wl_results_format fmt[4] = {WL_FMT_CSV, WL_FMT_NDJSON, WL_FMT_JSON, WL_FMT_TABLE};
    for (int k = 0; k < 4; k++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        wl_results_writer *w = NULL;
        assert_int_equal(wl_results_writer_create(f, fmt[k], cols, 5, &w), WL_OK);
        wl_results_writer_note(w, "a note");
        for (int r = 0; r < 2; r++)
            assert_int_equal(wl_results_writer_row(w, rows[r]), WL_OK);
        wl_results_writer_finish(w);
        fclose(f);
        if (want[k])
            assert_string_equal(buf, want[k]);
        else
            assert_string_equal(buf, "# a note\n"
                                     "gpu        time_ms feasible      n raw\n"
                                     "a,b          1.235        1     42 7.5\n"
                                     "c                         0      3 x\"y\n");
        free(buf);
    }
    /* an empty JSON table is an empty array */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    wl_results_writer *w = NULL;
    assert_int_equal(wl_results_writer_create(f, WL_FMT_JSON, cols, 5, &w), WL_OK);
    wl_results_writer_finish(w);
    fclose(f);
    assert_string_equal(buf, "[]\n");
    free(buf);
}

/* Outputs that are not regular files are written in place, never replaced. */
static void test_special_outputs(void **state)
{
    (void)state;
    wl_results_out *o = NULL;
    wl_error err;
    assert_int_equal(wl_results_out_open("/dev/null", &o, &err), WL_OK);
    fputs("x\n", wl_results_out_stream(o));
    assert_int_equal(wl_results_out_commit(o, &err), WL_OK);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(wl_results_out_open("/dev/full", &o, &err), WL_OK);
    fputs("x\n", wl_results_out_stream(o));
    assert_int_equal(wl_results_out_commit(o, &err), WL_EIO);
    assert_int_equal(stat("/dev/full", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    /* a symlink stays a symlink; its target gets the text */
    const char *t = test_path("target.txt"), *l = test_path("link.txt");
    test_write_file(t, "old\n");
    unlink(l);
    assert_int_equal(symlink(t, l), 0);
    assert_int_equal(wl_results_out_open(l, &o, &err), WL_OK);
    fputs("new\n", wl_results_out_stream(o));
    assert_int_equal(wl_results_out_commit(o, &err), WL_OK);
    assert_int_equal(lstat(l, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    FILE *f = fopen(t, "r");
    char line[16] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "new\n");
    /* a directory is refused */
    assert_int_equal(wl_results_out_open(test_dir(), &o, &err), WL_EIO);
    /* a regular file keeps its permissions */
    const char *m = test_path("mode.txt");
    test_write_file(m, "x\n");
    chmod(m, 0600);
    assert_int_equal(wl_results_out_open(m, &o, &err), WL_OK);
    assert_int_equal(wl_results_out_commit(o, &err), WL_OK);
    assert_int_equal(stat(m, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* a read-only file is not replaced (even for root, whom access() lets
     * write it), directly or through a symlink; its text stays */
    const char *ro = test_path("ro.txt"), *rl = test_path("ro-link.txt");
    test_write_file(ro, "keep\n");
    chmod(ro, 0444);
    unlink(rl);
    assert_int_equal(symlink(ro, rl), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(wl_results_out_open(i ? rl : ro, &o, &err), WL_EIO);
        assert_non_null(strstr(err.text, "is read-only (mode 0444)"));
    }
    f = fopen(ro, "r");
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "keep\n");
    /* a file behind a symlink that another writer holds locked is refused
     * before it is emptied; once released it is written */
    int fd = open(t, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    assert_int_equal(wl_results_out_open(l, &o, &err), WL_EIO);
    assert_non_null(strstr(err.text, "is being written by another process"));
    f = fopen(t, "r");
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "new\n");
    close(fd);
    assert_int_equal(wl_results_out_open(l, &o, &err), WL_OK);
    /* and the writer holds the lock itself until it commits */
    int fd2 = open(t, O_RDONLY);
    assert_true(fd2 >= 0);
    assert_int_equal(flock(fd2, LOCK_EX | LOCK_NB), -1);
    fputs("newer\n", wl_results_out_stream(o));
    assert_int_equal(wl_results_out_commit(o, &err), WL_OK);
    assert_int_equal(flock(fd2, LOCK_EX | LOCK_NB), 0);
    close(fd2);
}

/* A run killed by SIGTERM (a job's time limit) or Ctrl-C leaves no
 * temporary file beside its output, and the old output as it was; the
 * process still dies of the signal. */
static void test_signal_cleanup(void **state)
{
    (void)state;
    const char *path = test_path("killed.csv");
    test_write_file(path, "old\n");
    int sigs[2] = {SIGTERM, SIGINT};
    for (int i = 0; i < 2; i++) {
        int ready[2];
        assert_int_equal(pipe(ready), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            /* a shell's background job inherits SIGINT ignored, and the
             * cleanup rightly leaves an ignored signal alone: the test is of
             * the handler, so the child starts from the default; and it
             * dies of SIGALRM rather than hang the suite if no handler acts */
            signal(sigs[i], SIG_DFL);
            alarm(60);
            wl_results_out_cleanup_on_signals();
            wl_results_out *o = NULL;
            wl_error err;
            if (wl_results_out_open(path, &o, &err))
                _exit(3);
            fputs("partial row\n", wl_results_out_stream(o));
            fflush(wl_results_out_stream(o));
            if (write(ready[1], "x", 1) != 1)
                _exit(4);
            for (;;)
                pause();
        }
        char c;
        assert_int_equal(read(ready[0], &c, 1), 1);
        close(ready[0]);
        close(ready[1]);
        /* the temporary file is there while the run is */
        char tmp[700];
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld.0", path, (long)pid);
        assert_int_equal(access(tmp, F_OK), 0);
        assert_int_equal(kill(pid, sigs[i]), 0);
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFSIGNALED(st));
        assert_int_equal(WTERMSIG(st), sigs[i]);
        assert_int_equal(access(tmp, F_OK), -1);
        FILE *f = fopen(path, "r");
        char line[16] = "";
        assert_non_null(fgets(line, sizeof line, f));
        fclose(f);
        assert_string_equal(line, "old\n");
    }
}

/* An output is never one of the inputs nor another output (issue 77):
 * the same file by another name or through a link, a name not made yet
 * given twice, an output folder holding an input; devices, "-" and
 * different files pass. */
/* Files named inside data files resolve under the data's folder (issue 77:
 * a serve row's workload /etc/passwd was opened and its "root" echoed). */
static void test_row_path(void **state)
{
    (void)state;
    char d[300], data[400], cmd[2000], out[4096], want[4200];
    snprintf(d, sizeof d, "%.200s", test_path("wattlas-test-rowpath"));
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/sub' && echo x > '%s/w.csv' && "
             "echo y > '%s/sub/g.ini' && ln -s /etc/passwd '%s/p.ini' && ln -s sub/g.ini '%s/in.ini'",
             d, d, d, d, d, d);
    assert_int_equal(system(cmd), 0);
    snprintf(data, sizeof data, "%s/rows.csv", d);
    wl_error err = {0};
    /* names are names */
    assert_int_equal(wl_results_row_path(data, 2, "gpu", "h100-sxm-80gb", out, sizeof out, &err), WL_OK);
    assert_string_equal(out, "h100-sxm-80gb");
    assert_false(wl_results_row_names_file("llama-3.1-8b"));
    assert_true(wl_results_row_names_file("x.json.gz"));
    /* beside the data, below it, and a link that stays inside */
    char *real = realpath(d, NULL);
    assert_non_null(real);
    static const char *const ok[][2] = {{"w.csv", "w.csv"}, {"sub/g.ini", "sub/g.ini"},
                                        {"./sub/../w.csv", "w.csv"}, {"in.ini", "sub/g.ini"}};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(wl_results_row_path(data, 2, "workload", ok[i][0], out, sizeof out, &err),
                         WL_OK);
        snprintf(want, sizeof want, "%s/%s", real, ok[i][1]);
        assert_string_equal(out, want);
    }
    /* an absolute path inside the folder is taken too */
    snprintf(cmd, sizeof cmd, "%s/w.csv", d);
    assert_int_equal(wl_results_row_path(data, 2, "workload", cmd, out, sizeof out, &err), WL_OK);
    /* out of the folder, by any spelling; and a file not there */
    static const char *const bad[] = {"/etc/passwd", "../rows.csv", "sub/../../x.csv", "p.ini",
                                      "none.csv"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(wl_results_row_path(data, 7, "gpu", bad[i], out, sizeof out, &err),
                         WL_EINVAL);
        assert_string_equal(err.source, data);
        assert_int_equal(err.line, 7);
        assert_string_equal(err.field, "gpu");
        assert_null(strstr(err.text, "root"));
    }
    free(real);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    assert_int_equal(system(cmd), 0);
}

static void test_paths_distinct(void **state)
{
    (void)state;
    char d[300], a[400], b[400], l[400], sub[400], none[400], none2[400];
    snprintf(d, sizeof d, "%.200s", test_path("wattlas-test-alias"));
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/sub' && echo x > '%s/a.csv' && "
             "echo y > '%s/b.csv' && ln -s a.csv '%s/l.csv'", d, d, d, d, d);
    assert_int_equal(system(cmd), 0);
    snprintf(a, sizeof a, "%s/a.csv", d);
    snprintf(b, sizeof b, "%s/b.csv", d);
    snprintf(l, sizeof l, "%s/l.csv", d);
    snprintf(sub, sizeof sub, "%s/sub/../a.csv", d);
    snprintf(none, sizeof none, "%s/new.csv", d);
    snprintf(none2, sizeof none2, "%s/sub/../new.csv", d);
    wl_error err = {0};
#define IN(p) ((wl_results_path){(p), "the input"})
#define OUT(p) ((wl_results_path){(p), "-o"})
    wl_results_path in[2] = {IN(a), IN("-")}, out[2];
    out[0] = OUT(b);
    assert_int_equal(wl_results_paths_distinct(in, 2, out, 1, &err), WL_OK);
    out[0] = OUT(a);
    assert_int_equal(wl_results_paths_distinct(in, 2, out, 1, &err), WL_EINVAL);
    assert_string_equal(err.field, "-o");
    assert_non_null(strstr(err.text, "the input"));
    out[0] = OUT(l); /* a link to the input */
    assert_int_equal(wl_results_paths_distinct(in, 1, out, 1, &err), WL_EINVAL);
    out[0] = OUT(sub); /* another spelling of it */
    assert_int_equal(wl_results_paths_distinct(in, 1, out, 1, &err), WL_EINVAL);
    /* two outputs not made yet, one name */
    out[0] = OUT(none);
    out[1] = (wl_results_path){none2, "--host-out"};
    assert_int_equal(wl_results_paths_distinct(in, 1, out, 1, &err), WL_OK);
    assert_int_equal(wl_results_paths_distinct(in, 1, out, 2, &err), WL_EINVAL);
    assert_string_equal(err.field, "--host-out");
    /* a link that names an output not made yet is that output (the
     * invariants found -o x.ini beside --host-out LINK -> x.ini) */
    snprintf(cmd, sizeof cmd, "ln -s new.csv '%s/dangling.csv'", d);
    assert_int_equal(system(cmd), 0);
    char dl[400];
    snprintf(dl, sizeof dl, "%s/dangling.csv", d);
    out[0] = OUT(none);
    out[1] = (wl_results_path){dl, "--host-out"};
    assert_int_equal(wl_results_paths_distinct(in, 1, out, 2, &err), WL_EINVAL);
    assert_string_equal(err.field, "--host-out");
    /* an output folder that holds an input, or is one */
    out[0] = OUT(d);
    assert_int_equal(wl_results_paths_distinct(in, 1, out, 1, &err), WL_EINVAL);
    assert_non_null(strstr(err.text, "holds"));
    in[1] = IN(d);
    snprintf(cmd, sizeof cmd, "%s/sub", d);
    out[0] = OUT(cmd);
    assert_int_equal(wl_results_paths_distinct(in, 1, out, 1, &err), WL_OK);
    assert_int_equal(wl_results_paths_distinct(&in[1], 1, &in[1], 1, &err), WL_EINVAL);
    /* devices are never lost */
    in[0] = IN("/dev/null");
    out[0] = OUT("/dev/null");
    assert_int_equal(wl_results_paths_distinct(in, 1, out, 1, &err), WL_OK);
#undef IN
#undef OUT
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_read),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_atomic_output),
        cmocka_unit_test(test_writers),
        cmocka_unit_test(test_number_format),
        cmocka_unit_test(test_csv_hostile),
        cmocka_unit_test(test_row_writer),
        cmocka_unit_test(test_special_outputs),
        cmocka_unit_test(test_signal_cleanup),
        cmocka_unit_test(test_paths_distinct),
        cmocka_unit_test(test_row_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
