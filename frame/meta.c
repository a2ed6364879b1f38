/* frame/: metalayers (in the header, fixed at creation) and vlmetalayers (in the
 * trailer, each a Blosc chunk): lookup, reading, changes staged in the frame.
 * Calls: codec/; index.c. */
#include <string.h>

#include "frame/frame_int.h"

static int find_meta(const b2_frame *f, const char *name)
{
    for (int i = 0; i < f->nmeta; i++)
        if (strcmp(f->meta[i].name, name) == 0)
            return i;
    return B2F_ENOTFOUND;
}

static int find_vlmeta(const b2_frame *f, const char *name)
{
    for (int i = 0; i < f->nvlmeta; i++)
        if (strcmp(f->vlmeta[i].name, name) == 0)
            return i;
    return B2F_ENOTFOUND;
}

int b2f_meta_count(b2_frame *f)
{
    return f->nmeta;
}

const char *b2f_meta_name(b2_frame *f, int i)
{
    return i >= 0 && i < f->nmeta ? f->meta[i].name : NULL;
}

int b2f_meta_get(b2_frame *f, const char *name, const uint8_t **val, size_t *len)
{
    int i = find_meta(f, name);
    if (i < 0)
        return i;
    *val = f->hdr + f->meta[i].off + 5;
    *len = f->meta[i].len;
    return 0;
}

int b2f_meta_update(b2_frame *f, const char *name, const void *val, size_t len)
{
    if (f->kind != B2F_KIND_FRAME || !f->writable)
        return B2F_ERDONLY;
    int i = find_meta(f, name);
    if (i < 0)
        return i;
    if (len != f->meta[i].len)
        return B2F_ERANGE;
    memcpy(f->hdr + f->meta[i].off + 5, val, len);
    f->meta_dirty = 1;
    b2f_mark_dirty(f);
    return 0;
}

int b2f_vlmeta_count(b2_frame *f)
{
    return f->nvlmeta;
}

const char *b2f_vlmeta_name(b2_frame *f, int i)
{
    return i >= 0 && i < f->nvlmeta ? f->vlmeta[i].name : NULL;
}

int b2f_vlmeta_get(b2_frame *f, const char *name, uint8_t **val, size_t *len)
{
    int i = find_vlmeta(f, name);
    if (i < 0)
        return i;
    return b2f_vlmeta_decode(f->vlmeta[i].data, f->vlmeta[i].len, val, len);
}

int b2f_vlmeta_set(b2_frame *f, const char *name, const void *val, size_t len)
{
    if (f->kind != B2F_KIND_FRAME || !f->writable)
        return B2F_ERDONLY;
    size_t nl = strlen(name);
    if (nl == 0 || nl > B2F_META_NAME_MAX || strcmp(name, B2F_SUMS_VLMETA) == 0)
        return B2F_EMETA;   /* (the checksums' layer is the frame's own) */
    if (len > B2F_MAX_VLMETA_NBYTES)
        return B2F_ETOOBIG;
    uint8_t *enc;
    uint32_t cb;
    int rc = b2f_vlmeta_encode(val, len, &enc, &cb);
    if (rc < 0)
        return rc;
    int i = find_vlmeta(f, name);
    if (i < 0) {
        if (f->nvlmeta >= B2F_MAX_VLMETA - 1) {   /* (one place kept for the checksums) */
            free(enc);
            return B2F_EMETA;
        }
        if (f->nvlmeta >= f->vlmeta_cap) {
            int cap = f->vlmeta_cap * 2 + 4;
            b2f_vlmeta *v = realloc(f->vlmeta, (size_t)cap * sizeof *v);
            if (!v) {
                free(enc);
                return B2E_NOMEM;
            }
            f->vlmeta = v;
            f->vlmeta_cap = cap;
        }
        i = f->nvlmeta++;
        memset(&f->vlmeta[i], 0, sizeof f->vlmeta[i]);
        memcpy(f->vlmeta[i].name, name, nl + 1);
    }
    free(f->vlmeta[i].data);
    f->vlmeta[i].data = enc;
    f->vlmeta[i].len = cb;
    f->vlmeta_dirty = 1;
    b2f_mark_dirty(f);
    return 0;
}

int b2f_vlmeta_delete(b2_frame *f, const char *name)
{
    if (f->kind != B2F_KIND_FRAME || !f->writable)
        return B2F_ERDONLY;
    int i = find_vlmeta(f, name);
    if (i < 0)
        return i;
    free(f->vlmeta[i].data);
    memmove(f->vlmeta + i, f->vlmeta + i + 1, (size_t)(f->nvlmeta - i - 1) * sizeof *f->vlmeta);
    f->nvlmeta--;
    f->vlmeta_dirty = 1;
    b2f_mark_dirty(f);
    return 0;
}

int b2f_vlmeta_copy(b2_frame *from, b2_frame *to)
{
    int rc = 0;
    uint8_t *v;
    size_t len;
    for (int i = b2f_vlmeta_count(to) - 1; i >= 0; i--) {
        const char *name = b2f_vlmeta_name(to, i);
        if (b2f_vlmeta_get(from, name, &v, &len) == 0) {
            free(v);
            continue;
        }
        int r = b2f_vlmeta_delete(to, name);
        rc = rc < 0 ? rc : r;
    }
    for (int i = 0; i < b2f_vlmeta_count(from); i++) {
        const char *name = b2f_vlmeta_name(from, i);
        int r = b2f_vlmeta_get(from, name, &v, &len);
        if (r == 0) {
            r = b2f_vlmeta_set(to, name, v, len);
            free(v);
        }
        rc = rc < 0 ? rc : r;
    }
    return rc;
}
