/* Decoding the Blosc1 chunks made by c-blosc 1.21 (tests/data/blosc1), whole and by
 * block ranges, against their MANIFEST sha256. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/chunk.h"
#include "tests/codec_helpers.h"
#include "tests/testutil.h"

static tu_manifest *manifest;

static uint8_t *load_chunk(int row, size_t *len)
{
    char name[300];
    snprintf(name, sizeof name, "blosc1/%s", tu_manifest_get(manifest, row, "file"));
    uint8_t *buf = tu_read_file(tu_data_path(name), len);
    ck_assert_msg(buf != NULL, "cannot read %s", name);
    return buf;
}

static int is_codec(int row, const char *codec)
{
    return strcmp(tu_manifest_get(manifest, row, "codec"), codec) == 0;
}

/* Decodes row's chunk whole and checks nbytes and sha256. */
static void check_row_decodes(int row)
{
    const char *file = tu_manifest_get(manifest, row, "file");
    size_t len;
    uint8_t *chunk = load_chunk(row, &len);
    long nbytes = atol(tu_manifest_get(manifest, row, "nbytes"));
    uint8_t *out = malloc((size_t)nbytes + 1);
    b2_dctx *ctx = b2_dctx_new();
    int rc = b2_chunk_decode(ctx, chunk, len, out, (size_t)nbytes);
    ck_assert_msg(rc == nbytes, "%s: decode returned %d (%s)", file, rc, b2_strerror(rc));
    char hex[65];
    tu_sha256_hex(out, (size_t)nbytes, hex);
    ck_assert_msg(strcmp(hex, tu_manifest_get(manifest, row, "sha256")) == 0,
                  "%s: sha256 differs", file);

    /* Block ranges through both sources agree with the whole decode. */
    rec_reader rr;
    b2_chunk_src srcs[2] = {mem_src(chunk, len), rec_src(&rr, chunk, len)};
    for (int s = 0; s < 2; s++) {
        b2_chunk_layout lay;
        ck_assert_int_eq(b2_chunk_layout_load(&lay, &srcs[s]), 0);
        /* Memcpyed chunks have no block starts but the same block geometry. */
        int32_t bsz = lay.info.blocksize;
        int32_t nb = (int32_t)((nbytes + bsz - 1) / bsz);
        if (!lay.info.memcpyed)
            ck_assert_int_eq(lay.info.nblocks, nb);
        uint8_t *part = malloc((size_t)nbytes);
        for (int32_t first = 0; first < nb; first++) {
            int32_t count = first % 2 == 0 ? 1 : nb - first;
            int got = b2_chunk_decode_blocks(ctx, &lay, &srcs[s], first, count, part,
                                             (size_t)nbytes);
            size_t start = (size_t)first * lay.info.blocksize;
            size_t end = (size_t)(first + count) * lay.info.blocksize;
            if (end > (size_t)nbytes)
                end = (size_t)nbytes;
            ck_assert_msg(got == (int)(end - start), "%s: blocks %d+%d returned %d (%s)", file,
                          first, count, got, b2_strerror(got));
            ck_assert_msg(memcmp(part, out + start, end - start) == 0,
                          "%s: blocks %d+%d differ", file, first, count);
        }
        free(part);
        b2_chunk_layout_free(&lay);
    }
    b2_dctx_free(ctx);
    free(out);
    free(chunk);
}

START_TEST(test_blosc1_fixtures_decode)
{
    int checked = 0;
    for (int r = 0; r < manifest->nrows; r++) {
        if (is_codec(r, "blosclz") || is_codec(r, "snappy"))
            continue;
        check_row_decodes(r);
        checked++;
    }
    ck_assert_int_ge(checked, 15);
}
END_TEST

/* Separate from the others: these need the BloscLZ decoder. */
START_TEST(test_blosc1_fixtures_blosclz)
{
    int checked = 0;
    for (int r = 0; r < manifest->nrows; r++) {
        if (!is_codec(r, "blosclz"))
            continue;
        check_row_decodes(r);
        checked++;
    }
    ck_assert_int_ge(checked, 6);
}
END_TEST

