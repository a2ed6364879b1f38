/* Check tests of frame/ reading: every fixture frame and Bloscpack file, and every frame
 * b2fs wrote (tests/data/b2fs-written), decodes to its MANIFEST sha256 through b2f_pread
 * and chunk by chunk, with the manifest's parameters; random ranges equal the slices;
 * metalayers and vlmetalayers; bad frames refused with a reason. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frame/frame.h"
#include "tests/codec/codec_helpers.h"
#include "tests/lib/testutil.h"

static int open_data(const char *name)
{
    int fd = open(tu_data_path(name), O_RDONLY);
    ck_assert_msg(fd >= 0, "cannot open %s", name);
    return fd;
}

/* In a frame manifest (the columns codec to nchunks; Bloscpack manifests have fewer),
 * the frame's header must give the row's parameters. */
static void check_params(const char *name, const b2f_stat *st, const tu_manifest *m, int r)
{
    static const char *const cols[] = { "codec", "clevel", "typesize", "filters",
                                        "chunksize", "blocksize", "nchunks" };
    if (tu_manifest_get(m, r, "nchunks") == NULL)
        return;
    const char *codec = b2_codec_name(st->codec);
    char filters[128], got[512], want[512] = "";
    ck_assert_int_eq(b2_filters_format(st->filters, st->filters_meta, ',', filters,
                                       sizeof filters), 0);
    snprintf(got, sizeof got, "%s %d %d %s %d %d %lld", codec ? codec : "?", st->clevel,
             st->typesize, filters, (int)st->chunksize, (int)st->blocksize,
             (long long)st->nchunks);
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        const char *v = tu_manifest_get(m, r, cols[i]);
        size_t n = strlen(want);
        snprintf(want + n, sizeof want - n, "%s%s", i ? " " : "", v ? v : "?");
    }
    ck_assert_msg(strcmp(got, want) == 0, "%s: header gives %s, manifest %s", name, got, want);
}

/* Reads row r's container whole through b2f_pread and chunk by chunk; checks both, and
 * its parameters. */
static void check_container(const char *dir, const tu_manifest *m, int r)
{
    char name[512];
    snprintf(name, sizeof name, "%s%s%s", dir, *dir ? "/" : "", tu_manifest_get(m, r, "file"));
    const char *want_sha = tu_manifest_get(m, r, "sha256");
    int64_t want_nbytes = atoll(tu_manifest_get(m, r, "nbytes"));
    int fd = open_data(name);
    b2_frame *f;
    char err[256] = "";
    int rc = b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err);
    ck_assert_msg(rc == 0, "%s: open: %s (%s)", name, b2f_strerror(rc), err);
    b2f_stat st;
    b2f_stat_get(f, &st);
    check_params(name, &st, m, r);
    ck_assert_msg(st.nbytes == want_nbytes, "%s: nbytes %lld, want %lld", name,
                  (long long)st.nbytes, (long long)want_nbytes);
    uint8_t *all = malloc((size_t)st.nbytes + 1);
    b2_dctx *ctx = b2_dctx_new();
    ssize_t got = b2f_pread(f, ctx, all, (size_t)st.nbytes + 100, 0);
    ck_assert_msg(got == st.nbytes, "%s: pread gave %zd: %s", name, got,
                  got < 0 ? b2f_strerror((int)got) : "short");
    char hex[65];
    tu_sha256_hex(all, (size_t)st.nbytes, hex);
    ck_assert_msg(strcmp(hex, want_sha) == 0, "%s: sha256 %s, want %s", name, hex, want_sha);

    /* chunk by chunk, into a second buffer */
    uint8_t *again = malloc((size_t)st.nbytes + 1);
    for (int64_t n = 0; n < st.nchunks; n++) {
        uint64_t off;
        int32_t nb;
        ck_assert_int_eq(b2f_chunk_span(f, n, &off, &nb), 0);
        ck_assert_int_eq(b2f_chunk_at(f, off), n);
        rc = b2f_read_chunk(f, ctx, n, again + off, (size_t)nb);
        ck_assert_msg(rc == nb, "%s: chunk %lld: %s", name, (long long)n,
                      rc < 0 ? b2f_strerror(rc) : "short");
    }
    ck_assert_msg(memcmp(all, again, (size_t)st.nbytes) == 0, "%s: chunks differ from pread", name);

    /* random ranges */
    uint64_t seed = 0x9e3779b97f4a7c15ULL ^ (uint64_t)st.nbytes;
    for (int i = 0; i < 40 && st.nbytes > 0; i++) {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
        uint64_t off = seed % (uint64_t)st.nbytes;
        size_t len = (size_t)((seed >> 20) % 70000) + 1;
        if (i % 4 == 0)
            len = (size_t)((seed >> 20) % 64) + 1;
        size_t want = off + len > (uint64_t)st.nbytes ? (size_t)((uint64_t)st.nbytes - off) : len;
        memset(again, 0xa5, want);
        got = b2f_pread(f, ctx, again, len, off);
        ck_assert_msg(got == (ssize_t)want, "%s: pread(%zu at %llu) gave %zd", name, len,
                      (unsigned long long)off, got);
        ck_assert_msg(memcmp(again, all + off, want) == 0, "%s: range %zu at %llu differs", name,
                      len, (unsigned long long)off);
    }
    ck_assert_int_eq(b2f_pread(f, ctx, again, 10, (uint64_t)st.nbytes), 0);
    free(all);
    free(again);
    b2_dctx_free(ctx);
    b2f_close(f);
    close(fd);
}

