/* Tests of pareto/: fronts against brute force, order invariance, analytic
 * optima of the objectives. */
#include "test_util.h"
#include "../pareto/wattlas_pareto.h"

static unsigned long long rng = 88172645463325252ULL;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static int dominates(const double *a, const double *b, int k)
{
    int strict = 0;
    for (int d = 0; d < k; d++) {
        if (a[d] > b[d])
            return 0;
        strict |= a[d] < b[d];
    }
    return strict;
}

/* nothing on the front is dominated; everything off it is */
static void check_brute(const double *p, size_t n, int k, const unsigned char *on)
{
    for (size_t i = 0; i < n; i++) {
        int dom = 0;
        for (size_t j = 0; j < n && !dom; j++)
            dom = j != i && dominates(p + j * (size_t)k, p + i * (size_t)k, k);
        if (dom == on[i])
            fail_msg("k=%d point %zu: on_front=%d but dominated=%d", k, i, on[i], dom);
    }
}

static void test_front_brute_force(void **state)
{
    (void)state;
    enum { N = 400 };
    static double p[N * 5];
    unsigned char on[N];
    for (int k = 1; k <= 5; k++)
        for (int rep = 0; rep < 5; rep++) {
            for (size_t i = 0; i < (size_t)N * (size_t)k; i++)
                /* coarse values make ties and duplicates common */
                p[i] = rep % 2 ? floor(urand() * 12) : urand();
            assert_int_equal(wl_pareto_front(p, N, k, on), WL_OK);
            check_brute(p, N, k, on);
        }
}

