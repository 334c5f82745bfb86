#!/usr/bin/env python3
"""The ML.ENERGY leaderboard against wattlas, by model and GPU.

    bin/wattlas validate ../shared/data/public/ml-energy/v3-all-llm-configs.csv -o lb.csv
    python3 scripts/leaderboard_table.py lb.csv [TASK]

reads validate's rows (measured beside predicted) and prints, for the
task's configurations (default lm-arena-chat), a Markdown table by model
and GPU: how many configurations there are, how many ran, and the median
signed error of the median ITL, the power and the energy per token; then
the share that ran and the median and 75th percentile of the absolute
energy-per-token error over them (issue 78's measure)."""
import csv
import statistics
import sys


def pct(p, m):
    return (p / m - 1) * 100


def quantile(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    x = q * (len(v) - 1)
    i = int(x)
    return v[i] + (v[min(i + 1, len(v) - 1)] - v[i]) * (x - i)


def main(path, task="lm-arena-chat"):
    rows = [r for r in csv.DictReader(open(path, encoding="utf-8")) if r["workload"] == task]
    groups, ran, ept = {}, 0, []
    for r in rows:
        g = groups.setdefault((r["model"], r["gpu"]), {"n": 0, "run": 0, "itl": [], "pw": [],
                                                       "e": []})
        g["n"] += 1
        if not r["predicted_energy_per_token_j"]:
            continue
        g["run"] += 1
        ran += 1
        e = pct(float(r["predicted_energy_per_token_j"]), float(r["energy_per_token_j"]))
        g["e"].append(e)
        g["itl"].append(pct(float(r["predicted_median_itl_ms"]), float(r["median_itl_ms"])))
        g["pw"].append(pct(float(r["predicted_power_w"]), float(r["power_w"])))
        ept.append(abs(e))
    print("| model | GPU | configurations | ran | median ITL | power | energy per token |")
    print("|---|---|---|---|---|---|---|")
    for (m, gpu), g in sorted(groups.items()):
        f = (lambda v: "%+.0f%%" % statistics.median(v) if v else "")
        print("| %s | %s | %d | %d | %s | %s | %s |" % (m, gpu, g["n"], g["run"], f(g["itl"]),
                                                      f(g["pw"]), f(g["e"])))
    print()
    print("%s: %d configurations, %d ran (%.0f%%); energy per token |error| median %.1f%%, "
          "75th percentile %.1f%%" % (task, len(rows), ran, 100.0 * ran / max(len(rows), 1),
                                      quantile(ept, 0.5), quantile(ept, 0.75)))


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])
