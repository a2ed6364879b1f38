#include "tests/lib/testutil.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha2.h>

#ifndef TU_SRCDIR
#define TU_SRCDIR "."
#endif

static const char *srcdir(void)
{
    const char *s = getenv("top_srcdir");
    return s && *s ? s : TU_SRCDIR;
}

const char *tu_data_path(const char *name)
{
    static _Thread_local char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/tests/data/%s", srcdir(), name) >= (int)sizeof path)
        path[0] = '\0';   /* too long: an empty path that fails to open */
    return path;
}

uint8_t *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        uint8_t *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    *len = n;
    return buf;
}

void tu_sha256_hex(const void *buf, size_t len, char out[65])
{
    struct sha256_ctx ctx;
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    sha256_update(&ctx, len, buf);
    sha256_digest(&ctx, sizeof digest, digest);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        sprintf(out + 2 * i, "%02x", digest[i]);
    out[64] = 0;
}

static char **split_tabs(char *line, int *n)
{
    int cap = 8, k = 0;
    char **v = malloc(cap * sizeof *v);
    for (char *tok = line;; ) {
        if (k == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        char *tab = strchr(tok, '\t');
        if (tab)
            *tab = 0;
        v[k++] = strdup(tok);
        if (!tab)
            break;
        tok = tab + 1;
    }
    *n = k;
    return v;
}

tu_manifest *tu_manifest_load(const char *dir)
{
    char name[PATH_MAX];
    snprintf(name, sizeof name, "%s%sMANIFEST.tsv", dir, *dir ? "/" : "");
    FILE *f = fopen(tu_data_path(name), "r");
    if (!f)
        return NULL;
    tu_manifest *m = calloc(1, sizeof *m);
    char line[4096];
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!*line)
            continue;
        int n;
        char **fields = split_tabs(line, &n);
        if (!m->cols) {
            m->cols = fields;
            m->ncols = n;
            continue;
        }
        if (m->nrows == cap)
            m->rows = realloc(m->rows, (cap = cap ? cap * 2 : 16) * sizeof *m->rows);
        fields = realloc(fields, (n > m->ncols ? n : m->ncols) * sizeof *fields);
        for (int i = n; i < m->ncols; i++)
            fields[i] = strdup("");
        m->rows[m->nrows++] = fields;
    }
    fclose(f);
    return m;
}

const char *tu_manifest_get(const tu_manifest *m, int r, const char *col)
{
    if (r < 0 || r >= m->nrows)
        return NULL;
    for (int c = 0; c < m->ncols; c++)
        if (strcmp(m->cols[c], col) == 0)
            return m->rows[r][c];
    return NULL;
}

void tu_manifest_free(tu_manifest *m)
{
    if (!m)
        return;
    for (int r = 0; r < m->nrows; r++) {
        for (int c = 0; c < m->ncols; c++)
            free(m->rows[r][c]);
        free(m->rows[r]);
    }
    for (int c = 0; c < m->ncols; c++)
        free(m->cols[c]);
    free(m->rows);
    free(m->cols);
    free(m);
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

void tu_fill_random(uint8_t *buf, size_t len, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(xorshift(&s) >> 32);
}

void tu_fill_float_series(uint8_t *buf, size_t len, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    size_t n = len / 4;
    for (size_t i = 0; i < n; i++) {
        float v = (float)(sin((double)i * 0.001) * 100.0 + (double)(xorshift(&s) % 1000) * 1e-4);
        memcpy(buf + 4 * i, &v, 4);
    }
    for (size_t i = n * 4; i < len; i++)
        buf[i] = (uint8_t)i;
}

void tu_fill_text(uint8_t *buf, size_t len, uint64_t seed)
{
    static const char *words[] = {"blosc", "frame", "chunk", "the", "of", "compressed",
                                  "data", "block", "filter", "shuffle", "and", "file\n"};
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    size_t i = 0;
    while (i < len) {
        const char *w = words[xorshift(&s) % (sizeof words / sizeof *words)];
        for (const char *p = w; *p && i < len; p++)
            buf[i++] = (uint8_t)*p;
        if (i < len)
            buf[i++] = ' ';
    }
}

int tu_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
