/* Check tests of the frame's chunk layout cache: it stays within its bound however much
 * is read, evicted layouts stay valid for whoever still uses them, and readers on several
 * threads (bound forced small, so they evict each other's layouts) get the right bytes. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame/frame.h"
#include "tests/lib/testutil.h"

#define CHUNK 1024
#define BLOCK 256
#define NCHUNKS 1100   /* more than the default bound, 1024 */

static uint8_t *want;   /* the frame's contents */
static size_t want_len;

/* A committed frame of NCHUNKS chunks of 4 blocks, reopened with mode. */
static b2_frame *make_frame(int mode, int *fdp)
{
    char path[] = "/tmp/b2fs-lay-XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    unlink(path);
    b2f_params p;
    b2f_params_default(&p);
    p.cp.typesize = 4;
    p.cp.blocksize = BLOCK;
    p.chunksize = CHUNK;
    b2_frame *f;
    char err[256] = "";
    int rc = b2f_create(&f, fd, &p, 0, NULL, NULL, NULL, NULL, err, sizeof err);
    ck_assert_msg(rc == 0, "create: %s (%s)", b2f_strerror(rc), err);
    want_len = (size_t)NCHUNKS * CHUNK;
    want = malloc(want_len);
    tu_fill_float_series(want, want_len, 7);
    for (int64_t n = 0; n < NCHUNKS; n++)
        ck_assert_int_eq(b2f_update_chunk(f, NULL, n, want + n * CHUNK, CHUNK), 0);
    ck_assert_int_eq(b2f_commit(f, 0, err, sizeof err), 0);
    b2f_close(f);
    rc = b2f_open(&f, fd, mode, NULL, err, sizeof err);
    ck_assert_msg(rc == 0, "open: %s (%s)", b2f_strerror(rc), err);
    *fdp = fd;
    return f;
}

static void done_frame(b2_frame *f, int fd)
{
    b2f_close(f);
    close(fd);
    free(want);
}

/* Reads every chunk through a part of it (so its layout is needed) and checks the bytes. */
static void read_every_chunk(b2_frame *f, b2_dctx *ctx)
{
    uint8_t buf[CHUNK];
    for (int64_t n = 0; n < NCHUNKS; n++) {
        uint64_t off = (uint64_t)n * CHUNK + 100;
        ck_assert_int_eq(b2f_pread(f, ctx, buf, 500, off), 500);
        ck_assert_msg(memcmp(buf, want + off, 500) == 0, "chunk %lld differs", (long long)n);
    }
}

START_TEST(default_bound)
{
    int fd;
    b2_frame *f = make_frame(B2F_RDONLY, &fd);
    b2_dctx *ctx = b2_dctx_new();
    ck_assert_int_eq(b2f_layouts_cached(f), 0);
    read_every_chunk(f, ctx);
    ck_assert_int_eq(b2f_layouts_cached(f), 1024);
    read_every_chunk(f, ctx);   /* again, evicting as it goes */
    ck_assert_int_eq(b2f_layouts_cached(f), 1024);
    b2f_forget_layouts(f);
    ck_assert_int_eq(b2f_layouts_cached(f), 0);
    b2_dctx_free(ctx);
    done_frame(f, fd);
}
END_TEST

START_TEST(small_bound)
{
    int fd;
    b2_frame *f = make_frame(B2F_RDONLY, &fd);
    b2_dctx *ctx = b2_dctx_new();
    ck_assert_int_eq(b2f_set_layout_bound(f, 0), B2F_ERANGE);
    ck_assert_int_eq(b2f_set_layout_bound(f, 16), 0);
    read_every_chunk(f, ctx);
    ck_assert_int_eq(b2f_layouts_cached(f), 16);
    /* block reads and layouts of each chunk, past the bound */
    uint8_t blk[BLOCK];
    for (int64_t n = 0; n < NCHUNKS; n++) {
        const b2_chunk_layout *lay;
        ck_assert_int_eq(b2f_chunk_layout(f, n, &lay), 0);
        ck_assert_int_eq(lay->info.nblocks, CHUNK / BLOCK);
        ck_assert_int_eq(b2f_read_blocks(f, ctx, n, 2, 1, blk, sizeof blk), BLOCK);
        ck_assert(memcmp(blk, want + n * CHUNK + 2 * BLOCK, BLOCK) == 0);
    }
    ck_assert_int_eq(b2f_layouts_cached(f), 16);
    b2_dctx_free(ctx);
    done_frame(f, fd);
}
END_TEST

/* A layout b2f_chunk_layout gave stays valid after it is evicted (ASan would see a read
 * of freed memory). */
