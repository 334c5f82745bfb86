/* The set of operating points (sets.c) as the schedules (schedule.c) read
 * it: the struct and the grouping helpers both files use. */
#ifndef WATTLAS_PARETO_SETS_INTERNAL_H
#define WATTLAS_PARETO_SETS_INTERNAL_H

#include "wattlas_pareto.h"

#include <stdint.h>

struct wl_pareto_set {
    char *source;
    char **cols;          /* header */
    size_t ncols;
    size_t nv;            /* value columns */
    char **vnames;
    size_t n, cap;
    double *val;          /* n x nv */
    uint32_t *group;
    int *line;
    size_t *src;          /* n: the row's index in its input (data rows from 0) */
    size_t *fields;       /* n: offset of the row's fields in text (keep_fields) */
    size_t *label;        /* n: offset of the label in text */
    char *text;
    size_t text_n, text_cap;
    char **gkeys;         /* group -> key, fields joined by '/' */
    char **gfields;       /* group -> its fields, each NUL-terminated in turn */
    char **gnames;        /* the columns grouped by */
    size_t ngc;
    size_t ngroups, gcap;
    size_t *hash;         /* open addressing: group + 1, 0 = empty */
    size_t hcap;
    double *pt;           /* collapse: n x 4 (effective clock, voltage, request,
                             throttled), then the highest request folded in */
    size_t collapsed;
    int folded;          /* requests were folded (collapse_rows ran) */
    int by_class;        /* values read per kernel class (class_values) */
    size_t unfit;         /* rows left out with fits = 0 */
    wl_core_strlist unfit_groups; /* keys of groups with no row that fits
                                     (while reading: of every unfit row's
                                     group, each once) */
};

/* Rows in group order: order[start[g] .. start[g + 1]) are group g's
 * (malloc'd; the caller frees both). */
int wl_pareto_i_by_group(const wl_pareto_set *s, size_t **order, size_t **start);
/* The set's group columns, then the fixed ones; 0 when cap is too small. */
size_t wl_pareto_i_keyed_cols(const wl_pareto_set *s, const wl_results_col *fixed, size_t nfixed,
                              wl_results_col *cols, size_t cap);
/* Group g's key fields as cells; returns how many. */
size_t wl_pareto_i_key_cells(const wl_pareto_set *s, size_t g, wl_results_cell *cells);

#endif