static void check_manifest(const char *dir)
{
    tu_manifest *m = tu_manifest_load(dir);
    ck_assert_msg(m != NULL, "no MANIFEST.tsv in tests/data/%s", dir);
    ck_assert_int_gt(m->nrows, 0);
    for (int r = 0; r < m->nrows; r++) {
        const char *note = tu_manifest_get(m, r, "note");
        if (note && strstr(note, "codec-not-in-blosc2"))
            continue;
        check_container(dir, m, r);
    }
    tu_manifest_free(m);
}

START_TEST(fixture_frames)
{
    check_manifest("");
}
END_TEST

/* C-Blosc2 3.3 frames of chunks of variable-length blocks: read as frames of variable
 * chunks, whatever chunksize the header gives. */
START_TEST(fixture_vlblocks)
{
    check_manifest("vlblocks");
    int fd = open_data("vlblocks/vl-zstd5-shuffle-t4-one.b2frame");
    b2_frame *f;
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    b2f_stat st;
    b2f_stat_get(f, &st);
    ck_assert_int_eq(st.chunksize, 0);
    b2f_close(f);
    close(fd);
}
END_TEST

/* C-Blosc2 3.3 frames with its bytedelta filter (35), after a shuffle or alone. */
START_TEST(fixture_bytedelta)
{
    check_manifest("bytedelta");
}
END_TEST

/* ... and with its int_trunc filter (36): lossy, decoding is the identity. */
START_TEST(fixture_int_trunc)
{
    check_manifest("int_trunc");
}
END_TEST

START_TEST(fixture_bloscpack)
{
    check_manifest("bloscpack");
}
END_TEST

START_TEST(written_by_b2fs)
{
    check_manifest("b2fs-written");
    int fd = open_data("b2fs-written/compacted-meta-zstd-t8.b2frame");
    b2_frame *f;
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    const uint8_t *v;
    size_t len;
    ck_assert_int_eq(b2f_meta_get(f, "units", &v, &len), 0);
    ck_assert(len == 6 && memcmp(v, "\xa5HELLO", 6) == 0);
    uint8_t *c;
    ck_assert_int_eq(b2f_vlmeta_get(f, "history", &c, &len), 0);
    ck_assert_int_eq(len, 5000);
    for (size_t i = 0; i < len; i++)
        ck_assert_int_eq(c[i], i % 251);
    free(c);
    ck_assert_int_eq(b2f_dead_bytes(f), 0);
    b2f_close(f);
    close(fd);
    fd = open_data("b2fs-written/edited-meta-zstd-t8.b2frame");
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    ck_assert_int_gt(b2f_dead_bytes(f), 0);
    b2f_close(f);
    close(fd);
    /* written by b2frame pack, meta and compact */
    fd = open_data("b2fs-written/meta-zstd5-shuffle-t8-c32768.b2frame");
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    ck_assert_int_eq(b2f_vlmeta_get(f, "attrs", &c, &len), 0);
    ck_assert(len == 14 && memcmp(c, "{\"units\": \"K\"}", 14) == 0);
    free(c);
    ck_assert_int_eq(b2f_vlmeta_get(f, "blob", &c, &len), 0);
    ck_assert(len == 8 && memcmp(c, "bin\0ary\377", 8) == 0);
    free(c);
    ck_assert_int_eq(b2f_dead_bytes(f), 0);
    b2f_close(f);
    close(fd);
}
END_TEST

