/* Recursive-descent JSON reader: enough of RFC 8259 for traces and reports
 * (no \u surrogate pairs beyond the BMP). */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *s, *end;
    int line;
    char *err;
    size_t errn;
    int err_line;
    int depth;
} wj_parser;

static int fail(wj_parser *p, const char *msg)
{
    if (!p->err_line) {
        p->err_line = p->line;
        snprintf(p->err, p->errn, "%s", msg);
    }
    return -1;
}

static void skip_ws(wj_parser *p)
{
    while (p->s < p->end) {
        char c = *p->s;
        if (c == '\n')
            p->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            break;
        p->s++;
    }
}

static void free_inner(wj_value *v)
{
    if (v->type == WJ_STRING)
        free(v->str);
    if (v->type == WJ_ARRAY || v->type == WJ_OBJECT) {
        for (size_t i = 0; i < v->n; i++) {
            free_inner(&v->items[i]);
            if (v->keys)
                free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    }
}

void wj_free(wj_value *v)
{
    if (!v)
        return;
    free_inner(v);
    free(v);
}

static int parse_value(wj_parser *p, wj_value *v);

static int parse_string(wj_parser *p, char **out)
{
    p->s++; /* opening quote */
    size_t cap = 16, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return fail(p, "out of memory");
    while (p->s < p->end && *p->s != '"') {
        char c = *p->s++;
        if ((unsigned char)c < 0x20) {
            free(buf);
            return fail(p, "control character in string");
        }
        if (c == '\\') {
            if (p->s >= p->end)
                break;
            char e = *p->s++;
            switch (e) {
            case '"': case '\\': case '/': c = e; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                unsigned cp = 0;
                for (int i = 0; i < 4; i++) {
                    if (p->s >= p->end) {
                        free(buf);
                        return fail(p, "truncated \\u escape");
                    }
                    char h = *p->s++;
                    unsigned d = (h >= '0' && h <= '9') ? (unsigned)(h - '0')
                               : (h >= 'a' && h <= 'f') ? (unsigned)(h - 'a' + 10)
                               : (h >= 'A' && h <= 'F') ? (unsigned)(h - 'A' + 10) : 99u;
                    if (d > 15) {
                        free(buf);
                        return fail(p, "bad \\u escape");
                    }
                    cp = cp * 16 + d;
                }
                c = cp < 0x80 ? (char)cp : '?'; /* non-ASCII is never a key we use */
                break;
            }
            default:
                free(buf);
                return fail(p, "bad escape in string");
            }
        }
        if (n + 2 > cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                return fail(p, "out of memory");
            }
            buf = nb;
        }
        buf[n++] = c;
    }
    if (p->s >= p->end) {
        free(buf);
        return fail(p, "unterminated string");
    }
    p->s++;
    buf[n] = 0;
    *out = buf;
    return 0;
}

