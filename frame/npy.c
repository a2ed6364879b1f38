/* NumPy .npy headers (frame.h): the header an array frame shows with, written as NumPy
 * writes it (so that the bytes equal np.save's), and the header of a .npy file read back
 * with every field, length and count checked. The format: magic "\x93NUMPY", version
 * (1.0: a 2-byte header length; 2.0: 4 bytes; 3.0: 4 bytes and UTF-8 text), then a
 * Python dict literal with 'descr', 'fortran_order' and 'shape', padded with spaces and
 * a newline so that the data starts at a multiple of 64.
 * Calls: fio.c. */
#include <stdio.h>
#include <string.h>

#include "frame/frame_int.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_ALIGN 64
#define NPY_GROWTH_DIGITS 21 /* NumPy leaves room for the first dimension to grow */

int b2f_npy_itemsize(const char *dtype)
{
    const char *p = dtype;
    if (*p == '<' || *p == '>' || *p == '|' || *p == '=')
        p++;
    char kind = *p++;
    if (!kind)
        return B2F_EMETA;
    if (kind == '?' && !*p)
        return 1;
    if (!strchr("biufcSUVaMm", kind))
        return B2F_EMETA;   /* object ('O') and anything unknown */
    long size = 0;
    while (*p >= '0' && *p <= '9' && size < 1 << 20)
        size = size * 10 + (*p++ - '0');
    if ((kind == 'M' || kind == 'm') && *p == '[') {
        const char *close = strchr(p, ']');
        if (!close || close[1])
            return B2F_EMETA;
        p = close + 1;
        if (!size)
            size = 8;
    }
    if (*p || size <= 0 || size >= 1 << 20)
        return B2F_EMETA;
    return kind == 'U' ? (int)size * 4 : (int)size;
}

/* The descr literal for dtype: a structured dtype's list as it is, anything else quoted.
 * A frame without a dtype, or whose dtype is not as large as its items (C-Blosc2's own
 * examples have "|u1" on items of 4 bytes), shows its items as raw bytes of their size. */
static int descr_literal(const char *dtype, int itemsize, char *out, size_t cap)
{
    int n;
    int size = dtype[0] && dtype[0] != '[' ? b2f_npy_itemsize(dtype) : 0;
    if (!dtype[0] || (size > 0 && size != itemsize))
        n = itemsize == 1 ? snprintf(out, cap, "'|u1'") : snprintf(out, cap, "'|V%d'", itemsize);
    else if (dtype[0] == '[')
        n = snprintf(out, cap, "%s", dtype);
    else if (strpbrk(dtype, "'\\\n") || b2f_npy_itemsize(dtype) < 0)
        return B2F_EMETA;
    else
        n = snprintf(out, cap, "'%s'", dtype);
    return n < 0 || (size_t)n >= cap ? B2F_EMETA : 0;
}

