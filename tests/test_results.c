/* Tests of results/: CSV reading, atomic output. */
#include "test_util.h"
#include "../results/wattlas_results.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_read),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_atomic_output),
        cmocka_unit_test(test_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
