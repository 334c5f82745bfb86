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
/* Reads a JSON list one item at a time: each item is parsed, handed to
 * each (its return, when nonzero, stops the read and is returned) and
 * freed, so a list of millions of items never stands in memory as a whole
 * (a 2M-kernel trace's tree took 13 times its file). Returns 0 with the
 * items in *count, -1 when malformed (err, *err_line), WJ_NOT_LIST when
 * the text is some other JSON value (*err_line: its line). */
#define WJ_NOT_LIST (-2)
typedef int (*wj_item_fn)(void *user, const wj_value *item);
int wj_parse_list(const char *text, size_t len, wj_item_fn each, void *user, size_t *count,
                  int *err_line, char *err, size_t errn);
const wj_value *wj_get(const wj_value *obj, const char *key);

#endif
