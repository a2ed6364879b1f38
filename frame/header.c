/* frame/: the frame header: a 14-element msgpack array whose fixed part C-Blosc2 reads
 * and patches at fixed byte positions, then the metalayer section: parsing, building,
 * patching.
 * Calls: fio.c, msgsec.c. */
#include <msgpack.h>
#include <string.h>

#include "frame/frame_int.h"

static const struct { uint8_t pos, marker; } hdr_markers[] = {
    {0, 0x9e}, {1, 0xa8}, {10, 0xd2}, {15, 0xcf}, {24, 0xa4}, {29, 0xd3}, {38, 0xd3},
    {47, 0xd2}, {52, 0xd2}, {57, 0xd2}, {62, 0xd1}, {65, 0xd1}, {69, 0xd8},
};

int b2f_hdr_parse(const uint8_t *b, size_t len, b2f_hdr *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    if (len < B2F_HEADER_MINLEN)
        return b2f_fail(err, errlen, B2F_EFORMAT, "%zu bytes: too short for a frame header", len);
    if (b[0] != 0x9e || b[1] != 0xa8 || memcmp(b + HP_MAGIC, "b2frame", 8) != 0)
        return b2f_fail(err, errlen, B2F_EFORMAT, "no b2frame magic");
    for (size_t i = 0; i < sizeof hdr_markers / sizeof hdr_markers[0]; i++)
        if (b[hdr_markers[i].pos] != hdr_markers[i].marker)
            return b2f_fail(err, errlen, B2F_EHEADER, "header byte %u is 0x%02x, not msgpack 0x%02x",
                            hdr_markers[i].pos, b[hdr_markers[i].pos], hdr_markers[i].marker);
    h->header_len = (int32_t)b2f_be_get(b + HP_HEADER_LEN, 4);
    h->frame_len = (int64_t)b2f_be_get(b + HP_FRAME_LEN, 8);
    h->gflags = b[HP_FLAGS];
    h->frame_type = b[HP_FRAME_TYPE];
    h->codec_flags = b[HP_CODEC_FLAGS];
    h->other_flags = b[HP_OTHER_FLAGS];
    h->nbytes = (int64_t)b2f_be_get(b + HP_NBYTES, 8);
    h->cbytes = (int64_t)b2f_be_get(b + HP_CBYTES, 8);
    h->typesize = (int32_t)b2f_be_get(b + HP_TYPESIZE, 4);
    h->blocksize = (int32_t)b2f_be_get(b + HP_BLOCKSIZE, 4);
    h->chunksize = (int32_t)b2f_be_get(b + HP_CHUNKSIZE, 4);
    h->nthreads_c = (int16_t)b2f_be_get(b + HP_NTHREADS_C, 2);
    h->nthreads_d = (int16_t)b2f_be_get(b + HP_NTHREADS_D, 2);
    if (b[HP_HAS_VLMETA] != 0xc2 && b[HP_HAS_VLMETA] != 0xc3)
        return b2f_fail(err, errlen, B2F_EHEADER, "header byte %d is 0x%02x, not a msgpack bool",
                        HP_HAS_VLMETA, b[HP_HAS_VLMETA]);
    h->has_vlmeta = b[HP_HAS_VLMETA] == 0xc3;
    h->nfilters = b[HP_FILTERS];
    memcpy(h->filters, b + HP_FILTERS + 1, B2_MAX_FILTERS);
    h->udcodec = b[HP_UDCODEC];
    h->codec_meta = b[HP_CODEC_META];
    memcpy(h->filters_meta, b + HP_FILTERS_META, B2_MAX_FILTERS);
    h->other_flags2 = b[HP_OTHER_FLAGS2];

    int version = h->gflags & 0x0f;
    if (version < 1 || version > B2F_MAX_FORMAT_VERSION)
        return b2f_fail(err, errlen, B2F_EHEADER, "frame format version %d not supported", version);
    if (((h->gflags >> 4) & 3) != 1)
        return b2f_fail(err, errlen, B2F_EHEADER, "chunk offsets of %d bits not supported",
                        32 << ((h->gflags >> 4) & 3));
    if ((h->frame_type & 0x0f) != 0)
        return b2f_fail(err, errlen, B2F_EHEADER, "frame type %d is not a contiguous frame",
                        h->frame_type & 0x0f);
    if (h->header_len < B2F_HEADER_MINLEN + 7)
        return b2f_fail(err, errlen, B2F_EHEADER, "header length %d too small", h->header_len);
    if (h->frame_len < (int64_t)h->header_len + B2F_TRAILER_MINLEN)
        return b2f_fail(err, errlen, B2F_EHEADER, "frame length %lld shorter than header (%d) and "
                        "trailer", (long long)h->frame_len, h->header_len);
    if (h->nbytes < 0 || h->cbytes < 0)
        return b2f_fail(err, errlen, B2F_EHEADER, "negative size in header (nbytes %lld, cbytes %lld)",
                        (long long)h->nbytes, (long long)h->cbytes);
    if (h->typesize < 1 || h->typesize > 255)
        return b2f_fail(err, errlen, B2F_EHEADER, "typesize %d out of range", h->typesize);
    if (h->blocksize < 0 || h->blocksize > B2_MAX_NBYTES)
        return b2f_fail(err, errlen, B2F_EHEADER, "blocksize %d out of range", h->blocksize);
    /* C-Blosc2 writes -1 while a frame has no chunks yet */
    if (h->chunksize < -1 || h->chunksize > B2_MAX_NBYTES || (h->chunksize < 0 && h->nbytes > 0))
        return b2f_fail(err, errlen, B2F_EHEADER, "chunksize %d out of range", h->chunksize);
    if (h->nfilters > B2_MAX_FILTERS)
        return b2f_fail(err, errlen, B2F_EHEADER, "%d filters, at most %d", h->nfilters,
                        B2_MAX_FILTERS);
    return 0;
}