START_TEST(fixture_stat)
{
    int fd = open_data("f64-zstd3-shuffle-t8-c262144-bx.b2frame");
    b2_frame *f;
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    b2f_stat st;
    b2f_stat_get(f, &st);
    ck_assert_int_eq(st.kind, B2F_KIND_FRAME);
    ck_assert_int_eq(st.codec, B2_ZSTD);
    ck_assert_int_eq(st.clevel, 3);
    ck_assert_int_eq(st.typesize, 8);
    ck_assert_int_eq(st.chunksize, 262144);
    ck_assert_int_eq(st.blocksize, 16384);
    ck_assert_int_eq(st.nchunks, 4);
    ck_assert_int_eq(st.frame_version, 2);
    ck_assert_int_eq(st.filters[5], B2_SHUFFLE);
    ck_assert_int_eq(b2f_dead_bytes(f), 0);
    const b2_chunk_layout *lay;
    ck_assert_int_eq(b2f_chunk_layout(f, 1, &lay), 0);
    ck_assert_int_eq(lay->info.blocksize, 16384);
    ck_assert_int_eq(lay->info.nblocks, 16);
    /* a block read returns exactly that block */
    uint8_t blk[16384], whole[262144];
    b2_dctx *ctx = b2_dctx_new();
    ck_assert_int_eq(b2f_read_blocks(f, ctx, 1, 3, 1, blk, sizeof blk), 16384);
    ck_assert_int_eq(b2f_read_chunk(f, ctx, 1, whole, sizeof whole), 262144);
    ck_assert(memcmp(blk, whole + 3 * 16384, 16384) == 0);
    ck_assert_int_eq(b2f_chunk_span(f, 4, &(uint64_t){0}, &(int32_t){0}), B2F_ERANGE);
    ck_assert_int_eq(b2f_chunk_at(f, 1048576), B2F_ERANGE);
    b2_dctx_free(ctx);
    b2f_close(f);
    close(fd);
}
END_TEST

static size_t bytes_read;

static ssize_t counting_pread(int fd, void *buf, size_t len, off_t off)
{
    ssize_t r = pread(fd, buf, len, off);
    if (r > 0)
        bytes_read += (size_t)r;
    return r;
}

/* A small read of a big chunk reads its header, block starts and the one block needed. */
START_TEST(lazy_block_reads)
{
    int fd = open_data("f64-zstd3-shuffle-t8-c262144-bx.b2frame");
    const b2f_io io = {counting_pread, NULL, NULL, NULL};
    b2_frame *f;
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, &io, NULL, 0), 0);
    uint8_t *raw;
    int32_t cb;
    ck_assert_int_eq(b2f_read_raw_chunk(f, 2, &raw, &cb), 0);
    free(raw);
    uint8_t whole[262144], piece[100];
    b2_dctx *ctx = b2_dctx_new();
    ck_assert_int_eq(b2f_read_chunk(f, ctx, 2, whole, sizeof whole), 262144);
    bytes_read = 0;
    ck_assert_int_eq(b2f_pread(f, ctx, piece, sizeof piece, 2 * 262144 + 5 * 16384 + 77), 100);
    ck_assert(memcmp(piece, whole + 5 * 16384 + 77, 100) == 0);
    ck_assert_msg(bytes_read > 0 && bytes_read < (size_t)cb / 4, "read %zu bytes of a %d-byte "
                  "chunk for 100 bytes", bytes_read, cb);
    /* and again: the layout is cached, only the block is read */
    size_t first = bytes_read;
    bytes_read = 0;
    ck_assert_int_eq(b2f_pread(f, ctx, piece, sizeof piece, 2 * 262144 + 9 * 16384), 100);
    ck_assert_int_lt(bytes_read, first);
    b2_dctx_free(ctx);
    b2f_close(f);
    close(fd);
}
END_TEST

START_TEST(special_chunks)
{
    int fd = open_data("special-zstd-t8-c262144.b2frame");
    b2_frame *f;
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    int kinds[8] = {0};
    for (int64_t n = 0; n < 10; n++) {
        int k = b2f_chunk_special(f, n);
        ck_assert(k >= 0 && k < 8);
        kinds[k]++;
    }
    ck_assert_msg(kinds[B2_SPECIAL_ZERO] > 0, "no zero chunk found");
    ck_assert_msg(kinds[B2_SPECIAL_NAN] > 0, "no NaN chunk found");
    ck_assert_msg(kinds[B2_SPECIAL_VALUE] > 0, "no repeated-value chunk found");
    /* odd pieces of every chunk equal the same bytes of the whole chunk */
    b2_dctx *ctx = b2_dctx_new();
    static uint8_t whole[262144], piece[70000];
    for (int64_t n = 0; n < 10; n++) {
        ck_assert_int_eq(b2f_read_chunk(f, ctx, n, whole, sizeof whole), 262144);
        uint64_t at = (uint64_t)n * 262144 + 1003;
        ck_assert_int_eq(b2f_pread(f, ctx, piece, 65537, at), 65537);
        ck_assert_msg(memcmp(piece, whole + 1003, 65537) == 0, "chunk %lld piece differs",
                      (long long)n);
    }
    b2_dctx_free(ctx);
    /* a special chunk's raw form is a 32-byte chunk that decodes to the same bytes */
    for (int64_t n = 0; n < 10; n++) {
        if (b2f_chunk_special(f, n) != B2_SPECIAL_ZERO)
            continue;
        uint8_t *raw;
        int32_t cb;
        ck_assert_int_eq(b2f_read_raw_chunk(f, n, &raw, &cb), 0);
        ck_assert_int_eq(cb, 32);
        free(raw);
        break;
    }
    b2f_close(f);
    close(fd);
}
END_TEST

