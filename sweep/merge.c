/* Joining shard outputs into the unsharded run's output. */
#include "sweep_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- merge ---------------------------------------------------------------------------- */

typedef struct {
    const char *path;
    unsigned idx, count;
    unsigned long long fp, lo, hi, total, rows;
    char format[16];
} shard_meta;

static int read_meta(FILE *f, const char *path, shard_meta *m, wl_error *err)
{
    char line[512];
    if (!fgets(line, sizeof line, f) || strncmp(line, SHARD_TAG " ", strlen(SHARD_TAG) + 1) != 0) {
        wl_error_set(err, path, 1, "", "not a sweep shard (no '" SHARD_TAG "' line: it was not "
                     "written as a shard of a sweep)");
        return WL_EPARSE;
    }
    char extra;
    int n = sscanf(line + strlen(SHARD_TAG), " %u/%u sweep=%16llx points=%llu-%llu/%llu rows=%llu "
                   "format=%15s %c", &m->idx, &m->count, &m->fp, &m->lo, &m->hi, &m->total,
                   &m->rows, m->format, &extra);
    if (n != 8 || m->idx < 1 || m->idx > m->count || m->lo > m->hi || m->hi > m->total) {
        wl_error_set(err, path, 1, "", "malformed shard line");
        return WL_EPARSE;
    }
    m->path = path;
    return WL_OK;
}

/* The fields of a CSV line (commas outside quotes, plus one). */
static size_t csv_fields(const char *line, size_t len)
{
    size_t n = 1;
    int quoted = 0;
    for (size_t i = 0; i < len; i++) {
        if (line[i] == '"')
            quoted = !quoted;
        else if (line[i] == ',' && !quoted)
            n++;
    }
    return n;
}

/* Copies a shard's rows to out (the CSV header once), counting them; a
 * row that is not whole (a CSV row with other than the header's fields,
 * an NDJSON line that is no object) is an error, not passed on. */
static int copy_rows(FILE *f, const shard_meta *m, int first, int csv, char **header,
                     FILE *out, wl_error *err)
{
    char *line = NULL;
    size_t cap = 0, fields = 0;
    ssize_t len;
    int lineno = 1, rc = WL_OK, ended = 0;
    unsigned long long rows = 0;
    uint64_t h = WL_SWEEP_HASH_BASIS; /* over the rows' bytes, as the writer hashed them */
    static const char END[] = SHARD_TAG "-end ";
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (ended) {
            wl_error_set(err, m->path, lineno, "", "a line after the shard's end line");
            rc = WL_EPARSE;
            break;
        }
        if (!strncmp(line, END, sizeof END - 1) && (lineno > 2 || !csv)) {
            unsigned long long n = 0, want = 0;
            char extra;
            if (sscanf(line + sizeof END - 1, "rows=%llu fnv1a64=%16llx %c", &n, &want, &extra) != 2) {
                wl_error_set(err, m->path, lineno, "", "malformed shard end line");
                rc = WL_EPARSE;
                break;
            }
            if (n != rows || (uint64_t)want != h) {
                wl_error_set(err, m->path, lineno, "", "its rows are not the ones written (%s): "
                             "a row altered, swapped or dropped; write the shard again",
                             n != rows ? "their count differs" : "their hash differs");
                rc = WL_EPARSE;
                break;
            }
            ended = 1;
            continue;
        }
        if ((lineno & 4095) == 0 && wl_stop_requested()) { /* wl_stop_watch */
            wl_error_set(err, m->path, lineno, "", "stopped");
            rc = WL_ESTOPPED;
            break;
        }
        if (line[len - 1] != '\n') {
            wl_error_set(err, m->path, lineno, "", "truncated last row (no newline)");
            rc = WL_EPARSE;
            break;
        }
        if (csv && lineno == 2)
            fields = csv_fields(line, (size_t)len - 1);
        else if (csv && csv_fields(line, (size_t)len - 1) != fields) {
            wl_error_set(err, m->path, lineno, "", "expected %zu columns, found %zu", fields,
                         csv_fields(line, (size_t)len - 1));
            rc = WL_EPARSE;
            break;
        } else if (!csv && (len < 3 || line[0] != '{' || line[len - 2] != '}')) {
            wl_error_set(err, m->path, lineno, "", "not an NDJSON row (one JSON object a line)");
            rc = WL_EPARSE;
            break;
        }
        if (csv && lineno == 2) {
            if (first) {
                if (!(*header = strdup(line))) {
                    rc = WL_ENOMEM;
                    break;
                }
                fwrite(line, 1, (size_t)len, out);
            } else if (strcmp(*header, line) != 0) {
                wl_error_set(err, m->path, 2, "", "its header differs from the first shard's");
                rc = WL_EPARSE;
                break;
            }
            continue;
        }
        fwrite(line, 1, (size_t)len, out);
        h = wl_sweep_hash(h, line, (size_t)len);
        rows++;
    }
    free(line);
    if (!rc && ferror(f)) {
        int stopped = wl_stop_requested(); /* a read Ctrl-C interrupted */
        wl_error_set(err, m->path, lineno, "", stopped ? "stopped" : "read error");
        rc = stopped ? WL_ESTOPPED : WL_EIO;
    }
    /* a CSV shard, even one of no rows, has its header after the shard
     * line: without it there is nothing to check the others against */
    if (!rc && csv && lineno < 2) {
        wl_error_set(err, m->path, 2, "", "no header line after the shard line (was the file "
                     "cut short?)");
        rc = WL_EPARSE;
    }
    if (!rc && rows != m->rows) {
        wl_error_set(err, m->path, 0, "", "shard %u/%u is incomplete: %llu of %llu rows (was it "
                     "interrupted?)", m->idx, m->count, rows, m->rows);
        rc = WL_EPARSE;
    }
    if (!rc && !ended) {
        wl_error_set(err, m->path, lineno, "", "no shard end line after its rows (cut short, or "
                     "written by an older wattlas: write it again)");
        rc = WL_EPARSE;
    }
    return rc;
}

