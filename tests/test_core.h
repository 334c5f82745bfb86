/* What test_core.c and test_workloads.c share: a model preset built into
 * its workload. */
#ifndef WATTLAS_TEST_CORE_H
#define WATTLAS_TEST_CORE_H

#include "test_util.h"
#include "../presets/wattlas_presets.h"

/* The builders' graphs on EnergAIzer's stack (transformers 4.x), which
 * shared/data/traces records kernel by kernel; the transformers 5.x graphs
 * are checked against the H200 profiles in test_profile. */
static inline wl_core_workload *build(const char *model, long long b, long long s, wl_dtype dt)
{
    wl_core_model m;
    wl_error err;
    assert_int_equal(wl_preset_model_load(model, &m, &err), WL_OK);
    wl_core_shape sh = {.batch = b, .seq = s, .dtype = dt, .attention = WL_ATTN_EAGER,
                        .stack = WL_STACK_HF4};
    wl_core_workload *wl = NULL;
    assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_OK);
    return wl;
}

#endif