START_TEST(metalayers)
{
    int fd = open_data("meta-lz4-t4.b2frame");
    b2_frame *f;
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    ck_assert_int_eq(b2f_meta_count(f), 2);
    ck_assert_str_eq(b2f_meta_name(f, 0), "units");
    ck_assert_str_eq(b2f_meta_name(f, 1), "dims");
    const uint8_t *v;
    size_t len;
    ck_assert_int_eq(b2f_meta_get(f, "units", &v, &len), 0);
    ck_assert_int_eq(len, 6);
    ck_assert(memcmp(v, "\xa5hello", 6) == 0);
    ck_assert_int_eq(b2f_meta_get(f, "dims", &v, &len), 0);
    ck_assert_int_eq(len, 4);
    ck_assert(memcmp(v, "\x93\x01\x02\x03", 4) == 0);
    ck_assert_int_eq(b2f_meta_get(f, "nope", &v, &len), B2F_ENOTFOUND);

    ck_assert_int_eq(b2f_vlmeta_count(f), 2);
    ck_assert_str_eq(b2f_vlmeta_name(f, 0), "attrs");
    ck_assert_str_eq(b2f_vlmeta_name(f, 1), "history");
    uint8_t *c;
    ck_assert_int_eq(b2f_vlmeta_get(f, "attrs", &c, &len), 0);
    const char *json = "{\"sensor\": \"t-17\", \"rate_hz\": 100}";
    ck_assert_int_eq(len, strlen(json));
    ck_assert(memcmp(c, json, len) == 0);
    free(c);
    ck_assert_int_eq(b2f_vlmeta_get(f, "history", &c, &len), 0);
    ck_assert_int_eq(len, 5000);
    for (size_t i = 0; i < len; i++)
        ck_assert_int_eq(c[i], i % 251);
    free(c);
    b2f_stat st;
    b2f_stat_get(f, &st);
    ck_assert_int_eq(st.nmeta, 2);
    ck_assert_int_eq(st.nvlmeta, 2);
    /* read only: no writes */
    ck_assert_int_eq(b2f_vlmeta_set(f, "x", "y", 1), B2F_ERDONLY);
    b2f_close(f);
    close(fd);
}
END_TEST

START_TEST(bloscpack_read_only)
{
    int fd = open_data("bloscpack/f64-lz4-c262144-off-adler32.blp");
    b2_frame *f;
    char err[256];
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDWR, NULL, err, sizeof err), B2F_ERDONLY);
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err), 0);
    b2f_stat st;
    b2f_stat_get(f, &st);
    ck_assert_int_eq(st.kind, B2F_KIND_BLOSCPACK);
    ck_assert_int_eq(st.writable, 0);
    ck_assert_int_eq(b2f_delete_chunk(f, 0), B2F_ERDONLY);
    b2f_close(f);
    close(fd);
}
END_TEST

/* ---- bad input: each mutation of a good frame is refused with a reason ---- */

static uint8_t *good;
static size_t good_len;

static void load_good(void)
{
    good = tu_read_file(tu_data_path("meta-lz4-t4.b2frame"), &good_len);
    ck_assert(good != NULL);
}

static int memfile(const void *buf, size_t len)
{
    char path[] = "/tmp/b2fs-frame-XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    unlink(path);
    ck_assert(write(fd, buf, len) == (ssize_t)len);
    return fd;
}

