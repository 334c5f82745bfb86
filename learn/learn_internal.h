/* What learn's files share: the forest and the model's insides, the
 * names of the features and targets, and the model's set-up. */
#ifndef WATTLAS_LEARN_INTERNAL_H
#define WATTLAS_LEARN_INTERNAL_H

#include "wattlas_learn.h"

#include <stddef.h>

/* A forest for one target: margin = base + the sum of its trees' leaves. */
typedef struct {
    double base;
    size_t ntrees, nnodes;
    size_t *start;      /* ntrees + 1: each tree's first node */
    int *feat, *left, *right;
    unsigned char *dleft; /* missing values go left */
    float *thr, *value, *gain;
} forest;

struct wl_learn_model {
    wl_learn_kind kind;
    int hybrid, nfeat;
    double bias[3], shrink[3]; /* a hybrid's correction: exp(bias + shrink * margin) */
    int across_models; /* a hybrid's correction was chosen on models left out:
                          the model's shape does not bound its domain */
    /* derived once the model is complete (model_ready): the features that
     * bound its trees and its constant factors, whether the trees are in
     * use and whether a hybrid corrects anything */
    unsigned char use_trees[WL_LEARN_FEATURES], use_bias[WL_LEARN_FEATURES];
    int trees_used, corrects;
    double lo[WL_LEARN_FEATURES], hi[WL_LEARN_FEATURES];
    forest f[3];
    char fingerprint[64];
    size_t rows;
    wl_learn_options opt;
};

extern const char *const wl_learn_feature_names[WL_LEARN_FEATURES];
extern const char *const wl_learn_target_names[3];

void wl_learn_forest_free(forest *f);
int wl_learn_forest_alloc(forest *f, size_t ntrees, size_t nnodes);
/* Derives what a complete model's evaluation reads (its features' bounds,
 * whether the trees and a hybrid's correction act). */
void wl_learn_model_ready(wl_learn_model *m);

#endif
