/* Private to serve/: the step-cost cache (steps.c) the scheduler
 * (engine.c) asks, and the seeded draws both use. */
#ifndef WATTLAS_SERVE_INTERNAL_H
#define WATTLAS_SERVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "wattlas_serve.h"

/* A uniform draw in (0, 1) from a splitmix64 stream, and its mixer. */
double wl_serve_i_uniform(uint64_t *state);
uint64_t wl_serve_i_mix64(uint64_t z);

/* The shape a step's builder is called with (wl_core_build_serve_step):
 * a fused, graphed decode of the model at dtype. */
wl_core_shape wl_serve_i_step_shape(wl_dtype dtype);

/* One step's shape as the scheduler sees it. */
typedef struct {
    long long decode;     /* sequences decoding one token */
    double context;       /* their mean keys */
    long long chunk;      /* prompt tokens scheduled */
    double chunk_context; /* their token-weighted mean keys at the chunk's end */
    long long prefills;   /* requests those tokens belong to */
    long long finishing;  /* of them, requests whose prompt completes (they sample) */
} wl_serve_i_shape;

typedef struct wl_serve_i_costs wl_serve_i_costs;
int wl_serve_i_costs_create(const wl_core_gpu *gpu, const wl_core_model *model, wl_dtype dtype,
                            const wl_serve_engine *e, wl_serve_i_costs **out);
void wl_serve_i_costs_free(wl_serve_i_costs *c);
/* The cache's slots of a run's two operating points (told apart by clock,
 * voltage and power limit), once per run: the steps then name their slot. */
void wl_serve_i_slots(wl_serve_i_costs *c, const wl_core_op *prefill_op,
                      const wl_core_op *decode_op, size_t *prefill_slot, size_t *decode_slot);
/* A step's cost at an operating point: GPU time (s) and energy (J), the
 * clock it ran at (below the requested one where a power limit held it) and
 * whether it was held. The engine's host step and its overlap are the
 * caller's. */
typedef struct {
    double time_s, energy_j, clock_mhz; /* one GPU's */
    double comm_s; /* of time_s, the collectives' (at idle power in energy_j) */
    int throttled;
} wl_serve_i_cost;
int wl_serve_i_step(wl_serve_i_costs *c, size_t slot, const wl_serve_i_shape *sh,
                    wl_serve_i_cost *out, wl_error *err);

#endif