int b2f_npy_header(const b2f_ndinfo *nd, int itemsize, char *out, size_t cap)
{
    char descr[300], dict[600];
    if (descr_literal(nd->dtype, itemsize, descr, sizeof descr) < 0)
        return B2F_EMETA;
    int used = snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': (",
                        descr);
    for (int i = 0; i < nd->ndim && used > 0 && (size_t)used < sizeof dict; i++)
        used += snprintf(dict + used, sizeof dict - (size_t)used, "%s%lld%s", i ? ", " : "",
                         (long long)nd->shape[i], nd->ndim == 1 ? "," : "");
    if (used > 0 && (size_t)used < sizeof dict)
        used += snprintf(dict + used, sizeof dict - (size_t)used, "), }");
    if (used > 0 && (size_t)used < sizeof dict && nd->ndim > 0) {
        char first[24];
        int digits = snprintf(first, sizeof first, "%lld", (long long)nd->shape[0]);
        for (int k = digits; k < NPY_GROWTH_DIGITS && (size_t)used + 1 < sizeof dict; k++)
            dict[used++] = ' ';
        dict[used] = 0;
    }
    if (used <= 0 || (size_t)used + 1 >= sizeof dict)
        return B2F_EMETA;
    /* text beyond ASCII (a field name) is UTF-8: version 3.0 */
    int utf8 = 0;
    for (int i = 0; i < used; i++)
        utf8 |= (unsigned char)dict[i] >= 0x80;
    size_t lenbytes = utf8 ? 4 : 2;
    size_t text = (size_t)used + 1;
    size_t pad = NPY_ALIGN - (6 + 2 + lenbytes + text) % NPY_ALIGN;
    size_t total = 6 + 2 + lenbytes + text + pad;
    if (total > cap)
        return B2F_ERANGE;
    memcpy(out, NPY_MAGIC, 6);
    out[6] = utf8 ? 3 : 1;
    out[7] = 0;
    b2f_le_put((uint8_t *)out + 8, (uint64_t)(text + pad), (int)lenbytes);
    char *p = out + 8 + lenbytes;
    memcpy(p, dict, (size_t)used);
    memset(p + used, ' ', pad);
    p[(size_t)used + pad] = '\n';
    return (int)total;
}

/* ---- reading a header: a small checked scanner of the dict literal ---- */

typedef struct scan {
    const char *p, *end;
} scan;

static void skip_space(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n'))
        s->p++;
}

static int eat(scan *s, char c)
{
    skip_space(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 1;
    }
    return 0;
}

/* A quoted Python string without escapes; *str points into the text. */
static int quoted(scan *s, const char **str, size_t *len)
{
    skip_space(s);
    if (s->p >= s->end || (*s->p != '\'' && *s->p != '"'))
        return -1;
    char q = *s->p++;
    const char *start = s->p;
    while (s->p < s->end && *s->p != q) {
        if (*s->p == '\\')
            return -1;
        s->p++;
    }
    if (s->p >= s->end)
        return -1;
    *str = start;
    *len = (size_t)(s->p - start);
    s->p++;
    return 0;
}

/* A list literal taken as text: brackets balanced outside quotes. */
static int list_text(scan *s, const char **str, size_t *len)
{
    skip_space(s);
    const char *start = s->p;
    int depth = 0;
    char q = 0;
    for (; s->p < s->end; s->p++) {
        char c = *s->p;
        if (q) {
            if (c == '\\')
                return -1;
            if (c == q)
                q = 0;
        } else if (c == '\'' || c == '"') {
            q = c;
        } else if (c == '[' || c == '(') {
            depth++;
        } else if (c == ']' || c == ')') {
            if (--depth == 0) {
                s->p++;
                *str = start;
                *len = (size_t)(s->p - start);
                return 0;
            }
        }
    }
    return -1;
}

static int shape_tuple(scan *s, b2f_npyinfo *out)
{
    if (!eat(s, '('))
        return -1;
    out->ndim = 0;
    for (;;) {
        if (eat(s, ')'))
            return 0;
        skip_space(s);
        int64_t v = 0;
        const char *digits = s->p;
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                return -1;
            v = v * 10 + (*s->p++ - '0');
        }
        if (s->p == digits || out->ndim >= B2F_ND_MAX)
            return -1;
        out->shape[out->ndim++] = v;
        if (!eat(s, ',')) {
            if (!eat(s, ')'))
                return -1;
            return 0;
        }
    }
}