START_TEST(test_blosc1_snappy_refused)
{
    int checked = 0;
    for (int r = 0; r < manifest->nrows; r++) {
        if (!is_codec(r, "snappy"))
            continue;
        size_t len;
        uint8_t *chunk = load_chunk(r, &len);
        b2_chunk_info info;
        ck_assert_int_eq(b2_chunk_parse_header(chunk, len, &info), B2E_CODEC);
        uint8_t out[64];
        b2_dctx *ctx = b2_dctx_new();
        ck_assert_int_eq(b2_chunk_decode(ctx, chunk, len, out, sizeof out), B2E_CODEC);
        b2_chunk_layout lay;
        b2_chunk_src src = mem_src(chunk, len);
        ck_assert_int_eq(b2_chunk_layout_load(&lay, &src), B2E_CODEC);
        ck_assert_ptr_nonnull(strstr(b2_strerror(B2E_CODEC), "snappy"));
        b2_dctx_free(ctx);
        free(chunk);
        checked++;
    }
    ck_assert_int_eq(checked, 3);
}
END_TEST

/* The header fields agree with what the manifest says the chunk was made with. */
START_TEST(test_blosc1_headers)
{
    for (int r = 0; r < manifest->nrows; r++) {
        size_t len;
        uint8_t *chunk = load_chunk(r, &len);
        b2_chunk_info in;
        int rc = b2_chunk_parse_header(chunk, len, &in);
        if (is_codec(r, "snappy")) {
            ck_assert_int_eq(rc, B2E_CODEC);
            free(chunk);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(in.header_len, 16);
        ck_assert_int_eq(in.version, 2);
        ck_assert_int_eq(in.cbytes, (int32_t)len);
        ck_assert_int_eq(in.nbytes, atol(tu_manifest_get(manifest, r, "nbytes")));
        ck_assert_int_eq(in.typesize, atoi(tu_manifest_get(manifest, r, "typesize")));
        /* (c-blosc chose its own blocksizes: the manifest's is what was asked for.) */
        ck_assert_int_gt(in.blocksize, 0);
        ck_assert_int_le(in.blocksize, in.nbytes);
        const char *codec = tu_manifest_get(manifest, r, "codec");
        int want = b2_codec_from_name(codec);
        if (want == B2_LZ4HC)
            want = B2_LZ4;
        ck_assert_int_eq(in.codec, want);
        const char *filt = tu_manifest_get(manifest, r, "filters");
        uint8_t last = in.filters[B2_MAX_FILTERS - 1];
        if (strcmp(filt, "shuffle") == 0)
            ck_assert_int_eq(last, B2_SHUFFLE);
        else if (strcmp(filt, "bitshuffle") == 0)
            ck_assert_int_eq(last, B2_BITSHUFFLE);
        else
            ck_assert_int_eq(last, B2_NOFILTER);
        free(chunk);
    }
}
END_TEST

int main(void)
{
    manifest = tu_manifest_load("blosc1");
    if (manifest == NULL) {
        fprintf(stderr, "cannot load tests/data/blosc1/MANIFEST.tsv\n");
        return 1;
    }
    Suite *s = suite_create("codec-fixtures");
    TCase *tc = tcase_create("blosc1");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_blosc1_headers);
    tcase_add_test(tc, test_blosc1_fixtures_decode);
    tcase_add_test(tc, test_blosc1_snappy_refused);
    suite_add_tcase(s, tc);
    TCase *lz = tcase_create("blosc1-blosclz");
    tcase_set_timeout(lz, 60);
    tcase_add_test(lz, test_blosc1_fixtures_blosclz);
    suite_add_tcase(s, lz);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    tu_manifest_free(manifest);
    return failed == 0 ? 0 : 1;
}