START_TEST(evicted_layout_stays_valid)
{
    int fd;
    b2_frame *f = make_frame(B2F_RDONLY, &fd);
    b2_dctx *ctx = b2_dctx_new();
    ck_assert_int_eq(b2f_set_layout_bound(f, 1), 0);
    const b2_chunk_layout *lay;
    ck_assert_int_eq(b2f_chunk_layout(f, 5, &lay), 0);
    uint8_t buf[CHUNK];
    for (int64_t n = 6; n < 10; n++)
        ck_assert_int_eq(b2f_read_blocks(f, ctx, n, 0, 1, buf, sizeof buf), BLOCK);
    ck_assert_int_eq(b2f_layouts_cached(f), 1);
    ck_assert_int_eq(lay->info.nbytes, CHUNK);
    ck_assert_int_eq(lay->bends[lay->info.nblocks - 1], lay->info.cbytes);
    b2_dctx_free(ctx);
    done_frame(f, fd);
}
END_TEST

/* Chunks inserted and deleted renumber the later ones: their cached layouts must go. */
START_TEST(renumbered_chunks)
{
    int fd;
    b2_frame *f = make_frame(B2F_RDWR, &fd);
    b2_dctx *ctx = b2_dctx_new();
    ck_assert_int_eq(b2f_set_layout_bound(f, 8), 0);
    read_every_chunk(f, ctx);
    uint8_t *other = malloc(CHUNK);
    tu_fill_random(other, CHUNK, 3);
    ck_assert_int_eq(b2f_insert_chunk(f, NULL, NCHUNKS - 6, other, CHUNK), 0);
    ck_assert_int_eq(b2f_delete_chunk(f, 0), 0);
    uint8_t *got = malloc(want_len);
    size_t k = (size_t)(NCHUNKS - 7) * CHUNK;
    for (size_t off = 0; off < want_len; off += 700) {   /* parts of chunks */
        size_t len = want_len - off < 700 ? want_len - off : 700;
        ck_assert_int_eq(b2f_pread(f, ctx, got + off, len, off), (ssize_t)len);
    }
    ck_assert(memcmp(got, want + CHUNK, k) == 0);
    ck_assert(memcmp(got + k, other, CHUNK) == 0);
    ck_assert(memcmp(got + k + CHUNK, want + k + CHUNK, want_len - k - CHUNK) == 0);
    free(got);
    free(other);
    b2_dctx_free(ctx);
    done_frame(f, fd);
}
END_TEST

typedef struct reader {
    b2_frame *f;
    uint64_t seed;
    int bad;
} reader;

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Random reads across chunk and block borders, and block reads by layout. */
static void *reader_main(void *arg)
{
    reader *r = arg;
    b2_dctx *ctx = b2_dctx_new();
    uint8_t buf[3 * CHUNK];
    uint64_t s = r->seed;
    for (int i = 0; i < 3000 && ctx; i++) {
        uint64_t off = next(&s) % want_len;
        size_t len = 1 + next(&s) % sizeof buf;
        if (len > want_len - off)
            len = want_len - off;
        if (b2f_pread(r->f, ctx, buf, len, off) != (ssize_t)len || memcmp(buf, want + off, len))
            r->bad++;
        int64_t n = (int64_t)(next(&s) % NCHUNKS);
        const b2_chunk_layout *lay;
        if (b2f_chunk_layout(r->f, n, &lay) < 0 || lay->info.nbytes != CHUNK)
            r->bad++;
        int32_t b = (int32_t)(next(&s) % (CHUNK / BLOCK));
        if (b2f_read_blocks(r->f, ctx, n, b, 1, buf, sizeof buf) != BLOCK ||
            memcmp(buf, want + n * CHUNK + b * BLOCK, BLOCK))
            r->bad++;
    }
    b2_dctx_free(ctx);
    return NULL;
}

START_TEST(concurrent_readers)
{
    int fd;
    b2_frame *f = make_frame(B2F_RDONLY, &fd);
    ck_assert_int_eq(b2f_set_layout_bound(f, 4), 0);
    enum { NT = 4 };
    pthread_t t[NT];
    reader r[NT];
    for (int i = 0; i < NT; i++) {
        r[i] = (reader){f, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1), 0};
        ck_assert_int_eq(pthread_create(&t[i], NULL, reader_main, &r[i]), 0);
    }
    for (int i = 0; i < NT; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(r[i].bad == 0, "reader %d: %d wrong reads", i, r[i].bad);
    }
    ck_assert_int_le(b2f_layouts_cached(f), 4);
    done_frame(f, fd);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("frame_layouts");
    TCase *tc = tcase_create("layouts");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, default_bound);
    tcase_add_test(tc, small_bound);
    tcase_add_test(tc, evicted_layout_stays_valid);
    tcase_add_test(tc, renumbered_chunks);
    tcase_add_test(tc, concurrent_readers);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
