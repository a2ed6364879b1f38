/* frame/: the frame trailer: [version, vlmetalayer section, uint32 trailer_len,
 * fixext16 fingerprint]. C-Blosc2 finds trailer_len 22 bytes before the frame end.
 * Calls: fio.c, msgsec.c. */
#include <msgpack.h>
#include <string.h>

#include "frame/frame_int.h"

int b2f_trailer_parse(const uint8_t *buf, size_t len, b2f_vlmeta **vl, int *nvl, char *err,
                      size_t errlen)
{
    *vl = NULL;
    *nvl = 0;
    if (len < B2F_TRAILER_MINLEN || buf[0] != 0x94 || buf[1] > 0x7f)
        return b2f_fail(err, errlen, B2F_ETRAILER, "trailer of %zu bytes does not start with "
                        "[version, ...]", len);
    b2f_mentry *e;
    int n;
    size_t end;
    int rc = b2f_metasec_parse(buf, len, 2, B2F_MAX_VLMETA, &e, &n, &end, "vlmetalayers", err,
                               errlen);
    if (rc < 0)
        return rc;
    if (end + 23 != len || buf[end] != 0xce || b2f_be_get(buf + end + 1, 4) != len ||
        buf[end + 5] != 0xd8) {
        free(e);
        return b2f_fail(err, errlen, B2F_ETRAILER, "trailer length field does not match its %zu "
                        "bytes", len);
    }
    b2f_vlmeta *v = calloc((size_t)n + 1, sizeof *v);
    if (!v) {
        free(e);
        return B2E_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        memcpy(v[i].name, e[i].name, sizeof v[i].name);
        v[i].len = e[i].len;
        v[i].data = malloc(e[i].len ? e[i].len : 1);
        if (!v[i].data) {
            for (int j = 0; j < i; j++)
                free(v[j].data);
            free(v);
            free(e);
            return B2E_NOMEM;
        }
        memcpy(v[i].data, buf + e[i].off + 5, e[i].len);
    }
    free(e);
    *vl = v;
    *nvl = n;
    return 0;
}

int b2f_trailer_build(const b2f_vlmeta *vl, int nvl, uint8_t **out, size_t *len)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    const char **names = NULL;
    const void **values = NULL;
    uint32_t *lens = NULL;
    int rc = B2E_NOMEM;
    if (nvl > 0) {
        names = malloc((size_t)nvl * sizeof *names);
        values = malloc((size_t)nvl * sizeof *values);
        lens = malloc((size_t)nvl * sizeof *lens);
        if (!names || !values || !lens)
            goto out;
        for (int i = 0; i < nvl; i++) {
            names[i] = vl[i].name;
            values[i] = vl[i].data;
            lens[i] = vl[i].len;
        }
    }
    if (msgpack_pack_array(&pk, 4) || msgpack_pack_int(&pk, B2F_TRAILER_VERSION))
        goto out;
    size_t map_end;
    rc = b2f_metasec_build(&sb, nvl, names, values, lens, &map_end);
    if (rc < 0)
        goto out;
    uint8_t fp[16] = {0};
    rc = B2E_NOMEM;
    if (msgpack_pack_fix_uint32(&pk, 0) || msgpack_pack_ext(&pk, 16, 0) ||
        msgpack_pack_ext_body(&pk, fp, 16))
        goto out;
    if (sb.size > B2F_MAX_TRAILER_LEN) {
        rc = B2F_ETOOBIG;
        goto out;
    }
    uint8_t *b = (uint8_t *)sb.data;
    b2f_be_put(b + 4, map_end - 3, 2);
    b2f_be_put(b + sb.size - 22, sb.size, 4);
    *len = sb.size;
    *out = (uint8_t *)msgpack_sbuffer_release(&sb);
    rc = 0;
out:
    free(names);
    free(values);
    free(lens);
    msgpack_sbuffer_destroy(&sb);
    return rc;
}
