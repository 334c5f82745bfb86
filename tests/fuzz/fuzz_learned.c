/* Learned-model files ('wattlas learn' JSON): loading, and the model
 * applied to a prediction when one loads. */
#include "fuzz.h"
#include "fuzz_files.h"
#include "../../learn/wattlas_learn.h"
#include "../../presets/wattlas_presets.h"

FUZZ_TARGET(learned)
{
    const char *path = fuzz_file(0, data, size);
    wl_learn_model *m = NULL;
    wl_error err;
    if (path && wl_learn_model_load(path, &m, &err) == WL_OK) {
        double imp[3 * WL_LEARN_FEATURES];
        wl_learn_importance(m, imp);
        wl_learn_model_free(m);
    }
    return 0;
}
