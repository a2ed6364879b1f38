/* Bloscpack reader: the reference files decode to their manifest sha256; checksum
 * mismatches, truncations and lying headers are refused with an error, never a crash. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame/bloscpack.h"
#include "tests/lib/testutil.h"

/* The fixtures (made by the reference) and the extra files made by make_extra.py. */
static const char *const dirs[] = {"bloscpack", "bloscpack-extra"};

/* A temporary file holding buf; the FILE keeps it alive (and deletes it on close). */
static FILE *tmp_with(const void *buf, size_t len)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    ck_assert_int_eq(fflush(f), 0);
    return f;
}

static uint8_t *load(const char *dir, const char *file, size_t *len)
{
    char name[512];
    snprintf(name, sizeof name, "%s/%s", dir, file);
    uint8_t *buf = tu_read_file(tu_data_path(name), len);
    ck_assert_msg(buf != NULL, "cannot read %s", name);
    return buf;
}

/* Opens the bytes as a Bloscpack file; returns the code and leaves err set. */
static int open_bytes(const void *buf, size_t len, char *err, size_t errlen)
{
    FILE *f = tmp_with(buf, len);
    b2_bloscpack *bp = NULL;
    int rc = b2bp_open(&bp, fileno(f), NULL, err, errlen);
    if (rc == 0) {
        ck_assert_ptr_nonnull(bp);
        b2bp_close(bp);
    } else {
        ck_assert_ptr_null(bp);
        ck_assert_msg(err[0] != '\0', "error %d without a reason", rc);
    }
    fclose(f);
    return rc;
}

/* Reads and decodes every chunk; returns the first error, or 0 with the contents. */
static int decode_all(b2_bloscpack *bp, uint8_t **out, char *err, size_t errlen)
{
    int64_t nbytes = b2bp_nbytes(bp);
    uint8_t *dst = malloc(nbytes ? (size_t)nbytes : 1);
    ck_assert_ptr_nonnull(dst);
    b2_dctx *ctx = b2_dctx_new();
    ck_assert_ptr_nonnull(ctx);
    int rc = 0;
    for (int64_t n = 0; n < b2bp_nchunks(bp) && rc >= 0; n++) {
        b2bp_chunk c;
        ck_assert_int_eq(b2bp_chunk_get(bp, n, &c), 0);
        uint8_t *raw = malloc((size_t)c.cbytes);
        ck_assert_ptr_nonnull(raw);
        rc = b2bp_read_chunk(bp, n, raw, (size_t)c.cbytes, err, errlen);
        if (rc >= 0) {
            ck_assert_int_eq(rc, c.cbytes);
            rc = b2_chunk_decode(ctx, raw, (size_t)c.cbytes, dst + c.content_off,
                                 (size_t)(nbytes - (int64_t)c.content_off));
            if (rc >= 0)
                ck_assert_int_eq(rc, c.nbytes);
        }
        free(raw);
    }
    b2_dctx_free(ctx);
    if (rc < 0) {
        free(dst);
        return rc;
    }
    *out = dst;
    return 0;
}

START_TEST(test_manifest_decodes)
{
    tu_manifest *m = tu_manifest_load(dirs[_i]);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_gt(m->nrows, 0);
    for (int r = 0; r < m->nrows; r++) {
        const char *file = tu_manifest_get(m, r, "file");
        char path[512], err[256] = "";
        snprintf(path, sizeof path, "%s/%s", dirs[_i], file);
        FILE *f = fopen(tu_data_path(path), "rb");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        b2_bloscpack *bp;
        int rc = b2bp_open(&bp, fileno(f), NULL, err, sizeof err);
        ck_assert_msg(rc == 0, "%s: open: %s (%d)", file, err, rc);

        const b2bp_header *h = b2bp_get_header(bp);
        ck_assert_str_eq(b2bp_checksum_name(h->checksum), tu_manifest_get(m, r, "checksum"));
        ck_assert_int_eq(h->options & 1, atoi(tu_manifest_get(m, r, "offsets")));
        ck_assert_int_eq(h->typesize, atoi(tu_manifest_get(m, r, "typesize")));
        ck_assert_int_eq(b2bp_nbytes(bp), atoll(tu_manifest_get(m, r, "nbytes")));
        const b2_chunk_info *first = b2bp_first_info(bp);
        if (b2bp_nchunks(bp) > 0) {
            ck_assert_ptr_nonnull(first);
            /* A Blosc1 header says lz4 for lz4hc chunks too. */
            const char *codec = tu_manifest_get(m, r, "codec");
            ck_assert_str_eq(b2_codec_name(first->codec), strcmp(codec, "lz4hc") ? codec : "lz4");
        }
        if (h->nchunks >= 0)
            ck_assert_int_eq(b2bp_nchunks(bp), h->nchunks);
        if (h->chunksize > 0 && b2bp_nchunks(bp) > 1) {
            b2bp_chunk c;
            ck_assert_int_eq(b2bp_chunk_get(bp, 0, &c), 0);
            ck_assert_int_eq(c.nbytes, atoi(tu_manifest_get(m, r, "chunksize")));
        }

        uint8_t *data = NULL;
        rc = decode_all(bp, &data, err, sizeof err);
        ck_assert_msg(rc == 0, "%s: decode: %s (%s)", file, err, b2_strerror(rc));
        char hex[65];
        tu_sha256_hex(data, (size_t)b2bp_nbytes(bp), hex);
        ck_assert_msg(strcmp(hex, tu_manifest_get(m, r, "sha256")) == 0, "%s: sha256 %s", file, hex);
        free(data);
        b2bp_close(bp);
        fclose(f);
    }
    tu_manifest_free(m);
}
END_TEST

