/* Private to core/: a small JSON reader (DOM) with line numbers. */
#ifndef WATTLAS_JSON_H
#define WATTLAS_JSON_H

#include <stddef.h>

typedef enum { WJ_NULL, WJ_BOOL, WJ_NUMBER, WJ_STRING, WJ_ARRAY, WJ_OBJECT } wj_type;

typedef struct wj_value wj_value;
struct wj_value {
    wj_type type;
    int line;
    double num;        /* NUMBER, BOOL (0/1) */
    char *str;         /* STRING */
    char **keys;       /* OBJECT: keys[i] names items[i] */
    wj_value *items;   /* ARRAY, OBJECT */
    size_t n;
};

/* Parses text; on error returns NULL and sets *err_line and err (message). */
wj_value *wj_parse(const char *text, size_t len, int *err_line, char *err, size_t errn);
void wj_free(wj_value *v);
const wj_value *wj_get(const wj_value *obj, const char *key);

#endif
