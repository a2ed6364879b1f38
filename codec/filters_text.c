/* The filter pipeline in the shared vocabulary: "none", "shuffle", "bitshuffle",
 * "delta", "trunc:BITS", "int_trunc:BITS", "bytedelta" (or "bytedelta:TYPESIZE"), in
 * the order applied, joined by ',' or '+'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/chunk.h"

static int parse_one(const char *word, size_t len, uint8_t *filter, uint8_t *meta)
{
    static const struct { const char *name; uint8_t id; } plain[] = {
        {"shuffle", B2_SHUFFLE}, {"bitshuffle", B2_BITSHUFFLE}, {"delta", B2_DELTA},
        {"bytedelta", B2_BYTEDELTA},
    };
    *meta = 0;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        if (strlen(plain[i].name) == len && memcmp(word, plain[i].name, len) == 0) {
            *filter = plain[i].id;
            return 0;
        }
    }
    /* trunc:BITS and int_trunc:BITS are signed counts (C-Blosc2 reads filters_meta as
     * int8_t); bytedelta:TYPESIZE the stream count, 1..255 */
    static const struct { const char *prefix; uint8_t id; } with_meta[] = {
        {"trunc:", B2_TRUNC_PREC}, {"int_trunc:", B2_INT_TRUNC}, {"bytedelta:", B2_BYTEDELTA},
    };
    size_t k = 0, skip = 0;
    for (; k < sizeof with_meta / sizeof with_meta[0]; k++) {
        skip = strlen(with_meta[k].prefix);
        if (len > skip && memcmp(word, with_meta[k].prefix, skip) == 0)
            break;
    }
    if (k == sizeof with_meta / sizeof with_meta[0])
        return B2E_FILTER;
    int bytedelta = with_meta[k].id == B2_BYTEDELTA;
    size_t n = len - skip;
    char num[8];
    if (n >= sizeof num)
        return B2E_FILTER;
    memcpy(num, word + skip, n);
    num[n] = '\0';
    char *end;
    long v = strtol(num, &end, 10);
    if (*end != '\0' || (!bytedelta && (v < -64 || v > 64 || v == 0)) ||
        (bytedelta && (v < 1 || v > 255)))
        return B2E_FILTER;
    *filter = with_meta[k].id;
    *meta = bytedelta ? (uint8_t)v : (uint8_t)(int8_t)v;
    return 0;
}

int b2_filters_parse(const char *text, char sep, uint8_t filters[B2_MAX_FILTERS],
                     uint8_t meta[B2_MAX_FILTERS])
{
    if (text == NULL || (sep != ',' && sep != '+'))
        return B2E_PARAM;
    memset(filters, 0, B2_MAX_FILTERS);
    memset(meta, 0, B2_MAX_FILTERS);
    if (strcmp(text, "none") == 0)
        return 0;
    int n = 0;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, sep);
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len == 0 || n == B2_MAX_FILTERS)
            return B2E_FILTER;
        if (parse_one(p, len, &filters[n], &meta[n]) < 0)
            return B2E_FILTER;
        n++;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return 0;
}

int b2_filters_format(const uint8_t filters[B2_MAX_FILTERS], const uint8_t meta[B2_MAX_FILTERS],
                      char sep, char *out, size_t out_len)
{
    if (out == NULL || out_len == 0)
        return B2E_PARAM;
    size_t pos = 0;
    out[0] = '\0';
    for (int i = 0; i < B2_MAX_FILTERS; i++) {
        char word[16];
        switch (filters[i]) {
        case B2_NOFILTER: continue;
        case B2_SHUFFLE: snprintf(word, sizeof word, "shuffle"); break;
        case B2_BITSHUFFLE: snprintf(word, sizeof word, "bitshuffle"); break;
        case B2_DELTA: snprintf(word, sizeof word, "delta"); break;
        case B2_TRUNC_PREC: snprintf(word, sizeof word, "trunc:%d", (int)(int8_t)meta[i]); break;
        case B2_INT_TRUNC:
            snprintf(word, sizeof word, "int_trunc:%d", (int)(int8_t)meta[i]);
            break;
        case B2_BYTEDELTA:
            if (meta[i] != 0)
                snprintf(word, sizeof word, "bytedelta:%d", (int)meta[i]);
            else
                snprintf(word, sizeof word, "bytedelta");
            break;
        default: return B2E_FILTER;
        }
        int n = snprintf(out + pos, out_len - pos, "%s%s", pos > 0 ? (char[]){sep, 0} : "", word);
        if (n < 0 || (size_t)n >= out_len - pos)
            return B2E_PARAM;
        pos += (size_t)n;
    }
    if (pos == 0 && snprintf(out, out_len, "none") >= (int)out_len)
        return B2E_PARAM;
    return 0;
}