/* Flips one byte in the middle of chunk 1's compressed data (or of its stored checksum):
 * open still works (headers intact), reading chunk 1 says which chunk is wrong. */
START_TEST(test_checksum_mismatch)
{
    tu_manifest *m = tu_manifest_load(dirs[_i]);
    ck_assert_ptr_nonnull(m);
    int tested = 0;
    for (int r = 0; r < m->nrows; r++) {
        const char *file = tu_manifest_get(m, r, "file");
        size_t len;
        uint8_t *buf = load(dirs[_i], file, &len);
        FILE *f = tmp_with(buf, len);
        char err[256] = "";
        b2_bloscpack *bp;
        ck_assert_int_eq(b2bp_open(&bp, fileno(f), NULL, err, sizeof err), 0);
        int cklen = b2bp_checksum_len(b2bp_get_header(bp)->checksum);
        int64_t target = b2bp_nchunks(bp) > 1 ? 1 : 0;
        b2bp_chunk c;
        int has_chunk = b2bp_chunk_get(bp, target, &c) == 0;
        b2bp_close(bp);
        fclose(f);
        if (cklen == 0 || !has_chunk) {
            free(buf);
            continue;
        }
        uint64_t spots[2] = {c.file_off + B2_HEADER_LEN + (uint64_t)(c.cbytes - B2_HEADER_LEN) / 2,
                             c.file_off + (uint64_t)c.cbytes + (uint64_t)cklen - 1};
        for (int s = 0; s < 2; s++) {
            buf[spots[s]] ^= 0x5a;
            f = tmp_with(buf, len);
            ck_assert_int_eq(b2bp_open(&bp, fileno(f), NULL, err, sizeof err), 0);
            uint8_t *raw = malloc((size_t)c.cbytes);
            ck_assert_ptr_nonnull(raw);
            err[0] = '\0';
            int rc = b2bp_read_chunk(bp, target, raw, (size_t)c.cbytes, err, sizeof err);
            ck_assert_msg(rc == B2F_ECHECKSUM, "%s spot %d: got %d", file, s, rc);
            char want[32];
            snprintf(want, sizeof want, "chunk %d:", (int)target);
            ck_assert_msg(strstr(err, want) != NULL, "%s: error text \"%s\" does not name the chunk",
                          file, err);
            /* The other chunks still read. */
            if (target == 1) {
                b2bp_chunk c0;
                ck_assert_int_eq(b2bp_chunk_get(bp, 0, &c0), 0);
                uint8_t *raw0 = malloc((size_t)c0.cbytes);
                ck_assert_int_eq(b2bp_read_chunk(bp, 0, raw0, (size_t)c0.cbytes, err, sizeof err),
                                 c0.cbytes);
                free(raw0);
            }
            free(raw);
            b2bp_close(bp);
            fclose(f);
            buf[spots[s]] ^= 0x5a;
            tested++;
        }
        free(buf);
    }
    ck_assert_int_gt(tested, 0);
    tu_manifest_free(m);
}
END_TEST

/* 1 if a file of nchunks -1 cut at len still is a whole Bloscpack file (the cut falls
 * between chunks): the format cannot tell that from a shorter file. */
