/* make check's half of the fuzzing: every harness in tests/fuzz/ run over
 * its seed corpus and over every input that ever crashed it (regressions),
 * built with the test's compiler and, under make asan, its sanitizers. */
#define WL_FUZZ_REPLAY
#include "test_util.h"

#include <dirent.h>

#include "fuzz/fuzz_csv.c"
#include "fuzz/fuzz_gpu_preset.c"
#include "fuzz/fuzz_grammar.c"
#include "fuzz/fuzz_idle.c"
#include "fuzz/fuzz_measurements.c"
#include "fuzz/fuzz_model_preset.c"
#include "fuzz/fuzz_plot.c"
#include "fuzz/fuzz_spec.c"
#include "fuzz/fuzz_sweep_table.c"
#include "fuzz/fuzz_trace.c"
#include "fuzz/fuzz_host_preset.c"
#include "fuzz/fuzz_system_preset.c"
#include "fuzz/fuzz_learned.c"
#include "fuzz/fuzz_timeline.c"
#include "fuzz/fuzz_merge.c"
#include "fuzz/fuzz_profile.c"
#include "fuzz/fuzz_serve.c"
#include "fuzz/fuzz_serve_rows.c"

typedef int (*harness)(const uint8_t *, size_t);

/* Runs fn on every file of tests/fuzz/{corpus,regress}/NAME; returns the
 * number of inputs. */
static size_t replay(const char *name, harness fn)
{
    size_t n = 0;
    const char *kinds[2] = {"corpus", "regress"};
    for (int k = 0; k < 2; k++) {
        char dir[512];
        snprintf(dir, sizeof dir, "tests/fuzz/%s/%s", kinds[k], name);
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            FILE *f = fopen(path, "rb");
            assert_non_null(f);
            uint8_t *buf = malloc(1 << 20);
            assert_non_null(buf);
            size_t len = fread(buf, 1, 1 << 20, f);
            fclose(f);
            /* a copy of exactly len bytes, so that a read past the input is caught */
            uint8_t *exact = malloc(len ? len : 1);
            assert_non_null(exact);
            memcpy(exact, buf, len);
            free(buf);
            assert_int_equal(fn(exact, len), 0);
            free(exact);
            n++;
        }
        if (d)
            closedir(d);
    }
    return n;
}

#define REPLAY(name)                                                              \
    static void test_##name(void **state)                                        \
    {                                                                            \
        (void)state;                                                             \
        size_t n = replay(#name, wl_fuzz_##name);                                \
        if (n == 0)                                                              \
            fail_msg("no seed inputs in tests/fuzz/corpus/" #name);              \
    }

REPLAY(csv)
REPLAY(measurements)
REPLAY(sweep_table)
REPLAY(gpu_preset)
REPLAY(model_preset)
REPLAY(trace)
REPLAY(spec)
REPLAY(idle)
REPLAY(grammar)
REPLAY(plot)
REPLAY(host_preset)
REPLAY(system_preset)
REPLAY(learned)
REPLAY(timeline)
REPLAY(merge)
REPLAY(profile)
REPLAY(serve)
REPLAY(serve_rows)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv),          cmocka_unit_test(test_measurements),
        cmocka_unit_test(test_sweep_table),  cmocka_unit_test(test_gpu_preset),
        cmocka_unit_test(test_model_preset), cmocka_unit_test(test_trace),
        cmocka_unit_test(test_spec),         cmocka_unit_test(test_idle),
        cmocka_unit_test(test_grammar),      cmocka_unit_test(test_plot),
        cmocka_unit_test(test_host_preset),  cmocka_unit_test(test_system_preset),
        cmocka_unit_test(test_learned),      cmocka_unit_test(test_timeline),
        cmocka_unit_test(test_merge),        cmocka_unit_test(test_profile),
        cmocka_unit_test(test_serve),
        cmocka_unit_test(test_serve_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