int b2f_hdr_parse_meta(const uint8_t *hdr, size_t len, b2f_mentry *meta, int *nmeta, char *err,
                       size_t errlen)
{
    b2f_mentry *e;
    size_t end;
    int rc = b2f_metasec_parse(hdr, len, HP_META, B2F_MAX_META, &e, nmeta, &end, "metalayers", err,
                               errlen);
    if (rc < 0)
        return rc;
    if (*nmeta)
        memcpy(meta, e, (size_t)*nmeta * sizeof *e);
    free(e);
    if (end != len)
        return b2f_fail(err, errlen, B2F_EHEADER, "header length %zu but its msgpack ends at %zu",
                        len, end);
    return 0;
}

static void put_fixed(uint8_t *b, const b2f_hdr *h)
{
    b2f_be_put(b + HP_FRAME_LEN, (uint64_t)h->frame_len, 8);
    b[HP_FLAGS] = h->gflags;
    b[HP_FRAME_TYPE] = h->frame_type;
    b[HP_CODEC_FLAGS] = h->codec_flags;
    b[HP_OTHER_FLAGS] = h->other_flags;
    b2f_be_put(b + HP_NBYTES, (uint64_t)h->nbytes, 8);
    b2f_be_put(b + HP_CBYTES, (uint64_t)h->cbytes, 8);
    b2f_be_put(b + HP_TYPESIZE, (uint32_t)h->typesize, 4);
    b2f_be_put(b + HP_BLOCKSIZE, (uint32_t)h->blocksize, 4);
    b2f_be_put(b + HP_CHUNKSIZE, (uint32_t)h->chunksize, 4);
    b[HP_HAS_VLMETA] = h->has_vlmeta ? 0xc3 : 0xc2;
    b[HP_FILTERS] = h->nfilters;
    memcpy(b + HP_FILTERS + 1, h->filters, B2_MAX_FILTERS);
    b[HP_UDCODEC] = h->udcodec;
    b[HP_CODEC_META] = h->codec_meta;
    memcpy(b + HP_FILTERS_META, h->filters_meta, B2_MAX_FILTERS);
    b[HP_OTHER_FLAGS2] = h->other_flags2;
}

void b2f_hdr_patch(uint8_t *hdr, const b2f_hdr *h)
{
    put_fixed(hdr, h);
}

int b2f_hdr_build(const b2f_hdr *h, int nmeta, const char *const *names,
                  const void *const *values, const uint32_t *lens, uint8_t **out, size_t *len)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    uint8_t flags[4] = {0}, ext[16] = {0};
    int rc = msgpack_pack_array(&pk, 14);
    rc |= msgpack_pack_str(&pk, 8);
    rc |= msgpack_pack_str_body(&pk, "b2frame", 8);
    rc |= msgpack_pack_fix_int32(&pk, 0);
    rc |= msgpack_pack_fix_uint64(&pk, 0);
    rc |= msgpack_pack_str(&pk, 4);
    rc |= msgpack_pack_str_body(&pk, flags, 4);
    rc |= msgpack_pack_fix_int64(&pk, 0);
    rc |= msgpack_pack_fix_int64(&pk, 0);
    rc |= msgpack_pack_fix_int32(&pk, 0);
    rc |= msgpack_pack_fix_int32(&pk, 0);
    rc |= msgpack_pack_fix_int32(&pk, 0);
    rc |= msgpack_pack_fix_int16(&pk, h->nthreads_c);
    rc |= msgpack_pack_fix_int16(&pk, h->nthreads_d);
    rc |= msgpack_pack_false(&pk);
    rc |= msgpack_pack_ext(&pk, 16, (int8_t)B2_MAX_FILTERS);
    rc |= msgpack_pack_ext_body(&pk, ext, 16);
    if (rc || sb.size != B2F_HEADER_MINLEN) {
        msgpack_sbuffer_destroy(&sb);
        return B2E_NOMEM;
    }
    size_t map_end;
    rc = b2f_metasec_build(&sb, nmeta, names, values, lens, &map_end);
    if (rc < 0 || sb.size > B2F_MAX_HEADER_LEN) {
        msgpack_sbuffer_destroy(&sb);
        return rc < 0 ? rc : B2F_ETOOBIG;
    }
    uint8_t *b = (uint8_t *)sb.data;
    b2f_be_put(b + HP_META + 2, map_end - HP_META, 2);
    b2f_be_put(b + HP_HEADER_LEN, sb.size, 4);
    put_fixed(b, h);
    *len = sb.size;
    *out = (uint8_t *)msgpack_sbuffer_release(&sb);
    return 0;
}