static int cut_between_chunks(const uint8_t *buf, size_t full, size_t len)
{
    FILE *f = tmp_with(buf, full);
    b2_bloscpack *bp;
    ck_assert_int_eq(b2bp_open(&bp, fileno(f), NULL, NULL, 0), 0);
    int between = b2bp_get_header(bp)->nchunks < 0 && len == B2BP_HEADER_LEN;
    for (int64_t n = 0; n < b2bp_nchunks(bp); n++) {
        b2bp_chunk c;
        ck_assert_int_eq(b2bp_chunk_get(bp, n, &c), 0);
        size_t end = c.file_off + (size_t)c.cbytes +
                     (size_t)b2bp_checksum_len(b2bp_get_header(bp)->checksum);
        if (b2bp_get_header(bp)->nchunks < 0 && end == len)
            between = 1;
    }
    b2bp_close(bp);
    fclose(f);
    return between;
}

/* Every truncation of every file is refused at open (the chunks no longer fit), except a
 * cut between chunks of a file that does not say how many it has. */
START_TEST(test_truncations)
{
    tu_manifest *m = tu_manifest_load(dirs[_i]);
    ck_assert_ptr_nonnull(m);
    for (int r = 0; r < m->nrows; r++) {
        const char *file = tu_manifest_get(m, r, "file");
        size_t len;
        uint8_t *buf = load(dirs[_i], file, &len);
        size_t cuts[] = {0, 3, 4, 16, 31, 32, 33, 40, 48, 64, len / 3, len / 2, len - 17, len - 4,
                         len - 1};
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
            if (cuts[i] >= len)
                continue;
            char err[256] = "";
            int rc = open_bytes(buf, cuts[i], err, sizeof err);
            ck_assert_msg(rc < 0 || cut_between_chunks(buf, len, cuts[i]), "%s cut at %zu opened",
                          file, cuts[i]);
        }
        free(buf);
    }
    tu_manifest_free(m);
}
END_TEST

static void put_i64(uint8_t *p, int64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

static void put_i32(uint8_t *p, int32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)((uint32_t)v >> (8 * i));
}

/* Opens a copy of file with an edit applied; expects code (and a reason mentioning what). */
static void expect_refused(const char *file, void (*edit)(uint8_t *, size_t *), int code,
                           const char *what)
{
    size_t len;
    uint8_t *buf = load("bloscpack", file, &len);
    uint8_t *big = realloc(buf, len + 64);
    ck_assert_ptr_nonnull(big);
    buf = big;
    edit(buf, &len);
    char err[256] = "";
    int rc = open_bytes(buf, len, err, sizeof err);
    ck_assert_msg(rc == code, "%s: expected %d, got %d (%s)", what, code, rc, err);
    free(buf);
}

/* f64-lz4-c262144-off-adler32.blp: 4 chunks, offsets table at 32..63, data from 64. */
#define WITH_TABLE "f64-lz4-c262144-off-adler32.blp"
#define NO_TABLE "text-zstd-c65536-nooff-sha256.blp"
#define UNKNOWN "f32-zlib-c1048576-nooff-nock-unknown.blp"

