/* What the GPU and model preset parsers share: the informational keys kept
 * as text, the context's error, and list values joined across lines. */
#include "preset_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* informational keys of [calibration] and [vf], kept as text only */
static const char *const info_keys[] = {"source",   "command",       "fitted_rows",
                                         "data_hash", "held_out_rows", "held_out",
                                         "fitted_on", "note",          "aliases",
                                         "few_shot", "kept",   "tc_fp8_fitted_on"};

int wl_preset_i_is_info(const char *name)
{
    for (size_t i = 0; i < sizeof info_keys / sizeof *info_keys; i++)
        if (strcmp(name, info_keys[i]) == 0)
            return 1;
    return 0;
}

int wl_preset_i_fail(ctx *c, int line, const char *field, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    wl_error_set(c->err, c->source, line, field, "%s", text);
    return 0;
}

int wl_preset_i_list_append(ctx *c, int which, const char *value, int line)
{
    list_text *l = &c->list[which];
    size_t old = l->text ? strlen(l->text) : 0, add = strlen(value);
    char *nt = realloc(l->text, old + add + 2);
    if (!nt)
        return wl_preset_i_fail(c, line, "", "out of memory");
    l->text = nt;
    if (!old)
        l->line = line;
    else if (nt[old - 1] != ',')
        nt[old++] = ','; /* a continuation line without a separator before it */
    memcpy(nt + old, value, add + 1);
    return 1;
}

void wl_preset_i_lists_free(ctx *c)
{
    for (int i = 0; i < 3; i++)
        free(c->list[i].text);
}
