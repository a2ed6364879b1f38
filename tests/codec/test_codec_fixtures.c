/* Decoding chunks made by the reference libraries, whole and by block ranges, against
 * their MANIFEST sha256: the Blosc1 chunks of c-blosc 1.21 (tests/data/blosc1), single
 * C-Blosc2 3.3 chunks (tests/data/codec) and the chunks inside the fixture frames. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/chunk.h"
#include "tests/codec/codec_helpers.h"
#include "tests/lib/testutil.h"

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

/* Decodes a chunk whole and checks nbytes and sha256 (NULL: only that it decodes into
 * `out`), then every block alone and every tail of blocks through both sources. */
static void check_chunk(const char *name, const uint8_t *chunk, size_t len, long nbytes,
                        const char *sha, uint8_t *out)
{
    b2_dctx *ctx = b2_dctx_new();
    int rc = b2_chunk_decode(ctx, chunk, len, out, (size_t)nbytes);
    ck_assert_msg(rc == nbytes, "%s: decode returned %d (%s)", name, rc, b2_strerror(rc));
    if (sha != NULL) {
        char hex[65];
        tu_sha256_hex(out, (size_t)nbytes, hex);
        ck_assert_msg(strcmp(hex, sha) == 0, "%s: sha256 differs", name);
    }

    rec_reader rr;
    b2_chunk_src srcs[2] = {mem_src(chunk, len), rec_src(&rr, chunk, len)};
    for (int s = 0; s < 2; s++) {
        b2_chunk_layout lay;
        ck_assert_int_eq(b2_chunk_layout_load(&lay, &srcs[s]), 0);
        /* Memcpyed and special chunks have no block starts but the same geometry. */
        int32_t bsz = lay.info.blocksize;
        int32_t nb = (int32_t)((nbytes + bsz - 1) / bsz);
        if (!lay.info.memcpyed && lay.info.special == B2_SPECIAL_NONE)
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
            ck_assert_msg(got == (int)(end - start), "%s: blocks %d+%d returned %d (%s)", name,
                          first, count, got, b2_strerror(got));
            ck_assert_msg(memcmp(part, out + start, end - start) == 0,
                          "%s: blocks %d+%d differ", name, first, count);
        }
        free(part);
        b2_chunk_layout_free(&lay);
    }
    b2_dctx_free(ctx);
}

static void check_row_decodes(int row)
{
    size_t len;
    uint8_t *chunk = load_chunk(row, &len);
    long nbytes = atol(tu_manifest_get(manifest, row, "nbytes"));
    uint8_t *out = malloc((size_t)nbytes + 1);
    check_chunk(tu_manifest_get(manifest, row, "file"), chunk, len, nbytes,
                tu_manifest_get(manifest, row, "sha256"), out);
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

/* Single C-Blosc2 3.3 chunks: multi-block delta, bitshuffle, lossy, special zero, and
 * the quirky split block that is not whole items (read whole, unlike C-Blosc2). */
START_TEST(test_blosc2_chunks)
{
    tu_manifest *m = tu_manifest_load("codec");
    ck_assert_ptr_nonnull(m);
    ck_assert_int_ge(m->nrows, 9);
    for (int r = 0; r < m->nrows; r++) {
        char name[300];
        snprintf(name, sizeof name, "codec/%s", tu_manifest_get(m, r, "file"));
        size_t len;
        uint8_t *chunk = tu_read_file(tu_data_path(name), &len);
        ck_assert_msg(chunk != NULL, "cannot read %s", name);
        long nbytes = atol(tu_manifest_get(m, r, "nbytes"));
        uint8_t *out = malloc((size_t)nbytes);
        check_chunk(name, chunk, len, nbytes, tu_manifest_get(m, r, "sha256"), out);
        free(out);
        free(chunk);
    }
    tu_manifest_free(m);
}
END_TEST

/* The chunks of the fixture frames that C-Blosc2 wrote in one go lie back to back from
 * the end of the frame header (its size is the int32 after the "b2frame" magic); their
 * decoded bytes in order are the frame's contents. Edited frames and frames with
 * special-value chunks (kept in the index only) are left to the frame tests. */
START_TEST(test_frame_chunks)
{
    tu_manifest *m = tu_manifest_load("");
    ck_assert_ptr_nonnull(m);
    int checked = 0;
    for (int r = 0; r < m->nrows; r++) {
        const char *note = tu_manifest_get(m, r, "note");
        if (strcmp(note, "plain") != 0 && strcmp(note, "lossy") != 0 &&
            strncmp(note, "metalayers", 10) != 0)
            continue;
        const char *file = tu_manifest_get(m, r, "file");
        size_t len;
        uint8_t *frame = tu_read_file(tu_data_path(file), &len);
        ck_assert_msg(frame != NULL && len > 16 && memcmp(frame + 2, "b2frame", 7) == 0 &&
                          frame[10] == 0xd2, "%s: not a frame", file);
        size_t pos = (size_t)frame[11] << 24 | (size_t)frame[12] << 16 |
                     (size_t)frame[13] << 8 | frame[14];
        long nbytes = atol(tu_manifest_get(m, r, "nbytes"));
        int nchunks = atoi(tu_manifest_get(m, r, "nchunks"));
        uint8_t *all = malloc((size_t)nbytes);
        size_t done = 0;
        for (int c = 0; c < nchunks; c++) {
            b2_chunk_info in;
            ck_assert_int_lt(pos, len);
            ck_assert_int_eq(b2_chunk_parse_header(frame + pos, len - pos, &in), 0);
            ck_assert_int_le(done + (size_t)in.nbytes, (size_t)nbytes);
            char name[400];
            snprintf(name, sizeof name, "%s chunk %d", file, c);
            check_chunk(name, frame + pos, (size_t)in.cbytes, in.nbytes, NULL, all + done);
            done += (size_t)in.nbytes;
            pos += (size_t)in.cbytes;
        }
        ck_assert_int_eq(done, nbytes);
        char hex[65];
        tu_sha256_hex(all, done, hex);
        ck_assert_msg(strcmp(hex, tu_manifest_get(m, r, "sha256")) == 0, "%s: sha256 differs",
                      file);
        free(all);
        free(frame);
        checked++;
    }
    ck_assert_int_ge(checked, 18);
    tu_manifest_free(m);
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
    tcase_add_test(tc, test_blosc2_chunks);
    tcase_add_test(tc, test_frame_chunks);
    suite_add_tcase(s, tc);
    TCase *lz = tcase_create("blosc1-blosclz");
    tcase_set_timeout(lz, 60);
    tcase_add_test(lz, test_blosc1_fixtures_blosclz);
    suite_add_tcase(s, lz);
    int status = tu_run_suite(s);
    tu_manifest_free(manifest);
    return status;
}
