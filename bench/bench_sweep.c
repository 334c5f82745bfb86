/* make bench: sweep throughput (CSV written to a file), memory growth with
 * the grid, and Pareto-front time on 10 million points. */
#define _XOPEN_SOURCE 700 /* mkstemp */
#include "../sweep/wattlas_sweep.h"
#include "../pareto/wattlas_pareto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int sweep_once(const char *sms, const char *bw, const char *pl, int threads,
                      unsigned long long *points, double *secs, int no_limit)
{
    wl_sweep_spec *s = wl_sweep_spec_create();
    wl_error err;
    const char *kv[] = {"model", "gpt3-1.3b", "batch", "1", "seq", "1024",
                        "dtype", "bf16,fp16,fp32", "clock", "210:1410:15",
                        "set", sms, "set", bw, "set", pl};
    for (size_t i = 0; i < sizeof kv / sizeof *kv; i += 2)
        if (wl_sweep_spec_set(s, kv[i], kv[i + 1], "bench", 0, &err)) {
            fprintf(stderr, "bench: %s\n", err.text);
            return 1;
        }
    if (no_limit && wl_sweep_spec_set(s, "power_limit", "off", "bench", 0, &err)) {
        fprintf(stderr, "bench: %s\n", err.text);
        return 1;
    }
    if (wl_sweep_spec_finish(s, &err)) {
        fprintf(stderr, "bench: %s\n", err.text);
        return 1;
    }
    /* CSV to a real file (not /dev/null): the cost of writing counts */
    char path[] = "/tmp/wattlas-bench-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return 1;
    wl_sweep_options o = {.format = WL_FMT_CSV, .threads = threads};
    wl_sweep_stats st;
    int rc = wl_sweep_run(s, &o, f, NULL, &st, &err);
    fclose(f);
    remove(path);
    wl_sweep_spec_free(s);
    *points = st.points;
    *secs = st.seconds;
    return rc;
}

/* The best rate of three runs on 2 threads (a shared machine is noisy);
 * 0 when a run fails. */
static double best_of_three(const char *sms, const char *bw, const char *pl, int no_limit)
{
    double best = 0, secs;
    unsigned long long pts;
    for (int k = 0; k < 3; k++) {
        if (sweep_once(sms, bw, pl, 2, &pts, &secs, no_limit))
            return 0;
        best = (double)pts / secs > best ? (double)pts / secs : best;
    }
    return best;
}

int main(void)
{
    /* 10 SM counts x 10 DRAM bandwidths x 10 power limits = 1000 GPUs,
     * x 3 dtypes x 81 clocks (210-1410 MHz) = 243,000 points */
    const char *sms = "sms=84,90,96,102,108,114,120,126,132,138";
    const char *bw = "dram_bw_gbs=1555,1700,1850,2039,2200,2400,2600,2800,3000,3352";
    const char *pl = "power_limit_w=200,225,250,275,300,325,350,375,400,450";
    unsigned long long pts;
    double secs, rate2 = 0;
    printf("sweep: gpt3-1.3b prefill b1 s1024, 81 clocks x 3 dtypes x 1000 GPUs (--set), CSV to a file\n");
    /* a shared machine is noisy: the best of three runs, and all three */
    for (int threads = 1; threads <= 2; threads++) {
        double best = 0, rates[3];
        for (int k = 0; k < 3; k++) {
            if (sweep_once(sms, bw, pl, threads, &pts, &secs, 0))
                return 1;
            rates[k] = (double)pts / secs;
            best = rates[k] > best ? rates[k] : best;
        }
        printf("  %d thread%s: %llu points, best %.0f points/s (runs: %.0f, %.0f, %.0f)\n",
               threads, threads > 1 ? "s" : "", pts, best, rates[0], rates[1], rates[2]);
        if (threads == 2)
            rate2 = best;
    }
    printf("  goal (issue 62): 2,000,000 points/s on 2 threads: %s\n",
           rate2 >= 2e6 ? "met" : "MISSED");
    /* the same grid with no limit held: every point unthrottled */
    double free_best = best_of_three(sms, bw, pl, 1);
    if (!(free_best > 0))
        return 1;
    printf("  the same grid without the limits: best %.0f points/s; with them %.2fx the time "
           "(goal: a throttled point within 2x of an unthrottled one: %s)\n",
           free_best, free_best / rate2, free_best / rate2 <= 2 ? "met" : "MISSED");
    /* the issue's own grid: its bandwidths and limits 200-700 W, fewer of
     * them held than the limits above */
    double ib = best_of_three(sms, "dram_bw_gbs=1555,1700,1800,1935,2039,2200,2400,2600,3000,3352",
                              "power_limit_w=200,250,300,350,400,450,500,550,600,700", 0);
    if (!(ib > 0))
        return 1;
    printf("  issue 62's grid (limits 200-700 W), 2 threads: best %.0f points/s (goal "
           "2,000,000: %s)\n", ib, ib >= 2e6 ? "met" : "MISSED");
    /* the same size without a power-limit axis: every variant is new
     * hardware, no curve is shared */
    const char *l2 = "l2_size_mb=20,24,28,32,36,40,48,56,64,80";
    double best = best_of_three(sms, bw, l2, 0);
    if (!(best > 0))
        return 1;
    printf("  2 threads, l2_size_mb in place of power_limit_w: best %.0f points/s\n", best);
    long rss0 = max_rss_kb();
    /* 10x the grid: memory must not grow with it (rows are streamed) */
    const char *pl10 = "power_limit_w=200,205,210,215,220,225,230,235,240,245,250,255,260,265,"
                       "270,275,280,285,290,295,300,305,310,315,320,325,330,335,340,345,350,"
                       "355,360,365,370,375,380,385,390,395,400,405,410,415,420,425,430,435,"
                       "440,445,450,455,460,465,470,475,480,485,490,495,500,505,510,515,520,"
                       "525,530,535,540,545,550,555,560,565,570,575,580,585,590,595,600,605,"
                       "610,615,620,625,630,635,640,645,650,655,660,665,670,675,680,685,690,695";
    if (sweep_once(sms, bw, pl10, 2, &pts, &secs, 0))
        return 1;
    long rss1 = max_rss_kb();
    printf("  memory: max RSS %ld KiB after 243k points, %ld KiB after %llu more (%.0f points/s)\n",
           rss0, rss1, pts, (double)pts / secs);

    /* Pareto front of 10 million random (time, energy) points */
    size_t n = 10000000;
    double *p = malloc(n * 2 * sizeof *p);
    unsigned char *on = malloc(n);
    if (!p || !on)
        return 1;
    unsigned long long x = 88172645463325252ULL;
    for (size_t i = 0; i < 2 * n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (double)(x >> 11) / 9007199254740992.0;
    }
    double t0 = now_s();
    wl_pareto_front(p, n, 2, on);
    double t2 = now_s() - t0;
    size_t nf = 0;
    for (size_t i = 0; i < n; i++)
        nf += on[i];
    t0 = now_s();
    wl_pareto_front(p, n / 2, 3, on); /* 5M points, 3 objectives */
    double t3 = now_s() - t0;
    printf("pareto: 10M points, 2 objectives: %.2f s (%zu on the front); 5M points, 3 objectives: %.2f s\n",
           t2, nf, t3);
    free(p);
    free(on);
    return 0;
}