/* Opens buf; returns the code, with the reason in err. */
static int try_open(const void *buf, size_t len, char *err, size_t errlen)
{
    int fd = memfile(buf, len);
    b2_frame *f = NULL;
    err[0] = 0;
    int rc = b2f_open(&f, fd, B2F_RDONLY, NULL, err, errlen);
    if (rc == 0) {   /* opened: reading everything must not crash either */
        b2f_stat st;
        b2f_stat_get(f, &st);
        b2_dctx *ctx = b2_dctx_new();
        uint8_t *tmp = malloc(1 << 20);
        for (uint64_t off = 0; off < (uint64_t)st.nbytes; off += 1 << 20)
            if (b2f_pread(f, ctx, tmp, 1 << 20, off) < 0)
                rc = 1;
        free(tmp);
        b2_dctx_free(ctx);
        b2f_close(f);
    }
    close(fd);
    return rc;
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t get_be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

#define EXPECT_BAD(buf, len, code, word)                                                       \
    do {                                                                                       \
        char e_[256];                                                                          \
        int rc_ = try_open(buf, len, e_, sizeof e_);                                           \
        ck_assert_msg(rc_ == (code), "expected %s, got %d (%s)", #code, rc_, e_);              \
        ck_assert_msg(strstr(e_, word) != NULL, "reason '%s' does not mention '%s'", e_, word); \
    } while (0)

START_TEST(bad_truncated)
{
    load_good();
    char err[256];
    ck_assert_int_eq(try_open(good, good_len, err, sizeof err), 0);
    /* every truncation is refused, never a crash */
    for (size_t len = 0; len < good_len; len += len < 200 ? 1 : 997) {
        int rc = try_open(good, len, err, sizeof err);
        ck_assert_msg(rc < 0, "truncated to %zu opened", len);
        ck_assert_msg(err[0] || len < 4, "no reason for truncation to %zu", len);
    }
    EXPECT_BAD(good, 50, B2F_EFORMAT, "too short");
    EXPECT_BAD(good, good_len - 1, B2F_EHEADER, "past the end of the file");
    free(good);
}
END_TEST

START_TEST(bad_header_sizes)
{
    load_good();
    uint8_t *b = malloc(good_len);
    int64_t hl = (int64_t)get_be(good + 11, 4), cb = (int64_t)get_be(good + 39, 8);

    memcpy(b, good, good_len);   /* frame length beyond the file */
    put_be(b + 16, good_len + 1000, 8);
    EXPECT_BAD(b, good_len, B2F_EHEADER, "frame length");

    memcpy(b, good, good_len);   /* header length past the frame */
    put_be(b + 11, good_len + 5, 4);
    EXPECT_BAD(b, good_len, B2F_EHEADER, "frame length");

    memcpy(b, good, good_len);   /* header length inside the metalayers */
    put_be(b + 11, (uint64_t)hl - 3, 4);
    ck_assert(try_open(b, good_len, (char[256]){0}, 256) < 0);

    memcpy(b, good, good_len);   /* cbytes pushing the index into the trailer */
    put_be(b + 39, (uint64_t)cb + 40, 8);
    EXPECT_BAD(b, good_len, B2F_EHEADER, "no room for the index");

    memcpy(b, good, good_len);   /* more bytes than the chunks hold */
    put_be(b + 30, get_be(good + 30, 8) + 262144, 8);
    EXPECT_BAD(b, good_len, B2F_EINDEX, "offsets");

    memcpy(b, good, good_len);   /* fewer */
    put_be(b + 30, get_be(good + 30, 8) - 1, 8);
    EXPECT_BAD(b, good_len, B2F_EINDEX, "holds");

    memcpy(b, good, good_len);   /* absurd: 2^60 bytes */
    put_be(b + 30, (uint64_t)1 << 60, 8);
    EXPECT_BAD(b, good_len, B2F_ETOOBIG, "chunks");

    memcpy(b, good, good_len);   /* absurd: 2^40 chunks of 1 byte */
    put_be(b + 30, (uint64_t)1 << 40, 8);
    put_be(b + 58, 1, 4);
    EXPECT_BAD(b, good_len, B2F_ETOOBIG, "chunks");

    memcpy(b, good, good_len);
    put_be(b + 48, 0, 4);
    EXPECT_BAD(b, good_len, B2F_EHEADER, "typesize");

    memcpy(b, good, good_len);
    b[25] = 0x13 | 0x08;   /* format version 11 */
    EXPECT_BAD(b, good_len, B2F_EHEADER, "version");

    memcpy(b, good, good_len);
    b[26] = 1;             /* sparse frame */
    EXPECT_BAD(b, good_len, B2F_EHEADER, "frame type");

    memcpy(b, good, good_len);
    b[39 - 1] = 0xc0;      /* a marker C-Blosc2 relies on */
    EXPECT_BAD(b, good_len, B2F_EHEADER, "msgpack");

    memcpy(b, good, good_len);
    b[3] = 'X';
    EXPECT_BAD(b, good_len, B2F_EFORMAT, "magic");
    free(b);
    free(good);
}
END_TEST

/* b2f_probe, from the first bytes alone, says what b2f_open says about the format: a
 * container (whole or damaged) or B2F_EFORMAT. */
static int probe_bytes(const void *buf, size_t len)
{
    int fd = memfile(buf, len);
    int r = b2f_probe(fd);
    close(fd);
    return r;
}

START_TEST(probe_agrees_with_open)
{
    load_good();
    char err[256];
    for (size_t len = 0; len <= good_len; len += len < 200 ? 1 : 997) {
        int container = try_open(good, len, err, sizeof err) != B2F_EFORMAT;
        ck_assert_msg(probe_bytes(good, len) == container, "probe and open differ at %zu bytes", len);
    }
    ck_assert_int_eq(probe_bytes(good, good_len), 1);
    uint8_t *b = malloc(good_len);
    memcpy(b, good, good_len);
    b[3] = 'X';   /* no magic */
    ck_assert_int_eq(probe_bytes(b, good_len), 0);
    memcpy(b, good, good_len);
    b[39 - 1] = 0xc0;   /* damaged after the magic: a frame to verify */
    ck_assert_int_eq(try_open(b, good_len, err, sizeof err), B2F_EHEADER);
    ck_assert_int_eq(probe_bytes(b, good_len), 1);
    ck_assert_int_eq(probe_bytes("blpk\2\0\0\1", 8), 1);   /* a Bloscpack file's magic */
    const char text[] = "#include <stdio.h>\nint main(void) { return 0; }\n"
                        "/* a plain file, longer than a frame header's fixed part */\n";
    ck_assert_int_eq(probe_bytes(text, sizeof text - 1), 0);
    ck_assert_int_lt(b2f_probe(-1), 0);   /* cannot be read */
    free(b);
    free(good);
}
END_TEST

/* Writes a memcpyed Blosc2 chunk header (typesize ts, nbytes nb) at c; returns its cbytes. */
static int32_t memcpy_header(uint8_t *c, int ts, int32_t nb)
{
    int32_t cb = 32 + nb;
    memset(c, 0, 32);
    c[0] = 5; c[1] = 1; c[2] = 0x17; c[3] = (uint8_t)ts;   /* Blosc2 header, memcpyed */
    memcpy(c + 4, &nb, 4); memcpy(c + 8, &nb, 4); memcpy(c + 12, &cb, 4);
    return cb;
}

/* Rebuilds meta-lz4-t4 around a hand-made index (a memcpyed chunk of these offsets). */
static size_t with_index(uint8_t *b, const int64_t *offs, int n)
{
    int64_t hl = (int64_t)get_be(good + 11, 4), cb = (int64_t)get_be(good + 39, 8);
    int64_t fl = (int64_t)get_be(good + 16, 8);
    uint32_t tl = (uint32_t)get_be(good + fl - 22, 4);
    size_t pos = (size_t)(hl + cb);
    memcpy(b, good, pos);
    /* a memcpyed Blosc2 chunk: 32-byte header then the offsets */
    int32_t cbs = memcpy_header(b + pos, 8, n * 8);
    memcpy(b + pos + 32, offs, (size_t)n * 8);
    pos += (size_t)cbs;
    memcpy(b + pos, good + fl - tl, tl);
    pos += tl;
    put_be(b + 16, pos, 8);
    return pos;
}

START_TEST(bad_index)
{
    load_good();
    uint8_t *b = malloc(good_len + 4096);
    int64_t hl = (int64_t)get_be(good + 11, 4), cb = (int64_t)get_be(good + 39, 8);
    int fd = open_data("meta-lz4-t4.b2frame");
    b2_frame *f;
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    /* the real offsets, from the chunks' raw sizes in order */
    int64_t offs[4], o = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t *raw;
        int32_t rcb;
        ck_assert_int_eq(b2f_read_raw_chunk(f, i, &raw, &rcb), 0);
        ck_assert(memcmp(raw, good + hl + o, (size_t)rcb) == 0);
        offs[i] = o;
        o += rcb;
        free(raw);
    }
    b2f_close(f);
    close(fd);
    char err[256];
    size_t len = with_index(b, offs, 4);
    ck_assert_msg(try_open(b, len, err, sizeof err) == 0, "rebuilt frame: %s", err);

    int64_t t[4];
    memcpy(t, offs, sizeof t);
    t[2] = cb + 100;   /* past the chunks region */
    len = with_index(b, t, 4);
    EXPECT_BAD(b, len, B2F_EINDEX, "chunk 2: offset");

    memcpy(t, offs, sizeof t);
    t[1] = (int64_t)good_len * 4;   /* outside the file */
    len = with_index(b, t, 4);
    EXPECT_BAD(b, len, B2F_EINDEX, "chunk 1: offset");

    memcpy(t, offs, sizeof t);
    t[3] = -hl;   /* into the header: negative, so an unknown special value */
    len = with_index(b, t, 4);
    EXPECT_BAD(b, len, B2F_EINDEX, "chunk 3");

    memcpy(t, offs, sizeof t);
    t[1] = t[0] + 7;   /* overlapping: no chunk header there */
    len = with_index(b, t, 4);
    ck_assert(try_open(b, len, err, sizeof err) == B2F_EINDEX);

    memcpy(t, offs, sizeof t);
    t[1] = t[0];   /* chunk 0 twice: same bytes, but chunk 0 is full and so is chunk 1 */
    len = with_index(b, t, 4);
    ck_assert_int_eq(try_open(b, len, err, sizeof err), 0);

    memcpy(t, offs, sizeof t);
    t[2] = t[3];   /* the short last chunk where a full one belongs */
    len = with_index(b, t, 4);
    EXPECT_BAD(b, len, B2F_EINDEX, "chunk 2: holds");

    memcpy(t, offs, sizeof t);
    t[0] = (int64_t)(((uint64_t)1 << 63) | ((uint64_t)3 << 56));   /* "value" run: not in frames */
    len = with_index(b, t, 4);
    EXPECT_BAD(b, len, B2F_EINDEX, "special");

    /* an index chunk that does not decode */
    len = with_index(b, offs, 4);
    b[hl + cb + 12] = 200;   /* its cbytes */
    EXPECT_BAD(b, len, B2F_EINDEX, "index chunk");
    len = with_index(b, offs, 4);
    b[hl + cb + 2] = 0x10;   /* not memcpyed: the offsets read as block starts and streams */
    EXPECT_BAD(b, len, B2F_EINDEX, "index chunk");
    free(b);
    free(good);
}
END_TEST

/* Two chunks whose headers are both sound but whose bytes overlap: chunk 1 lies inside
 * the stored bytes of chunk 0, a memcpyed chunk that carries it as its data. */
START_TEST(bad_overlap)
{
    char path[] = "/tmp/b2fs-ov-XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    unlink(path);
    b2f_params p;
    b2f_params_default(&p);
    p.cp.codec = B2_LZ4;
    p.cp.typesize = 1;
    p.chunksize = 128;
    b2_frame *f;
    b2f_checksums_default(0, 1);   /* its trailer is reused under other frames below */
    ck_assert_int_eq(b2f_create(&f, fd, &p, 0, NULL, NULL, NULL, NULL, NULL, 0), 0);
    uint8_t a[128];
    memset(a, 'A', sizeof a);
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 0, a, 128), 0);
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 1, a, 128), 0);
    ck_assert_int_eq(b2f_commit(f, 0, NULL, 0), 0);
    uint8_t *c1;
    int32_t c1len;
    ck_assert_int_eq(b2f_read_raw_chunk(f, 1, &c1, &c1len), 0);
    ck_assert_int_le(c1len, 128);
    b2f_close(f);
    struct stat st;
    fstat(fd, &st);
    uint8_t *made = malloc((size_t)st.st_size);
    ck_assert(pread(fd, made, (size_t)st.st_size, 0) == st.st_size);
    close(fd);
    int64_t hl = (int64_t)get_be(made + 11, 4), fl = (int64_t)get_be(made + 16, 8);
    uint32_t tl = (uint32_t)get_be(made + fl - 22, 4);

    for (int overlap = 1; overlap >= 0; overlap--) {
        uint8_t *b = calloc(1, 1 << 16);
        memcpy(b, made, (size_t)hl);
        uint8_t *c = b + hl;
        int32_t region = memcpy_header(c, 1, 128);
        memcpy(c + 32, c1, (size_t)c1len);
        int64_t offs[2] = {0, 32};
        if (!overlap) {   /* control: chunk 1 after chunk 0 */
            memcpy(c + region, c1, (size_t)c1len);
            offs[1] = region;
            region += c1len;
        }
        size_t pos = (size_t)(hl + region);
        pos += (size_t)memcpy_header(b + pos, 8, 16);
        memcpy(b + pos - 16, offs, 16);
        memcpy(b + pos, made + fl - tl, tl);
        pos += tl;
        put_be(b + 16, pos, 8);
        put_be(b + 39, (uint64_t)region, 8);
        put_be(b + 30, 256, 8);
        if (overlap) {
            EXPECT_BAD(b, pos, B2F_EINDEX, "overlaps");
        } else {
            char err[256];
            ck_assert_msg(try_open(b, pos, err, sizeof err) == 0, "control: %s", err);
        }
        free(b);
    }
    free(c1);
    free(made);
}
END_TEST