int b2f_npy_parse(const uint8_t *b, size_t len, b2f_npyinfo *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (len < 10)
        return b2f_fail(err, errlen, B2F_ERANGE, "shorter than a .npy header");
    if (memcmp(b, NPY_MAGIC, 6))
        return b2f_fail(err, errlen, B2F_EFORMAT, "not a .npy file");
    int major = b[6];
    if (b[7] != 0 || major < 1 || major > 3)
        return b2f_fail(err, errlen, B2F_EFORMAT, ".npy version %d.%d unknown", b[6], b[7]);
    size_t lenbytes = major == 1 ? 2 : 4;
    size_t start = 8 + lenbytes;
    if (len < start)
        return b2f_fail(err, errlen, B2F_ERANGE, "shorter than a .npy header");
    uint64_t hlen = b2f_le_get(b + 8, (int)lenbytes);
    if (hlen > B2F_NPY_MAX_HEADER)
        return b2f_fail(err, errlen, B2F_EMETA, ".npy header of %llu bytes",
                        (unsigned long long)hlen);
    if (len < start + hlen)
        return b2f_fail(err, errlen, B2F_ERANGE, ".npy header of %llu bytes goes past %zu",
                        (unsigned long long)hlen, len);
    out->header_len = start + (size_t)hlen;
    scan s = {(const char *)b + start, (const char *)b + start + hlen};
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!eat(&s, '{'))
        return b2f_fail(err, errlen, B2F_EMETA, ".npy header is not a dict");
    while (!eat(&s, '}')) {
        const char *key, *val;
        size_t klen, vlen;
        if (quoted(&s, &key, &klen) || !eat(&s, ':'))
            return b2f_fail(err, errlen, B2F_EMETA, ".npy header: bad key");
        if (klen == 5 && !memcmp(key, "descr", 5)) {
            skip_space(&s);
            int list = s.p < s.end && *s.p == '[';
            if ((list ? list_text(&s, &val, &vlen) : quoted(&s, &val, &vlen)) ||
                vlen >= sizeof out->dtype || memchr(val, 0, vlen))
                return b2f_fail(err, errlen, B2F_EMETA, ".npy header: bad descr");
            memcpy(out->dtype, val, vlen);
            out->dtype[vlen] = 0;
            if (list) {
                /* object fields cannot be stored as bytes */
                if (strstr(out->dtype, "'O") || strstr(out->dtype, "|O"))
                    return b2f_fail(err, errlen, B2F_EMETA, ".npy descr holds objects");
                out->itemsize = 0;
            } else {
                int is = b2f_npy_itemsize(out->dtype);
                if (is < 0)
                    return b2f_fail(err, errlen, B2F_EMETA, ".npy descr '%s' not stored as an "
                                    "array", out->dtype);
                out->itemsize = is;
            }
            have_descr = 1;
        } else if (klen == 13 && !memcmp(key, "fortran_order", 13)) {
            skip_space(&s);
            if ((size_t)(s.end - s.p) >= 5 && !memcmp(s.p, "False", 5)) {
                s.p += 5;
                out->fortran_order = 0;
            } else if ((size_t)(s.end - s.p) >= 4 && !memcmp(s.p, "True", 4)) {
                s.p += 4;
                out->fortran_order = 1;
            } else {
                return b2f_fail(err, errlen, B2F_EMETA, ".npy header: bad fortran_order");
            }
            have_order = 1;
        } else if (klen == 5 && !memcmp(key, "shape", 5)) {
            if (shape_tuple(&s, out))
                return b2f_fail(err, errlen, B2F_EMETA, ".npy header: bad shape");
            have_shape = 1;
        } else {
            return b2f_fail(err, errlen, B2F_EMETA, ".npy header: unknown key");
        }
        if (!eat(&s, ',') && !(skip_space(&s), s.p < s.end && *s.p == '}'))
            return b2f_fail(err, errlen, B2F_EMETA, ".npy header: bad dict");
    }
    skip_space(&s);
    if (s.p != s.end || !have_descr || !have_order || !have_shape)
        return b2f_fail(err, errlen, B2F_EMETA, ".npy header: fields missing or text after");
    uint64_t items = 1;
    for (int i = 0; i < out->ndim; i++) {
        if (out->shape[i] && items > UINT64_MAX / (uint64_t)out->shape[i])
            return b2f_fail(err, errlen, B2F_EMETA, ".npy shape too large");
        items *= (uint64_t)out->shape[i];
    }
    out->items = items;
    return 0;
}