static void test_front_order_invariant(void **state)
{
    (void)state;
    enum { N = 1000 };
    static double p[N * 3], q[N * 3];
    unsigned char on[N], on2[N];
    size_t perm[N];
    for (int k = 2; k <= 3; k++) {
        for (size_t i = 0; i < (size_t)N * (size_t)k; i++)
            p[i] = floor(urand() * 50);
        for (size_t i = 0; i < N; i++)
            perm[i] = i;
        for (size_t i = N - 1; i > 0; i--) {
            size_t j = (size_t)(urand() * (double)(i + 1));
            size_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (size_t i = 0; i < N; i++)
            memcpy(q + i * (size_t)k, p + perm[i] * (size_t)k, (size_t)k * sizeof *p);
        assert_int_equal(wl_pareto_front(p, N, k, on), WL_OK);
        assert_int_equal(wl_pareto_front(q, N, k, on2), WL_OK);
        for (size_t i = 0; i < N; i++)
            assert_int_equal(on2[i], on[perm[i]]);
    }
    /* NaN never makes the front; an empty input is fine */
    double r[6] = {1, NAN, 2, 2, 3, 1};
    assert_int_equal(wl_pareto_front(r, 3, 2, on), WL_OK);
    assert_int_equal(on[0], 0);
    assert_int_equal(on[1], 1);
    assert_int_equal(on[2], 1);
    assert_int_equal(wl_pareto_front(NULL, 0, 2, NULL), WL_OK);
}

/* E(f) = a/f + b f^2 with t = c/f: energy is least at f = (a / 2b)^(1/3),
 * EDP at (2a / b)^(1/3); power P = a/c + b f^3 / c. */
static void test_optimize_analytic(void **state)
{
    (void)state;
    enum { N = 1901 };
    static double t[N], pw[N], e[N], f[N];
    const double a = 4e5, b = 1e-4, c = 1e4;
    for (int i = 0; i < N; i++) {
        f[i] = 100 + i; /* 100 .. 2000 MHz in 1 MHz steps */
        t[i] = c / f[i];
        e[i] = a / f[i] + b * f[i] * f[i];
        pw[i] = e[i] / t[i];
    }
    wl_pareto_objective o;
    wl_error err;
    assert_int_equal(wl_pareto_objective_parse("energy", &o, &err), WL_OK);
    assert_close(f[wl_pareto_choose(&o, t, pw, e, N)], cbrt(a / (2 * b)), 1.0);
    assert_int_equal(wl_pareto_objective_parse("edp", &o, &err), WL_OK);
    assert_close(f[wl_pareto_choose(&o, t, pw, e, N)], cbrt(2 * a / b), 1.0);
    assert_int_equal(wl_pareto_objective_parse("ed2p", &o, &err), WL_OK);
    assert_close(f[wl_pareto_choose(&o, t, pw, e, N)], 2000, 0); /* monotone here */
    /* within 10% of the fastest (2000 MHz): f >= 2000/1.1 = 1818.2, above the
     * energy optimum (1260 MHz), so the slowest allowed clock wins */
    assert_int_equal(wl_pareto_objective_parse("energy-within-slowdown=10", &o, &err), WL_OK);
    assert_close(f[wl_pareto_choose(&o, t, pw, e, N)], 1819, 0);
    /* a generous slowdown reaches the unconstrained optimum */
    assert_int_equal(wl_pareto_objective_parse("energy-within-slowdown=500", &o, &err), WL_OK);
    assert_close(f[wl_pareto_choose(&o, t, pw, e, N)], cbrt(a / (2 * b)), 1.0);
    /* P <= 70 W: f <= ((70 - a/c) c / b)^(1/3) = 1442 MHz */
    assert_int_equal(wl_pareto_objective_parse("time-within-power=70", &o, &err), WL_OK);
    double fcap = cbrt((70 - a / c) * c / b);
    long ic = wl_pareto_choose(&o, t, pw, e, N);
    assert_true(f[ic] <= fcap && f[ic] > fcap - 1);
    assert_int_equal(wl_pareto_objective_parse("time-within-power=1", &o, &err), WL_OK);
    assert_int_equal(wl_pareto_choose(&o, t, pw, e, N), -1); /* nothing qualifies */
    assert_int_equal(wl_pareto_objective_parse("edp=3", &o, &err), WL_EINVAL);
    assert_int_equal(wl_pareto_objective_parse("energy-within-slowdown", &o, &err), WL_EINVAL);
    assert_int_equal(wl_pareto_objective_parse("energy-within-slowdown=-1", &o, &err), WL_EINVAL);
    assert_int_equal(wl_pareto_objective_parse("speed", &o, &err), WL_EINVAL);
}

/* Two classes that want different clocks: free switching gives each its
 * own; expensive switching forces one clock; a time budget moves the
 * schedule to faster clocks. */
/* The flat band of e(c) = 100 + (c - 1000)^2 / 1e4 is |c - 1000| <= 100
 * for a 1% tolerance; a second dip beyond a rise is not part of it, rows
 * in any order and NaN rows change nothing, several rows at one clock
 * count by their best. */
static void test_flat_band(void **state)
{
    (void)state;
    double c[16], e[16];
    size_t n = 0;
    for (double f = 1300; f >= 700; f -= 50, n++) {
        c[n] = f;
        e[n] = 100 + (f - 1000) * (f - 1000) / 1e4;
    }
    double lo, hi;
    wl_pareto_flat_band(c, e, n, 0.01, &lo, &hi);
    assert_true(lo == 900 && hi == 1100);
    /* a dip at 1300 within 1%, beyond 1150-1250 that are not */
    e[0] = 100.5;
    c[n] = NAN, e[n] = 1, n++;  /* no clock */
    c[n] = 1100, e[n] = NAN, n++; /* no energy */
    c[n] = 1150, e[n] = 100.9, n++; /* a better voltage at 1150 */
    wl_pareto_flat_band(c, e, n, 0.01, &lo, &hi);
    assert_true(lo == 900 && hi == 1150);
    wl_pareto_flat_band(c, e, 0, 0.01, &lo, &hi);
    assert_true(isnan(lo) && isnan(hi));
}

static void test_schedule(void **state)
{
    (void)state;
    /* clocks: 0 slow, 1 mid, 2 fast; times (ms) and energies (J) */
    const double t[] = {10, 8, 6,     /* class 0: compute-bound */
                        5, 5, 5};     /* class 1: memory-bound, flat time */
    const double e[] = {3.0, 2.5, 2.8, /* class 0 best at mid */
                        1.0, 1.2, 1.5}; /* class 1 best at slow */
    const double launches[] = {10, 10};
    int ch[2];
    wl_pareto_schedule_result r;
    assert_int_equal(wl_pareto_schedule(2, 3, t, e, launches, 0, 0, INFINITY, ch, &r), WL_OK);
    assert_int_equal(ch[0], 1);
    assert_int_equal(ch[1], 0);
    assert_close(r.energy_j, 3.5, 1e-12);
    assert_close(r.time_ms, 13, 1e-12);
    assert_close(r.switches, 20, 0); /* class 1's launches, there and back */
    /* 1 ms per switch: switching costs more than it saves */
    assert_int_equal(wl_pareto_schedule(2, 3, t, e, launches, 1000, 50, INFINITY, ch, &r), WL_OK);
    assert_int_equal(ch[0], ch[1]);
    assert_close(r.energy_j, 3.7, 1e-12); /* both at mid: 2.5 + 1.2 */
    /* a budget of 11 ms forces class 0 to the fast clock */
    assert_int_equal(wl_pareto_schedule(2, 3, t, e, launches, 0, 0, 11, ch, &r), WL_OK);
    assert_int_equal(ch[0], 2);
    assert_int_equal(ch[1], 0);
    assert_close(r.energy_j, 3.8, 1e-12);
    assert_int_equal(wl_pareto_schedule(2, 3, t, e, launches, 0, 0, 10, ch, &r), WL_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_front_brute_force),
        cmocka_unit_test(test_front_order_invariant),
        cmocka_unit_test(test_optimize_analytic),
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_flat_band),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