START_TEST(bad_trailer_and_meta)
{
    load_good();
    uint8_t *b = malloc(good_len);
    int64_t fl = (int64_t)get_be(good + 16, 8);
    uint32_t tl = (uint32_t)get_be(good + fl - 22, 4);

    memcpy(b, good, good_len);   /* trailer length past the file */
    put_be(b + fl - 22, good_len + 10, 4);
    EXPECT_BAD(b, good_len, B2F_ETRAILER, "trailer length");

    memcpy(b, good, good_len);   /* a trailer length that lands inside the chunks */
    put_be(b + fl - 22, tl + 1000, 4);
    ck_assert(try_open(b, good_len, (char[256]){0}, 256) < 0);

    memcpy(b, good, good_len);   /* vlmetalayer count out of bounds */
    put_be(b + fl - tl + 7, 9000, 2);
    EXPECT_BAD(b, good_len, B2F_EMETA, "vlmetalayers");

    memcpy(b, good, good_len);   /* vlmetalayer value offset out of the trailer */
    put_be(b + fl - tl + 9 + 1 + 5 + 1, tl + 50, 4);
    EXPECT_BAD(b, good_len, B2F_EMETA, "attrs");

    memcpy(b, good, good_len);   /* metalayer count out of bounds */
    put_be(b + 92, 17, 2);
    EXPECT_BAD(b, good_len, B2F_EMETA, "metalayers");

    memcpy(b, good, good_len);   /* metalayer length past the header */
    uint64_t off = get_be(good + 94 + 1 + 5 + 1, 4);
    put_be(b + off + 1, 0x7fff0000, 4);
    EXPECT_BAD(b, good_len, B2F_EMETA, "units");

    memcpy(b, good, good_len);   /* metalayer name that is not a string */
    b[94] = 0xd2;
    EXPECT_BAD(b, good_len, B2F_EMETA, "name");
    free(b);
    free(good);
}
END_TEST