static void bad_magic(uint8_t *b, size_t *len) { b[0] = 'B'; }
static void bad_version(uint8_t *b, size_t *len) { b[4] = 3; }
static void bad_options(uint8_t *b, size_t *len) { b[5] |= 2; }
static void bad_checksum(uint8_t *b, size_t *len) { b[6] = 9; }
static void checksum_kind_changed(uint8_t *b, size_t *len) { b[6] = 8; }
static void huge_nchunks(uint8_t *b, size_t *len) { put_i64(b + 16, INT64_MAX); }
static void unfit_nchunks(uint8_t *b, size_t *len) { put_i64(b + 16, 100000); }
static void negative_nchunks(uint8_t *b, size_t *len) { put_i64(b + 16, -2); }
static void more_nchunks(uint8_t *b, size_t *len) { put_i64(b + 16, 5); }
static void fewer_nchunks(uint8_t *b, size_t *len) { put_i64(b + 16, 3); }
static void zero_chunksize(uint8_t *b, size_t *len) { put_i32(b + 8, 0); }
static void wrong_chunksize(uint8_t *b, size_t *len) { put_i32(b + 8, 262136); }
static void wrong_last_chunk(uint8_t *b, size_t *len) { put_i32(b + 12, 1000); }
static void last_past_chunksize(uint8_t *b, size_t *len) { put_i32(b + 12, 262145); }
static void offset_into_header(uint8_t *b, size_t *len) { put_i64(b + 32, 8); }
static void offset_into_table(uint8_t *b, size_t *len) { put_i64(b + 32, 40); }
static void offset_negative(uint8_t *b, size_t *len) { put_i64(b + 40, -1); }
static void offset_past_end(uint8_t *b, size_t *len) { put_i64(b + 56, (int64_t)*len + 100); }
static void offset_huge(uint8_t *b, size_t *len) { put_i64(b + 48, INT64_MAX); }
static void offsets_overlap(uint8_t *b, size_t *len) { put_i64(b + 48, 64 + 10); }
static void offset_shifted(uint8_t *b, size_t *len)
{
    int64_t o = 0;
    for (int i = 7; i >= 0; i--)
        o = o << 8 | b[40 + i];
    put_i64(b + 40, o + 1);
}
static void table_without_count(uint8_t *b, size_t *len) { put_i64(b + 16, -1); }
static void trailing_bytes(uint8_t *b, size_t *len) { memset(b + *len, 0, 7); *len += 7; }
static void trailing_header(uint8_t *b, size_t *len) { memset(b + *len, 0, 40); *len += 40; }
static void cbytes_lies(uint8_t *b, size_t *len) { put_i32(b + 32 + 12, 65536 + 16); }
static void cbytes_small(uint8_t *b, size_t *len) { put_i32(b + 64 + 12, 8); }
static void blosc_version_bad(uint8_t *b, size_t *len) { b[64] = 0; }

/* Each edit of a good file, and the code it must be refused with. */
static const struct bad_case {
    const char *file;
    void (*edit)(uint8_t *, size_t *);
    int code;
    const char *what;
} bad_cases[] = {
    {WITH_TABLE, bad_magic, B2F_EFORMAT, "bad magic"},
    {WITH_TABLE, bad_version, B2F_EHEADER, "version 3"},
    {WITH_TABLE, bad_options, B2F_EHEADER, "options bit 1"},
    {WITH_TABLE, bad_checksum, B2F_EHEADER, "checksum id 9"},
    {WITH_TABLE, huge_nchunks, B2F_ETOOBIG, "nchunks INT64_MAX"},
    {WITH_TABLE, unfit_nchunks, B2F_EHEADER, "nchunks 100000 in 600 KB"},
    {WITH_TABLE, negative_nchunks, B2F_EHEADER, "nchunks -2"},
    {WITH_TABLE, zero_chunksize, B2F_EHEADER, "chunk-size 0"},
    {WITH_TABLE, wrong_chunksize, B2F_EHEADER, "chunk-size not the chunks' size"},
    {WITH_TABLE, wrong_last_chunk, B2F_EHEADER, "last-chunk not the last chunk's size"},
    {WITH_TABLE, last_past_chunksize, B2F_EHEADER, "last-chunk > chunk-size"},
    {WITH_TABLE, table_without_count, B2F_EHEADER, "offsets table, nchunks -1"},
    {WITH_TABLE, checksum_kind_changed, B2F_EINDEX, "adler32 -> sha512: chunks overrun"},
    {WITH_TABLE, more_nchunks, B2F_EINDEX, "nchunks 5 of 4"},
    {WITH_TABLE, fewer_nchunks, B2F_EINDEX, "nchunks 3 of 4"},
    {NO_TABLE, more_nchunks, B2F_ERANGE, "nchunks 5 of 4, no table"},
    {NO_TABLE, fewer_nchunks, B2F_ERANGE, "nchunks 3 of 4, no table"},
    {WITH_TABLE, offset_into_header, B2F_EINDEX, "offset into the header"},
    {WITH_TABLE, offset_into_table, B2F_EINDEX, "offset into the offsets table"},
    {WITH_TABLE, offset_negative, B2F_EINDEX, "offset -1"},
    {WITH_TABLE, offset_past_end, B2F_EINDEX, "offset past the end"},
    {WITH_TABLE, offset_huge, B2F_EINDEX, "offset INT64_MAX"},
    {WITH_TABLE, offsets_overlap, B2F_EINDEX, "offset inside chunk 0"},
    {WITH_TABLE, offset_shifted, B2F_EINDEX, "offset one byte late"},
    {WITH_TABLE, trailing_bytes, B2F_ERANGE, "7 bytes after the last chunk"},
    {UNKNOWN, trailing_bytes, B2F_ERANGE, "walk: 7 bytes after the last chunk"},
    {UNKNOWN, trailing_header, B2E_VERSION, "walk: zeros where a chunk should be"},
    {NO_TABLE, cbytes_lies, B2F_ERANGE, "walk: cbytes past the end"},
    {WITH_TABLE, cbytes_small, B2E_HEADER, "cbytes smaller than a header"},
    {WITH_TABLE, blosc_version_bad, B2E_VERSION, "Blosc version 0"},
};