static int push(wj_parser *p, wj_value *v, size_t *cap, int with_keys)
{
    if (v->n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 4;
    wj_value *ni = realloc(v->items, nc * sizeof *ni);
    if (!ni)
        return fail(p, "out of memory");
    v->items = ni;
    if (with_keys) {
        char **nk = realloc(v->keys, nc * sizeof *nk);
        if (!nk)
            return fail(p, "out of memory");
        v->keys = nk;
    }
    *cap = nc;
    return 0;
}

/* A key seen before in the object being read (keys[0..n), their lines in
 * lines): an error naming both lines, since a reader would take one of
 * the two without a word. Objects here are small (a kernel's fields, a
 * trace event's); a large one is checked by a hash of its keys. */
static int dup_key(wj_parser *p, char **keys, const int *lines, size_t n, int **table,
                   size_t *tcap)
{
    const char *k = keys[n];
    int first = 0;
    if (n < 32) {
        for (size_t i = 0; i < n && !first; i++)
            first = strcmp(keys[i], k) ? 0 : lines[i];
    } else {
        if (*tcap < 2 * (n + 1)) { /* rebuilt at twice the keys, then kept */
            size_t nc = 4 * (n + 1);
            int *t = malloc(nc * sizeof *t);
            if (!t)
                return fail(p, "out of memory");
            memset(t, 0xff, nc * sizeof *t);
            free(*table);
            *table = t;
            *tcap = nc;
            for (size_t i = 0; i < n; i++) {
                unsigned long h = 5381;
                for (const char *c = keys[i]; *c; c++)
                    h = h * 33 + (unsigned char)*c;
                size_t j = h % nc;
                while (t[j] >= 0)
                    j = (j + 1) % nc;
                t[j] = (int)i;
            }
        }
        unsigned long h = 5381;
        for (const char *c = k; *c; c++)
            h = h * 33 + (unsigned char)*c;
        size_t j = h % *tcap;
        for (; (*table)[j] >= 0 && !first; j = (j + 1) % *tcap)
            first = strcmp(keys[(*table)[j]], k) ? 0 : lines[(*table)[j]];
        if (!first)
            (*table)[j] = (int)n;
    }
    if (!first)
        return 0;
    char msg[120];
    snprintf(msg, sizeof msg, "duplicate key \"%.40s\" (first on line %d)", k, first);
    return fail(p, msg);
}

static int parse_container(wj_parser *p, wj_value *v, int is_obj)
{
    char close = is_obj ? '}' : ']';
    v->type = is_obj ? WJ_OBJECT : WJ_ARRAY;
    p->s++;
    if (++p->depth > 64)
        return fail(p, "nesting too deep");
    size_t cap = 0, lcap = 0, tcap = 0;
    int *lines = NULL, *table = NULL, rc = -1;
    skip_ws(p);
    if (p->s < p->end && *p->s == close) {
        p->s++;
        p->depth--;
        return 0;
    }
    for (;;) {
        if (push(p, v, &cap, is_obj))
            goto done;
        char *key = NULL;
        if (is_obj) {
            skip_ws(p);
            if (p->s >= p->end || *p->s != '"') {
                fail(p, "expected a string key");
                goto done;
            }
            int kline = p->line;
            if (parse_string(p, &key))
                goto done;
            skip_ws(p);
            if (p->s >= p->end || *p->s != ':') {
                free(key);
                fail(p, "expected ':'");
                goto done;
            }
            p->s++;
            if (lcap <= v->n) {
                size_t nc = lcap ? 2 * lcap : 8;
                int *nl = realloc(lines, nc * sizeof *nl);
                if (!nl) {
                    free(key);
                    fail(p, "out of memory");
                    goto done;
                }
                lines = nl;
                lcap = nc;
            }
            lines[v->n] = kline;
            v->keys[v->n] = key;
            if (dup_key(p, v->keys, lines, v->n, &table, &tcap)) {
                free(key);
                goto done;
            }
        }
        memset(&v->items[v->n], 0, sizeof v->items[v->n]);
        v->n++;
        if (parse_value(p, &v->items[v->n - 1]))
            goto done;
        skip_ws(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == close) {
            p->s++;
            p->depth--;
            rc = 0;
            goto done;
        }
        fail(p, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
        goto done;
    }
done:
    free(lines);
    free(table);
    return rc;
}

static int match(wj_parser *p, const char *word)
{
    size_t l = strlen(word);
    if ((size_t)(p->end - p->s) >= l && memcmp(p->s, word, l) == 0) {
        p->s += l;
        return 1;
    }
    return 0;
}

static int parse_value(wj_parser *p, wj_value *v)
{
    skip_ws(p);
    v->line = p->line;
    if (p->s >= p->end)
        return fail(p, "unexpected end of input");
    char c = *p->s;
    if (c == '{')
        return parse_container(p, v, 1);
    if (c == '[')
        return parse_container(p, v, 0);
    if (c == '"') {
        v->type = WJ_STRING;
        return parse_string(p, &v->str);
    }
    if (match(p, "true")) { v->type = WJ_BOOL; v->num = 1; return 0; }
    if (match(p, "false")) { v->type = WJ_BOOL; v->num = 0; return 0; }
    if (match(p, "null")) { v->type = WJ_NULL; return 0; }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char tmp[64];
        size_t l = 0;
        while (p->s + l < p->end && l < sizeof tmp - 1 &&
               strchr("+-0123456789.eE", p->s[l]))
            l++;
        memcpy(tmp, p->s, l);
        tmp[l] = 0;
        char *e = NULL;
        v->num = strtod(tmp, &e);
        if (e != tmp + l)
            return fail(p, "malformed number");
        v->type = WJ_NUMBER;
        p->s += l;
        return 0;
    }
    return fail(p, "unexpected character");
}

/* A parser at the start of text, past a UTF-8 byte-order mark (editors
 * on Windows write one), as the CSV and INI readers take it. */
static wj_parser parser_at(const char *text, size_t len, char *err, size_t errn)
{
    wj_parser p = {text, text + len, 1, err, errn, 0, 0};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        p.s += 3;
    return p;
}

wj_value *wj_parse(const char *text, size_t len, int *err_line, char *err, size_t errn)
{
    wj_parser p = parser_at(text, len, err, errn);
    wj_value *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, errn, "out of memory");
        *err_line = 0;
        return NULL;
    }
    if (parse_value(&p, v) == 0) {
        skip_ws(&p);
        if (p.s == p.end)
            return v;
        fail(&p, "trailing characters after the JSON value");
    }
    *err_line = p.err_line;
    wj_free(v);
    return NULL;
}

int wj_parse_list(const char *text, size_t len, wj_item_fn each, void *user, size_t *count,
                  int *err_line, char *err, size_t errn)
{
    wj_parser p = parser_at(text, len, err, errn);
    *count = 0;
    *err_line = 0;
    skip_ws(&p);
    if (p.s >= p.end || *p.s != '[') {
        /* not a list: malformed, or some other value */
        wj_value *v = wj_parse(text, len, err_line, err, errn);
        if (!v)
            return -1;
        *err_line = v->line;
        wj_free(v);
        return WJ_NOT_LIST;
    }
    p.s++;
    p.depth = 1;
    skip_ws(&p);
    int rc = 0;
    if (p.s < p.end && *p.s == ']') {
        p.s++;
    } else {
        for (;;) {
            wj_value item;
            memset(&item, 0, sizeof item);
            if (parse_value(&p, &item)) {
                free_inner(&item);
                rc = -1;
                break;
            }
            rc = each(user, &item);
            free_inner(&item);
            if (rc)
                return rc;
            ++*count;
            skip_ws(&p);
            if (p.s < p.end && *p.s == ',') {
                p.s++;
                continue;
            }
            if (p.s < p.end && *p.s == ']') {
                p.s++;
                break;
            }
            fail(&p, "expected ',' or ']'");
            rc = -1;
            break;
        }
    }
    if (!rc) {
        skip_ws(&p);
        if (p.s != p.end)
            rc = fail(&p, "trailing characters after the JSON value");
    }
    if (rc)
        *err_line = p.err_line;
    return rc;
}

const wj_value *wj_get(const wj_value *obj, const char *key)
{
    if (!obj || obj->type != WJ_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}