START_TEST(bad_random_bytes)
{
    /* flip bytes all over a small frame: never a crash, always either a frame or a reason */
    load_good();
    size_t len = good_len < 4096 ? good_len : 4096;
    uint8_t *b = malloc(good_len);
    uint64_t s = 12345;
    char err[256];
    for (int i = 0; i < 300; i++) {
        memcpy(b, good, good_len);
        for (int k = 0; k < 3; k++) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            size_t at = (size_t)(s % len);
            if (k == 2)
                at = good_len - 1 - (size_t)(s % 200);
            b[at] ^= (uint8_t)(s >> 32) | 1;
        }
        int rc = try_open(b, good_len, err, sizeof err);
        ck_assert_msg(rc <= 1, "unexpected %d", rc);
        if (rc < 0)
            ck_assert_msg(err[0] != 0, "refused without a reason (%d)", rc);
    }
    free(b);
    free(good);
}
END_TEST

/* B2F_E* and B2E_* codes lie below the -errno space, none shared, each described; -errno
 * reads as strerror says. */
START_TEST(error_codes)
{
    static const int codes[] = {
        B2F_EFORMAT, B2F_EHEADER, B2F_EINDEX, B2F_ETRAILER, B2F_EMETA, B2F_ECHECKSUM,
        B2F_ERDONLY, B2F_ERANGE, B2F_ENOTFOUND, B2F_ETOOBIG, B2E_ALL_CODES,
    };
    check_own_codes(codes, sizeof codes / sizeof codes[0], b2f_strerror);
    ck_assert_str_eq(b2f_strerror(-EPERM), "Operation not permitted");
    ck_assert_str_eq(b2f_strerror(-EIO), strerror(EIO));
    ck_assert_str_eq(b2f_strerror(B2E_NOMEM), b2_strerror(B2E_NOMEM));
    ck_assert_str_eq(b2f_strerror(0), "success");
}
END_TEST