START_TEST(test_bad_input)
{
    const struct bad_case *c = &bad_cases[_i];
    expect_refused(c->file, c->edit, c->code, c->what);
}
END_TEST

/* Reads through an injected I/O table: a failing pread is an error, not a crash. */
static int fail_after;
static ssize_t counting_pread(int fd, void *buf, size_t len, off_t off)
{
    if (fail_after-- <= 0) {
        errno = EIO;
        return -1;
    }
    /* Short reads too: callers must loop. */
    return pread(fd, buf, len > 1000 ? len / 2 : len, off);
}

START_TEST(test_io_failures)
{
    size_t len;
    uint8_t *buf = load("bloscpack", WITH_TABLE, &len);
    FILE *f = tmp_with(buf, len);
    b2f_io io = {.pread = counting_pread};
    int opened = 0;
    for (int k = 0; k < 200 && !opened; k++) {
        fail_after = k;
        b2_bloscpack *bp = NULL;
        char err[256] = "";
        int rc = b2bp_open(&bp, fileno(f), &io, err, sizeof err);
        if (rc == 0) {
            opened = 1;
            b2bp_close(bp);
        } else {
            ck_assert_int_eq(rc, -EIO);
            ck_assert_ptr_null(bp);
        }
    }
    ck_assert(opened);
    fail_after = 1000000;
    b2_bloscpack *bp;
    char err[256];
    ck_assert_int_eq(b2bp_open(&bp, fileno(f), &io, err, sizeof err), 0);
    b2bp_chunk c;
    ck_assert_int_eq(b2bp_chunk_get(bp, 2, &c), 0);
    ck_assert_int_eq(b2bp_chunk_get(bp, 4, &c), B2F_ERANGE);
    ck_assert_int_eq(b2bp_chunk_get(bp, -1, &c), B2F_ERANGE);
    ck_assert_int_eq(b2bp_chunk_get(bp, 2, &c), 0);
    uint8_t *raw = malloc((size_t)c.cbytes);
    ck_assert_int_eq(b2bp_read_chunk(bp, 2, raw, (size_t)c.cbytes, err, sizeof err), c.cbytes);
    ck_assert_int_eq(b2bp_read_chunk(bp, 2, raw, (size_t)c.cbytes - 1, err, sizeof err),
                     B2E_DST_SMALL);
    fail_after = 0;
    ck_assert_int_eq(b2bp_read_chunk(bp, 2, raw, (size_t)c.cbytes, err, sizeof err), -EIO);
    free(raw);
    b2bp_close(bp);
    fclose(f);
    free(buf);
}
END_TEST

/* Not Bloscpack at all: short files and other magic. */
START_TEST(test_not_bloscpack)
{
    char err[256];
    ck_assert_int_eq(open_bytes("", 0, err, sizeof err), B2F_EFORMAT);
    ck_assert_int_eq(open_bytes("blp", 3, err, sizeof err), B2F_EFORMAT);
    ck_assert_int_eq(open_bytes("blpk\2\0\0\1", 8, err, sizeof err), B2F_EHEADER);
    uint8_t zeros[64] = {0};
    ck_assert_int_eq(open_bytes(zeros, sizeof zeros, err, sizeof err), B2F_EFORMAT);
    ck_assert(b2bp_is_bloscpack("blpk", 4));
    ck_assert(!b2bp_is_bloscpack("blp", 3));
    ck_assert_int_eq(b2bp_checksum_len(B2BP_CK_SHA384), 48);
    ck_assert_int_eq(b2bp_checksum_len(9), -1);
    ck_assert_ptr_null(b2bp_checksum_name(-1));
}
END_TEST

static Suite *bloscpack_suite(void)
{
    Suite *s = suite_create("bloscpack");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_manifest_decodes, 0, 2);
    tcase_add_loop_test(tc, test_checksum_mismatch, 0, 2);
    tcase_add_loop_test(tc, test_truncations, 0, 2);
    tcase_add_loop_test(tc, test_bad_input, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, test_io_failures);
    tcase_add_test(tc, test_not_bloscpack);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(bloscpack_suite());
}