int wl_sweep_merge(const char *const *paths, int n, FILE *out, wl_error *err)
{
    if (n < 1) {
        wl_error_set(err, "merge", 0, "", "no shards");
        return WL_EINVAL;
    }
    shard_meta *m = calloc((size_t)n, sizeof *m);
    int *order = calloc((size_t)n, sizeof *order);
    int rc = m && order ? WL_OK : WL_ENOMEM;
    for (int i = 0; !rc && i < n; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f) {
            wl_error_set(err, paths[i], 0, "", "cannot open: %s", strerror(errno));
            rc = WL_EIO;
            break;
        }
        rc = read_meta(f, paths[i], &m[i], err);
        fclose(f);
    }
    /* one sweep, every shard once */
    for (int i = 0; !rc && i < n; i++) {
        if (m[i].count != (unsigned)n || m[i].fp != m[0].fp || m[i].total != m[0].total ||
            strcmp(m[i].format, m[0].format) != 0) {
            if (m[i].fp != m[0].fp || m[i].total != m[0].total)
                wl_error_set(err, paths[i], 1, "", "a shard of another sweep than %s", paths[0]);
            else if (m[i].count != (unsigned)n)
                wl_error_set(err, paths[i], 1, "", "shard %u of %u, but %d shards were given",
                             m[i].idx, m[i].count, n);
            else
                wl_error_set(err, paths[i], 1, "", "format %s differs from %s's", m[i].format,
                             paths[0]);
            rc = WL_EINVAL;
            break;
        }
        if (order[m[i].idx - 1]) {
            wl_error_set(err, paths[i], 1, "", "shard %u/%u given twice (also %s)", m[i].idx,
                         m[i].count, paths[order[m[i].idx - 1] - 1]);
            rc = WL_EINVAL;
            break;
        }
        order[m[i].idx - 1] = i + 1;
    }
    char *header = NULL;
    int csv = !rc && strcmp(m[0].format, "csv") == 0;
    for (int k = 0; !rc && k < n; k++) {
        const shard_meta *sm = &m[order[k] - 1];
        FILE *f = fopen(sm->path, "r");
        if (!f) {
            wl_error_set(err, sm->path, 0, "", "cannot open: %s", strerror(errno));
            rc = WL_EIO;
            break;
        }
        char skip[512];
        if (!fgets(skip, sizeof skip, f)) /* the shard line, read above */
            rc = WL_EIO;
        if (!rc)
            rc = copy_rows(f, sm, k == 0, csv, &header, out, err);
        fclose(f);
    }
    if (rc == WL_ENOMEM)
        wl_error_set(err, "merge", 0, "", "out of memory");
    free(header);
    free(m);
    free(order);
    return rc;
}

int wl_sweep_shard_parse(const char *s, unsigned *index, unsigned *count, wl_error *err)
{
    const char *slash = strchr(s, '/');
    long long a, b;
    char left[32];
    wl_error e = {0};
    if (!slash || (size_t)(slash - s) >= sizeof left) {
        wl_error_set(err, "shard", 0, "shard", "expected I/N with 1 <= I <= N, got '%.60s'", s);
        return WL_EINVAL;
    }
    memcpy(left, s, (size_t)(slash - s));
    left[slash - s] = 0;
    if (wl_core_parse_int(slash + 1, 1, 1000000, "shard", 0, "", &b, &e) ||
        wl_core_parse_int(left, 1, b, "shard", 0, "", &a, &e)) {
        wl_error_set(err, "shard", 0, "shard",
                     "expected I/N with 1 <= I <= N <= 1000000, got '%.60s'", s);
        return WL_EINVAL;
    }
    *index = (unsigned)a;
    *count = (unsigned)b;
    return WL_OK;
}