static ssize_t eperm_pread(int fd, void *buf, size_t len, off_t off)
{
    (void)fd, (void)buf, (void)len, (void)off;
    errno = EPERM;
    return -1;
}

/* A failed system call's errno comes back as it was, however small. */
START_TEST(errno_passed_up)
{
    int fd = open_data("meta-lz4-t4.b2frame");
    const b2f_io io = {eperm_pread, NULL, NULL, NULL};
    b2_frame *f = NULL;
    char err[256];
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, &io, err, sizeof err), -EPERM);
    ck_assert_ptr_null(f);
    close(fd);
}
END_TEST

static Suite *frame_suite(void)
{
    Suite *s = suite_create("frame");
    TCase *tc = tcase_create("read");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, fixture_frames);
    tcase_add_test(tc, fixture_vlblocks);
    tcase_add_test(tc, fixture_bytedelta);
    tcase_add_test(tc, fixture_int_trunc);
    tcase_add_test(tc, fixture_bloscpack);
    tcase_add_test(tc, written_by_b2fs);
    tcase_add_test(tc, fixture_stat);
    tcase_add_test(tc, lazy_block_reads);
    tcase_add_test(tc, special_chunks);
    tcase_add_test(tc, metalayers);
    tcase_add_test(tc, bloscpack_read_only);
    tcase_add_test(tc, error_codes);
    tcase_add_test(tc, errno_passed_up);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("bad input");
    tcase_set_timeout(bad, 120);
    tcase_add_test(bad, bad_truncated);
    tcase_add_test(bad, probe_agrees_with_open);
    tcase_add_test(bad, bad_header_sizes);
    tcase_add_test(bad, bad_index);
    tcase_add_test(bad, bad_overlap);
    tcase_add_test(bad, bad_trailer_and_meta);
    tcase_add_test(bad, bad_random_bytes);
    suite_add_tcase(s, bad);
    return s;
}

int main(void)
{
    return tu_run_suite(frame_suite());
}
