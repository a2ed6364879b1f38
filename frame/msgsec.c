/* frame/: the metalayer section shared by the header (metalayers) and the trailer
 * (vlmetalayers): [uint16 idx_size, map16 {fixstr name: int32 offset}, array16 [bin32]].
 * C-Blosc2 reads values at the offsets in the map, so widths are fixed (map16, int32,
 * bin32) whatever msgpack would pick for small values.
 *
 * Sections (and the header and trailer around them) are read once, by a walk of their
 * bytes that checks every marker, width and count at its position before using it, and
 * written with msgpack-c's packer. Reading them with msgpack-c would be a second pass
 * and a weaker one: its C unpacker allocates what an array or map header declares before
 * it has seen the elements (6 hostile bytes ask for 128 GiB), and it does not say which
 * width a value had, which C-Blosc2's fixed positions depend on.
 * Calls: fio.c. */
#include <msgpack.h>
#include <string.h>

#include "frame/frame_int.h"

int b2f_metasec_parse(const uint8_t *buf, size_t len, size_t pos, int maxn, b2f_mentry **out,
                      int *n, size_t *end, const char *what, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    if (pos > len || len - pos < 1 + 3 + 3)
        return b2f_fail(err, errlen, B2F_EMETA, "%s section truncated at byte %zu", what, pos);
    if (buf[pos] != 0x93 || buf[pos + 1] != 0xcd || buf[pos + 4] != 0xde)
        return b2f_fail(err, errlen, B2F_EMETA, "%s section at byte %zu: bad msgpack markers", what,
                        pos);
    int count = (int)b2f_be_get(buf + pos + 5, 2);
    if (count > maxn)
        return b2f_fail(err, errlen, B2F_EMETA, "%d %s, at most %d allowed", count, what, maxn);
    b2f_mentry *e = count ? calloc((size_t)count, sizeof *e) : NULL;
    if (count && !e)
        return B2E_NOMEM;
    size_t p = pos + 7;
    int rc;
    for (int i = 0; i < count; i++) {
        if (p >= len || (buf[p] & 0xe0) != 0xa0) {
            rc = b2f_fail(err, errlen, B2F_EMETA, "%s %d: name is not a short string", what, i);
            goto bad;
        }
        size_t nl = buf[p] & 0x1f;
        if (len - p < 1 + nl + 5 || buf[p + 1 + nl] != 0xd2) {
            rc = b2f_fail(err, errlen, B2F_EMETA, "%s %d: name or offset past the end", what, i);
            goto bad;
        }
        memcpy(e[i].name, buf + p + 1, nl);
        e[i].name[nl] = 0;
        if (strlen(e[i].name) != nl || nl == 0) {
            rc = b2f_fail(err, errlen, B2F_EMETA, "%s %d: empty name or NUL in name", what, i);
            goto bad;
        }
        int64_t off = (int32_t)b2f_be_get(buf + p + 2 + nl, 4);
        if (off < 0 || (uint64_t)off + 5 > len || buf[off] != 0xc6) {
            rc = b2f_fail(err, errlen, B2F_EMETA, "%s '%s': value offset %lld outside (length %zu)",
                          what, e[i].name, (long long)off, len);
            goto bad;
        }
        uint64_t vl = b2f_be_get(buf + off + 1, 4);
        if (vl > INT32_MAX || (uint64_t)off + 5 + vl > len) {
            rc = b2f_fail(err, errlen, B2F_EMETA, "%s '%s': value of %llu bytes at %lld past the end "
                          "(length %zu)", what, e[i].name, (unsigned long long)vl, (long long)off, len);
            goto bad;
        }
        e[i].off = (uint32_t)off;
        e[i].len = (uint32_t)vl;
        p += 1 + nl + 5;
    }
    if (len - p < 3 || buf[p] != 0xdc || (int)b2f_be_get(buf + p + 1, 2) != count) {
        rc = b2f_fail(err, errlen, B2F_EMETA, "%s values array at byte %zu missing or of the wrong "
                      "length", what, p);
        goto bad;
    }
    p += 3;
    for (int i = 0; i < count; i++) {
        if (len - p < 5 || buf[p] != 0xc6) {
            rc = b2f_fail(err, errlen, B2F_EMETA, "%s value %d at byte %zu is not a bin32", what, i, p);
            goto bad;
        }
        uint64_t vl = b2f_be_get(buf + p + 1, 4);
        if (vl > len - p - 5) {
            rc = b2f_fail(err, errlen, B2F_EMETA, "%s value %d of %llu bytes past the end", what, i,
                          (unsigned long long)vl);
            goto bad;
        }
        p += 5 + vl;
    }
    *out = e;
    *n = count;
    *end = p;
    return 0;
bad:
    free(e);
    return rc;
}

static int sb_raw(msgpack_sbuffer *sb, uint8_t marker, uint64_t v, int n)
{
    uint8_t b[9];
    b[0] = marker;
    b2f_be_put(b + 1, v, n);
    return msgpack_sbuffer_write(sb, (const char *)b, (size_t)n + 1);
}

int b2f_metasec_build(msgpack_sbuffer *sb, int n, const char *const *names,
                      const void *const *values, const uint32_t *lens, size_t *map_end)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    if (n < 0 || n > B2F_MAX_VLMETA)
        return B2E_PARAM;
    size_t *offpos = n ? malloc((size_t)n * sizeof *offpos) : NULL;
    if (n && !offpos)
        return B2E_NOMEM;
    int rc = msgpack_pack_array(&pk, 3);
    rc |= msgpack_pack_fix_uint16(&pk, 0);   /* idx_size, patched by the caller */
    rc |= sb_raw(sb, 0xde, (uint64_t)n, 2);
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(names[i]);
        if (nl == 0 || nl > B2F_META_NAME_MAX) {
            free(offpos);
            return B2E_PARAM;
        }
        rc |= msgpack_pack_str(&pk, nl);
        rc |= msgpack_pack_str_body(&pk, names[i], nl);
        rc |= msgpack_pack_fix_int32(&pk, 0);
        offpos[i] = sb->size - 4;
    }
    *map_end = sb->size;
    rc |= sb_raw(sb, 0xdc, (uint64_t)n, 2);
    for (int i = 0; i < n; i++) {
        if (sb->size > INT32_MAX) {
            free(offpos);
            return B2E_PARAM;
        }
        b2f_be_put((uint8_t *)sb->data + offpos[i], sb->size, 4);
        rc |= sb_raw(sb, 0xc6, lens[i], 4);
        if (lens[i])
            rc |= msgpack_sbuffer_write(sb, values[i], lens[i]);
    }
    free(offpos);
    return rc ? B2E_NOMEM : 0;
}
