/* INI files for presets, study specs and covariance sections, read by inih
 * through a line reader of our own, so that every handler call knows its
 * line and no line is silently cut: inih reads at most INI_MAX_LINE (200)
 * bytes of a line and would parse the rest of a longer one as a line of its
 * own. */
#include "wattlas_presets.h"

#include <ini.h>
#include <stdio.h>
#include <string.h>

#define MAX_LINE 200 /* inih's INI_MAX_LINE in Debian 12 (libinih 55) */

typedef struct {
    const char *p, *end;
    int line;
    int too_long, nul;
    wl_preset_ini_handler fn;
    void *user;
    const char *source;
    wl_error *err;
    int failed;
} reader;

/* inih's reader: the next line into str (num bytes), or NULL to stop. */
static char *next_line(char *str, int num, void *stream)
{
    reader *r = stream;
    if (r->p >= r->end || r->too_long || r->nul)
        return NULL;
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    size_t len = nl ? (size_t)(nl - r->p) + 1 : (size_t)(r->end - r->p);
    r->line++;
    if (memchr(r->p, 0, len)) {
        r->nul = 1;
        return NULL;
    }
    /* a comment line of any length is a blank line to inih */
    const char *q = r->p;
    while (q < r->p + len && (*q == ' ' || *q == '\t'))
        q++;
    if (q < r->p + len && (*q == ';' || *q == '#')) {
        r->p += len;
        str[0] = '\n';
        str[1] = 0;
        return str;
    }
    if (len + 1 > (size_t)num || len + 1 > MAX_LINE) {
        r->too_long = 1;
        return NULL;
    }
    memcpy(str, r->p, len);
    str[len] = 0;
    r->p += len;
    return str;
}

static int on_pair(void *user, const char *section, const char *name, const char *value)
{
    reader *r = user;
    if (r->failed)
        return 0;
    if (!r->fn(r->user, section, name, value, r->line)) {
        r->failed = 1;
        return 0;
    }
    return 1;
}

int wl_preset_ini_parse(const char *text, size_t len, const char *source,
                        wl_preset_ini_handler fn, void *user, wl_error *err)
{
    reader r = {.p = text, .end = text + len, .fn = fn, .user = user, .source = source, .err = err};
    /* a UTF-8 byte-order mark is not part of the first key */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        r.p += 3;
    int rc = ini_parse_stream(next_line, &r, on_pair, &r);
    if (r.too_long) {
        wl_error_set(err, source, r.line, "", "line longer than %d characters (a list may go on "
                     "over indented lines)", MAX_LINE - 2);
        return WL_EPARSE;
    }
    if (r.nul) {
        wl_error_set(err, source, r.line, "", "NUL byte in a text file");
        return WL_EPARSE;
    }
    if (rc == -2) {
        wl_error_set(err, source, 0, "", "out of memory");
        return WL_ENOMEM;
    }
    if (r.failed) {
        /* the handler said why; it may not have known the file */
        if (err && !err->source[0])
            wl_error_locate(err, source, err->line ? err->line : rc);
        return WL_EPARSE;
    }
    if (rc != 0) {
        wl_error_set(err, source, rc > 0 ? rc : 0, "",
                     "malformed line (expected key = value or [section])");
        return WL_EPARSE;
    }
    return WL_OK;
}
