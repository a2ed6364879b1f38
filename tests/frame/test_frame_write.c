/* Check tests of frame/ writing: create, append/update/insert/delete, resize, metalayers,
 * vlmetalayers, commit, compaction; every state checked against an in-memory model after
 * reopening. Crash consistency: a commit is stopped at each of its writes and syncs
 * (through b2f_io) and the file must open with exactly the old or the new contents.
 *
 * With B2F_WRITE_DIR set, the frames made by `written_frames` are kept there (for the
 * interop checks against C-Blosc2 by hand). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frame/frame.h"
#include "tests/lib/testutil.h"

/* ---- a frame next to a model of its contents ---- */

typedef struct model {
    uint8_t *data;
    size_t len;
} model;

static void model_set(model *m, size_t off, const void *src, size_t n)
{
    if (off + n > m->len) {
        m->data = realloc(m->data, off + n);
        memset(m->data + m->len, 0, off + n - m->len);
        m->len = off + n;
    }
    memcpy(m->data + off, src, n);
}

static void copy_fd(int from, int to);

static int tmpfd(void)
{
    char path[] = "/tmp/b2fs-fw-XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    unlink(path);
    return fd;
}

/* The open frame reads exactly m. */
static void check_frame(b2_frame *f, const model *m, const char *what)
{
    b2f_stat st;
    b2f_stat_get(f, &st);
    ck_assert_msg(st.nbytes == (int64_t)m->len, "%s: nbytes %lld, want %zu", what,
                  (long long)st.nbytes, m->len);
    uint8_t *buf = malloc(m->len + 1);
    b2_dctx *ctx = b2_dctx_new();
    ssize_t got = b2f_pread(f, ctx, buf, m->len, 0);
    ck_assert_msg(got == (ssize_t)m->len, "%s: pread %zd", what, got);
    ck_assert_msg(m->len == 0 || memcmp(buf, m->data, m->len) == 0, "%s: contents differ", what);
    /* chunk by chunk too: stored, special and staged chunks each take their own path */
    for (int64_t n = 0; n < st.nchunks; n++) {
        uint64_t off;
        int32_t nb;
        ck_assert_int_eq(b2f_chunk_span(f, n, &off, &nb), 0);
        memset(buf, 0xa5, (size_t)nb);
        int rc = b2f_read_chunk(f, ctx, n, buf, (size_t)nb);
        ck_assert_msg(rc == nb, "%s: chunk %lld: %d", what, (long long)n, rc);
        ck_assert_msg(memcmp(buf, m->data + off, (size_t)nb) == 0, "%s: chunk %lld differs", what,
                      (long long)n);
        if (nb > 0)
            ck_assert_int_eq(b2f_read_chunk(f, ctx, n, buf, (size_t)nb - 1), B2E_DST_SMALL);
    }
    free(buf);
    b2_dctx_free(ctx);
}

/* Reopens fd and checks the frame holds exactly m. */
static void check_file(int fd, const model *m, const char *what)
{
    b2_frame *f;
    char err[256] = "";
    int rc = b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err);
    ck_assert_msg(rc == 0, "%s: reopen: %s (%s)", what, b2f_strerror(rc), err);
    check_frame(f, m, what);
    b2f_close(f);
}

static b2_frame *new_frame(int fd, int codec, const char *filters, int typesize, int32_t chunksize)
{
    b2f_params p;
    b2f_params_default(&p);
    p.cp.codec = codec;
    p.cp.clevel = 5;
    p.cp.typesize = typesize;
    ck_assert_int_eq(b2_filters_parse(filters, ',', p.cp.filters, p.cp.filters_meta), 0);
    p.chunksize = chunksize;
    b2_frame *f;
    char err[256] = "";
    int rc = b2f_create(&f, fd, &p, 0, NULL, NULL, NULL, NULL, err, sizeof err);
    ck_assert_msg(rc == 0, "create: %s (%s)", b2f_strerror(rc), err);
    return f;
}

/* Appends len bytes of src as chunks (the model follows). */
static void append(b2_frame *f, model *m, const uint8_t *src, size_t len)
{
    b2f_stat st;
    b2f_stat_get(f, &st);
    size_t cs = (size_t)st.chunksize, done = 0;
    while (done < len) {
        size_t n = len - done < cs ? len - done : cs;
        int rc = b2f_update_chunk(f, NULL, st.nchunks++, src + done, n);
        ck_assert_msg(rc == 0, "append: %s", b2f_strerror(rc));
        model_set(m, m->len, src + done, n);
        done += n;
    }
}

static void commit(b2_frame *f)
{
    char err[256] = "";
    int rc = b2f_commit(f, 1, err, sizeof err);
    ck_assert_msg(rc == 0, "commit: %s (%s)", b2f_strerror(rc), err);
}

START_TEST(codecs_and_filters)
{
    static const int codecs[] = {B2_BLOSCLZ, B2_LZ4, B2_LZ4HC, B2_ZLIB, B2_ZSTD};
    static const char *filters[] = {"none", "shuffle", "bitshuffle", "delta,shuffle",
                                    "trunc:20,shuffle"};
    size_t sizes[] = {1, 7, 12345, 100003};
    uint8_t *src = malloc(100003);
    tu_fill_float_series(src, 100003, 7);
    for (int c = 0; c < 5; c++) {
        for (int fi = 0; fi < 5; fi++) {
            size_t len = sizes[(c + fi) % 4];
            int typesize = fi == 4 ? 4 : 8;
            int fd = tmpfd();
            b2_frame *f = new_frame(fd, codecs[c], filters[fi], typesize, 32768);
            model m = {0};
            append(f, &m, src, len);
            commit(f);
            b2f_close(f);
            if (fi == 4) {   /* lossy: compare against what was decoded */
                b2_frame *g;
                ck_assert_int_eq(b2f_open(&g, fd, B2F_RDONLY, NULL, NULL, 0), 0);
                b2_dctx *ctx = b2_dctx_new();
                ck_assert_int_eq(b2f_pread(g, ctx, m.data, m.len, 0), (ssize_t)m.len);
                b2_dctx_free(ctx);
                b2f_close(g);
            }
            char what[64];
            snprintf(what, sizeof what, "codec %d filters %s len %zu", codecs[c], filters[fi], len);
            check_file(fd, &m, what);
            close(fd);
            free(m.data);
        }
    }
    free(src);
}
END_TEST

START_TEST(edits)
{
    int fd = tmpfd();
    b2_frame *f = new_frame(fd, B2_ZSTD, "shuffle", 8, 16384);
    model m = {0};
    uint8_t *src = malloc(200000);
    tu_fill_float_series(src, 200000, 3);
    append(f, &m, src, 16384 * 6);
    commit(f);
    check_file(fd, &m, "appended");
    /* only the trailer of the empty frame, which C-Blosc2 wants right after the header */
    ck_assert_int_lt(b2f_dead_bytes(f), 64);

    uint8_t chunk[16384];
    tu_fill_random(chunk, sizeof chunk, 9);
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 2, chunk, sizeof chunk), 0);
    model_set(&m, 2 * 16384, chunk, sizeof chunk);
    /* staged data is visible before the commit */
    uint8_t back[100];
    b2_dctx *ctx = b2_dctx_new();
    ck_assert_int_eq(b2f_pread(f, ctx, back, sizeof back, 2 * 16384 + 50), 100);
    ck_assert(memcmp(back, chunk + 50, 100) == 0);
    commit(f);
    check_file(fd, &m, "updated");
    ck_assert_int_gt(b2f_dead_bytes(f), 0);

    /* insert before chunk 1, delete chunk 4 */
    tu_fill_text(chunk, sizeof chunk, 4);
    ck_assert_int_eq(b2f_insert_chunk(f, NULL, 1, chunk, sizeof chunk), 0);
    uint8_t *nm = malloc(m.len + 16384);
    memcpy(nm, m.data, 16384);
    memcpy(nm + 16384, chunk, 16384);
    memcpy(nm + 32768, m.data + 16384, m.len - 16384);
    free(m.data);
    m.data = nm;
    m.len += 16384;
    ck_assert_int_eq(b2f_delete_chunk(f, 4), 0);
    memmove(m.data + 4 * 16384, m.data + 5 * 16384, m.len - 5 * 16384);
    m.len -= 16384;
    commit(f);
    check_file(fd, &m, "inserted and deleted");

    /* sizes: a full chunk must stay full, a short one only at the end */
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 1, chunk, 100), B2F_ERANGE);
    ck_assert_int_eq(b2f_insert_chunk(f, NULL, 1, chunk, 100), B2F_ERANGE);
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 99, chunk, 100), B2F_ERANGE);

    /* resize: shrink to an odd size, grow with zeros, shrink again */
    ck_assert_int_eq(b2f_resize(f, NULL, 3 * 16384 + 12345), 0);
    m.len = 3 * 16384 + 12345;
    commit(f);
    check_file(fd, &m, "shrunk");
    ck_assert_int_eq(b2f_resize(f, NULL, 20 * 16384 + 7), 0);
    size_t old = m.len;
    uint8_t *zeros = calloc(1, 20 * 16384 + 7);
    model_set(&m, old, zeros, 20 * 16384 + 7 - old);
    commit(f);
    check_file(fd, &m, "grown");
    b2f_stat st;
    b2f_stat_get(f, &st);
    ck_assert_int_eq(st.nchunks, 21);
    ck_assert_int_eq(b2f_chunk_special(f, 10), B2_SPECIAL_ZERO);
    /* the grown tail costs no chunk data */
    ck_assert_int_lt(st.cbytes, 4 * 16384 + 1000);
    /* a zero chunk written as data is kept as a special too */
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 0, zeros, 16384), 0);
    model_set(&m, 0, zeros, 16384);
    ck_assert_int_eq(b2f_chunk_special(f, 0), B2_SPECIAL_ZERO);
    /* appending after a short last chunk is refused */
    ck_assert_int_eq(b2f_update_chunk(f, NULL, st.nchunks, chunk, 100), B2F_ERANGE);
    /* a zero chunk of partial items is stored, never indexed: C-Blosc2 could not remake it */
    uint8_t *z7 = malloc(64);
    int z7len = b2_chunk_make_special(B2_SPECIAL_ZERO, 1, 7, NULL, z7, 64);
    ck_assert_int_eq(z7len, 32);
    b2f_stat_get(f, &st);
    int64_t before;   /* cbytes without the 7-byte chunk it replaces */
    {
        uint8_t *raw;
        int32_t rcb;
        ck_assert_int_eq(b2f_read_raw_chunk(f, st.nchunks - 1, &raw, &rcb), 0);
        before = st.cbytes - rcb;
        free(raw);
    }
    ck_assert_int_eq(b2f_update_encoded(f, st.nchunks - 1, z7, z7len), 0);
    b2f_stat_get(f, &st);
    ck_assert_int_eq(st.cbytes, before + 32);
    ck_assert_int_eq(b2f_chunk_special(f, st.nchunks - 1), B2_SPECIAL_ZERO);
    commit(f);
    check_file(fd, &m, "zero chunk");

    /* compaction: same contents, no dead bytes, smaller file */
    int64_t dead = b2f_dead_bytes(f);
    ck_assert_int_gt(dead, 0);
    int out = tmpfd();
    char err[256] = "";
    ck_assert_msg(b2f_compact_into(f, out, err, sizeof err) == 0, "compact: %s", err);
    check_file(out, &m, "compacted");
    b2_frame *g;
    ck_assert_int_eq(b2f_open(&g, out, B2F_RDWR, NULL, NULL, 0), 0);
    ck_assert_int_eq(b2f_dead_bytes(g), 0);
    struct stat s1, s2;
    fstat(fd, &s1);
    fstat(out, &s2);
    ck_assert_int_le(s2.st_size, s1.st_size - dead);
    /* the compacted copy can be written to in turn */
    ck_assert_int_eq(b2f_update_chunk(g, NULL, 1, chunk, 16384), 0);
    commit(g);
    model_set(&m, 16384, chunk, 16384);
    check_file(out, &m, "compacted then updated");
    b2f_close(g);
    close(out);

    /* down to nothing, then up again */
    ck_assert_int_eq(b2f_resize(f, NULL, 0), 0);
    commit(f);
    m.len = 0;
    check_file(fd, &m, "emptied");
    append(f, &m, src, 5000);
    commit(f);
    check_file(fd, &m, "refilled");

    b2_dctx_free(ctx);
    b2f_close(f);
    close(fd);
    free(zeros);
    free(src);
    free(m.data);
}
END_TEST

START_TEST(meta_and_vlmeta)
{
    int fd = tmpfd();
    b2f_params p;
    b2f_params_default(&p);
    p.chunksize = 4096;
    const char *names[] = {"units", "dims"};
    const void *vals[] = {"\xa5hello", "\x93\x01\x02\x03"};
    size_t lens[] = {6, 4};
    b2_frame *f;
    char err[256] = "";
    ck_assert_int_eq(b2f_create(&f, fd, &p, 2, names, vals, lens, NULL, err, sizeof err), 0);
    ck_assert_int_eq(b2f_meta_count(f), 2);
    ck_assert_int_eq(b2f_vlmeta_set(f, "attrs", "{\"a\": 1}", 8), 0);
    uint8_t big[5000];
    for (int i = 0; i < 5000; i++)
        big[i] = (uint8_t)(i % 251);
    ck_assert_int_eq(b2f_vlmeta_set(f, "history", big, sizeof big), 0);
    ck_assert_int_eq(b2f_commit_is_atomic(f), 0);   /* empty: trailer rewritten in place */
    commit(f);   /* an empty frame with vlmetalayers */
    ck_assert_int_eq(b2f_commit_is_atomic(f), 1);
    model m = {0};
    uint8_t data[10000];
    tu_fill_text(data, sizeof data, 1);
    append(f, &m, data, sizeof data);
    ck_assert_int_eq(b2f_vlmeta_set(f, "attrs", "{\"a\": 1}", 8), 0);
    ck_assert_int_eq(b2f_commit_is_atomic(f), 1);   /* data: appended, not in place */
    ck_assert_int_eq(b2f_meta_update(f, "units", "\xa5HELLO", 6), 0);
    ck_assert_int_eq(b2f_meta_update(f, "units", "\xa4HELL", 5), B2F_ERANGE);
    ck_assert_int_eq(b2f_meta_update(f, "nope", "x", 1), B2F_ENOTFOUND);
    commit(f);
    b2f_close(f);

    check_file(fd, &m, "with metalayers");
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDWR, NULL, NULL, 0), 0);
    const uint8_t *v;
    size_t len;
    ck_assert_int_eq(b2f_meta_get(f, "units", &v, &len), 0);
    ck_assert(len == 6 && memcmp(v, "\xa5HELLO", 6) == 0);
    ck_assert_int_eq(b2f_meta_get(f, "dims", &v, &len), 0);
    ck_assert(len == 4 && memcmp(v, "\x93\x01\x02\x03", 4) == 0);
    ck_assert_int_eq(b2f_vlmeta_count(f), 2);
    uint8_t *c;
    ck_assert_int_eq(b2f_vlmeta_get(f, "history", &c, &len), 0);
    ck_assert(len == 5000 && memcmp(c, big, len) == 0);
    free(c);
    ck_assert_int_eq(b2f_vlmeta_set(f, "attrs", "{}", 2), 0);
    ck_assert_int_eq(b2f_vlmeta_delete(f, "history"), 0);
    ck_assert_int_eq(b2f_vlmeta_delete(f, "history"), B2F_ENOTFOUND);
    ck_assert_int_eq(b2f_vlmeta_set(f, "", "x", 1), B2F_EMETA);
    commit(f);
    b2f_close(f);
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    ck_assert_int_eq(b2f_vlmeta_count(f), 1);
    ck_assert_int_eq(b2f_vlmeta_get(f, "attrs", &c, &len), 0);
    ck_assert(len == 2 && memcmp(c, "{}", 2) == 0);
    free(c);
    b2f_close(f);
    close(fd);
    free(m.data);
}
END_TEST

START_TEST(params)
{
    int fd = tmpfd();
    b2_frame *f = new_frame(fd, B2_LZ4, "shuffle", 4, 8192);
    b2f_params p;
    b2f_params_default(&p);
    p.cp.typesize = 2;
    p.chunksize = 4096;
    ck_assert_int_eq(b2f_set_params(f, &p), 0);   /* empty: anything goes */
    model m = {0};
    uint8_t data[10000];
    tu_fill_float_series(data, sizeof data, 5);
    append(f, &m, data, sizeof data);
    b2f_stat st;
    b2f_stat_get(f, &st);
    ck_assert_int_eq(st.nchunks, 3);
    ck_assert_int_eq(b2f_set_params(f, &p), 0);
    p.cp.typesize = 8;
    ck_assert_int_eq(b2f_set_params(f, &p), B2F_ERANGE);
    p.cp.typesize = 2;
    p.cp.codec = B2_ZLIB;
    ck_assert_int_eq(b2f_set_params(f, &p), 0);
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 0, data + 4096, 4096), 0);
    model_set(&m, 0, data + 4096, 4096);
    commit(f);
    b2f_close(f);
    check_file(fd, &m, "params changed");
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    b2f_stat_get(f, &st);
    ck_assert_int_eq(st.codec, B2_ZLIB);
    ck_assert_int_eq(st.typesize, 2);
    ck_assert_int_eq(st.chunksize, 4096);
    const b2_chunk_layout *lay;
    ck_assert_int_eq(b2f_chunk_layout(f, 0, &lay), 0);
    ck_assert_int_eq(lay->info.codec, B2_ZLIB);
    ck_assert_int_eq(b2f_chunk_layout(f, 1, &lay), 0);
    ck_assert_int_eq(lay->info.codec, B2_ZSTD);   /* written before the change */
    b2f_close(f);
    close(fd);
    free(m.data);
}
END_TEST

/* A frame of variable-size chunks (header chunksize 0), as C-Blosc2 makes when chunks of
 * different sizes are appended: made here by patching a fixed one, then edited. */
START_TEST(variable_chunks)
{
    int fd = tmpfd();
    b2f_checksums_default(0, 1);   /* patched below as C-Blosc2 would write it: no sums */
    b2_frame *f = new_frame(fd, B2_LZ4, "shuffle", 1, 4096);
    b2f_checksums_default(1, 1);
    model m = {0};
    uint8_t src[20000];
    tu_fill_text(src, sizeof src, 12);
    append(f, &m, src, 3 * 4096 + 1000);
    commit(f);
    b2f_close(f);
    uint8_t h[96];
    ck_assert(pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
    h[25] |= 0x40;                          /* variable chunks flag */
    memset(h + 58, 0, 4);                   /* chunksize 0 */
    ck_assert(pwrite(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
    check_file(fd, &m, "variable");
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDWR, NULL, NULL, 0), 0);
    b2f_stat st;
    b2f_stat_get(f, &st);
    ck_assert_int_eq(st.chunksize, 0);
    uint64_t off;
    int32_t nb;
    ck_assert_int_eq(b2f_chunk_span(f, 3, &off, &nb), 0);
    ck_assert(off == 3 * 4096 && nb == 1000);
    ck_assert_int_eq(b2f_chunk_at(f, 3 * 4096 + 999), 3);
    /* any sizes anywhere: insert 777 bytes before chunk 1, make chunk 2 5000 bytes */
    ck_assert_int_eq(b2f_insert_chunk(f, NULL, 1, src + 100, 777), 0);
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 2, src + 200, 5000), 0);
    uint8_t zeros[3000] = {0};
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 4, zeros, sizeof zeros), 0);
    ck_assert_int_eq(b2f_chunk_special(f, 4), B2_SPECIAL_ZERO);
    model n = {0};
    model_set(&n, 0, m.data, 4096);
    model_set(&n, n.len, src + 100, 777);
    model_set(&n, n.len, src + 200, 5000);
    model_set(&n, n.len, m.data + 2 * 4096, 4096);
    model_set(&n, n.len, zeros, sizeof zeros);
    commit(f);
    b2f_close(f);
    check_file(fd, &n, "variable edited");
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    ck_assert_int_eq(b2f_chunk_at(f, 4096 + 776), 1);
    ck_assert_int_eq(b2f_chunk_at(f, 4096 + 777), 2);
    ck_assert_int_eq(b2f_chunk_special(f, 4), B2_SPECIAL_ZERO);   /* stored, not in the index */
    b2f_close(f);
    const char *dir = getenv("B2F_WRITE_DIR");
    if (dir && *dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/variable.b2frame", dir);
        int out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        copy_fd(fd, out);
        close(out);
    }
    close(fd);
    free(m.data);
    free(n.data);
}
END_TEST

/* ---- crash consistency ---- */

static int fail_at = -1, nops, torn;

static int stop_here(void)
{
    if (fail_at >= 0 && nops++ >= fail_at) {
        errno = EIO;
        return 1;
    }
    return 0;
}
/* In torn mode the stopped write lands half done, as a crash mid-write leaves it (not
 * for the header at offset 0: its changing fields sit in one disk sector). */
static ssize_t crash_pwrite(int fd, const void *b, size_t n, off_t o)
{
    if (!stop_here())
        return pwrite(fd, b, n, o);
    if (torn && o > 0 && nops == fail_at + 1 && pwrite(fd, b, n / 2, o) < 0)
        return -1;
    return -1;
}
static int crash_sync(int fd)
{
    return stop_here() ? -1 : fdatasync(fd);
}
static int crash_truncate(int fd, off_t len)
{
    return stop_here() ? -1 : ftruncate(fd, len);
}
static const b2f_io crash_io = {NULL, crash_pwrite, crash_sync, crash_truncate};

typedef void (*edit_fn)(b2_frame *f, model *m);

static void copy_fd(int from, int to)
{
    struct stat st;
    fstat(from, &st);
    uint8_t *b = malloc((size_t)st.st_size + 1);
    ck_assert(pread(from, b, (size_t)st.st_size, 0) == st.st_size);
    ck_assert(ftruncate(to, 0) == 0);
    ck_assert(pwrite(to, b, (size_t)st.st_size, 0) == st.st_size);
    free(b);
}

static int same_contents(int fd, const model *m, const char *vl)
{
    b2_frame *f;
    if (b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0) != 0)
        return -1;
    b2f_stat st;
    b2f_stat_get(f, &st);
    int same = st.nbytes == (int64_t)m->len;
    if (same && m->len) {
        uint8_t *buf = malloc(m->len);
        b2_dctx *ctx = b2_dctx_new();
        same = b2f_pread(f, ctx, buf, m->len, 0) == (ssize_t)m->len &&
               memcmp(buf, m->data, m->len) == 0;
        free(buf);
        b2_dctx_free(ctx);
    }
    uint8_t *c = NULL;
    size_t len = 0;
    int has = b2f_vlmeta_get(f, "note", &c, &len) == 0;
    if (vl)
        same = same && has && len == strlen(vl) && memcmp(c, vl, len) == 0;
    else
        same = same && !has;
    free(c);
    b2f_close(f);
    return same;
}

/* With B2F_CRASH_DIR set, every stopped commit's file is kept there, listed in
 * crash.tsv with the sha256 of the old and the new contents (for checks with C-Blosc2). */
static void keep_crash_state(int fd, int k, const model *old, const model *now)
{
    static int scenario;
    const char *dir = getenv("B2F_CRASH_DIR");
    if (!dir || !*dir)
        return;
    if (k == 0)
        scenario++;
    char path[1024], hold[65], hnew[65];
    snprintf(path, sizeof path, "%s/s%d-k%02d.b2frame", dir, scenario, k);
    int out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    ck_assert(out >= 0);
    copy_fd(fd, out);
    close(out);
    tu_sha256_hex(old->data, old->len, hold);
    tu_sha256_hex(now->data, now->len, hnew);
    snprintf(path, sizeof path, "%s/crash.tsv", dir);
    FILE *l = fopen(path, "a");
    ck_assert(l != NULL);
    fprintf(l, "s%d-k%02d.b2frame\t%s\t%s\n", scenario, k, hold, hnew);
    fclose(l);
}

/* Runs edit + commit on a copy of base with the k-th write/sync failing, for every k
 * until the commit goes through; the file must then hold old or new, nothing else. */
static void crash_each_write(int base, const model *old, const char *old_vl, edit_fn edit,
                             const char *new_vl)
{
    int ops = -1;
    for (int k = 0; k < 200; k++) {
        int fd = tmpfd();
        copy_fd(base, fd);
        b2_frame *f;
        ck_assert_int_eq(b2f_open(&f, fd, B2F_RDWR, &crash_io, NULL, 0), 0);
        model now = {malloc(old->len + 1), old->len};
        if (old->len)
            memcpy(now.data, old->data, old->len);
        edit(f, &now);
        if (new_vl)
            ck_assert_int_eq(b2f_vlmeta_set(f, "note", new_vl, strlen(new_vl)), 0);
        else
            b2f_vlmeta_delete(f, "note");
        fail_at = k;
        nops = 0;
        char err[256] = "";
        int rc = b2f_commit(f, 1, err, sizeof err);
        fail_at = -1;
        if (rc < 0)
            ck_assert_msg(err[0] != 0, "stopped at write %d: no reason given", k);
        /* the same frame, committed again once the writes work, ends up new */
        int fd2 = tmpfd();
        copy_fd(fd, fd2);
        int retry = b2f_commit(f, 1, err, sizeof err);
        ck_assert_msg(retry == 0, "stopped at write %d, then: %s", k, err);
        ck_assert_msg(same_contents(fd, &now, new_vl) == 1, "stopped at write %d: the retried "
                      "commit does not hold the new contents", k);
        copy_fd(fd2, fd);   /* back to the stopped state for the checks below */
        close(fd2);
        b2f_close(f);
        keep_crash_state(fd, k, old, &now);
        int is_old = same_contents(fd, old, old_vl);
        int is_new = same_contents(fd, &now, new_vl);
        ck_assert_msg(is_old >= 0, "stopped at write %d: the frame does not open", k);
        ck_assert_msg(is_old || is_new, "stopped at write %d: neither old nor new contents", k);
        if (rc == 0)
            ck_assert_msg(is_new, "commit succeeded but the file is not new");
        free(now.data);
        close(fd);
        if (rc == 0) {
            ops = k;
            break;
        }
    }
    ck_assert_msg(ops > 2, "the commit never went through (or made no writes)");
}

static void edit_update_append(b2_frame *f, model *m)
{
    uint8_t c[8192];
    tu_fill_random(c, sizeof c, 77);
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 1, c, sizeof c), 0);
    model_set(m, 8192, c, sizeof c);
    b2f_stat st;
    b2f_stat_get(f, &st);
    tu_fill_text(c, sizeof c, 78);
    ck_assert_int_eq(b2f_update_chunk(f, NULL, st.nchunks, c, 3000), 0);
    model_set(m, m->len, c, 3000);
}

static void edit_delete_all(b2_frame *f, model *m)
{
    ck_assert_int_eq(b2f_resize(f, NULL, 0), 0);
    m->len = 0;
}

static void edit_grow(b2_frame *f, model *m)
{
    size_t old = m->len;
    ck_assert_int_eq(b2f_resize(f, NULL, old + 100000), 0);
    uint8_t *z = calloc(1, 100000);
    model_set(m, old, z, 100000);
    free(z);
    ck_assert_int_eq(b2f_delete_chunk(f, 0), 0);
    memmove(m->data, m->data + 8192, m->len - 8192);
    m->len -= 8192;
}

static void edit_fill(b2_frame *f, model *m)
{
    uint8_t c[20000];
    tu_fill_float_series(c, sizeof c, 79);
    append(f, m, c, sizeof c);
}

static void edit_params(b2_frame *f, model *m)
{
    b2f_params p;
    b2f_params_default(&p);
    p.cp.codec = B2_ZLIB;
    p.cp.typesize = 4;
    p.chunksize = 4096;
    ck_assert_int_eq(b2f_set_params(f, &p), 0);
    ck_assert_int_eq(b2f_commit_is_atomic(f), 1);
    (void)m;
}

START_TEST(crash_consistency)
{
    int base = tmpfd();
    b2_frame *f = new_frame(base, B2_LZ4, "shuffle", 4, 8192);
    model m = {0};
    uint8_t *src = malloc(8192 * 5 + 100);
    tu_fill_float_series(src, 8192 * 5 + 100, 11);
    append(f, &m, src, 8192 * 5);
    ck_assert_int_eq(b2f_vlmeta_set(f, "note", "old", 3), 0);
    commit(f);
    b2f_close(f);

    int empty = tmpfd();
    f = new_frame(empty, B2_ZSTD, "shuffle", 4, 8192);
    b2f_close(f);
    model none = {NULL, 0};
    for (torn = 0; torn <= 1; torn++) {
        crash_each_write(base, &m, "old", edit_update_append, "new");
        crash_each_write(base, &m, "old", edit_grow, NULL);
        crash_each_write(base, &m, "old", edit_delete_all, "emptied");
        crash_each_write(empty, &none, NULL, edit_fill, NULL);   /* from empty to data */
        crash_each_write(empty, &none, NULL, edit_params, NULL); /* empty, header only */
    }
    torn = 0;
    close(empty);
    close(base);
    free(src);
    free(m.data);
}
END_TEST

/* ---- commits written by another thread (b2f_pending_*) ---- */

static model model_dup(const model *m)
{
    model c = {malloc(m->len + 1), m->len};
    if (m->len)
        memcpy(c.data, m->data, m->len);
    return c;
}

static void update(b2_frame *f, model *m, int64_t n, const uint8_t *c, size_t len)
{
    ck_assert_int_eq(b2f_update_chunk(f, NULL, n, c, len), 0);
    model_set(m, (size_t)n * 8192, c, len);
}

typedef struct pending_arg {
    b2f_pending *p;
    int rc;
    char err[256];
} pending_arg;

static void *pending_writer(void *v)
{
    pending_arg *a = v;
    a->rc = b2f_pending_write(a->p, a->err, sizeof a->err);
    return NULL;
}

/* The edits made while a pending commit is written: chunk 1 again (its staged copy is
 * the pending commit's), committed chunk 0, an append, and the two chunks appended
 * before begin dropped (one staged copy pinned) and one put back. */
static void edit_while_pending(b2_frame *f, model *m, const uint8_t *src)
{
    uint8_t c[8192];
    tu_fill_text(c, sizeof c, 23);
    update(f, m, 1, c, sizeof c);
    tu_fill_random(c, sizeof c, 24);
    update(f, m, 0, c, sizeof c);
    append(f, m, src + 8192 * 6, 8192);
    ck_assert_int_eq(b2f_resize(f, NULL, 8192 * 4), 0);
    m->len = 8192 * 4;
    append(f, m, src + 8192 * 7, 5000);
}

START_TEST(pending_commit)
{
    int fd = tmpfd();
    b2_frame *f = new_frame(fd, B2_LZ4, "shuffle", 4, 8192);
    model m0 = {0};
    uint8_t *src = malloc(8192 * 8);
    tu_fill_float_series(src, 8192 * 8, 21);
    append(f, &m0, src, 8192 * 4);
    commit(f);
    /* staged at begin: chunk 1 replaced, two chunks appended */
    model m1 = model_dup(&m0);
    uint8_t c[8192];
    tu_fill_random(c, sizeof c, 22);
    update(f, &m1, 1, c, sizeof c);
    append(f, &m1, src + 8192 * 4, 8192 * 2);
    pending_arg a = {NULL, 0, ""};
    ck_assert_int_eq(b2f_pending_begin(f, &a.p), 0);
    ck_assert(a.p != NULL);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, pending_writer, &a), 0);
    model m2 = model_dup(&m1);
    edit_while_pending(f, &m2, src);
    check_frame(f, &m2, "while the pending commit is written");
    pthread_join(t, NULL);
    ck_assert_msg(a.rc == 0, "pending write: %s (%s)", b2f_strerror(a.rc), a.err);
    b2f_pending_end(f, a.p);
    check_file(fd, &m1, "after the pending commit");
    check_frame(f, &m2, "the frame after the pending commit");
    ck_assert_int_eq(b2f_is_dirty(f), 1);
    commit(f);
    check_file(fd, &m2, "after the next commit");

    /* nothing changed since begin: nothing left to commit */
    tu_fill_random(c, sizeof c, 25);
    update(f, &m2, 2, c, sizeof c);
    ck_assert_int_eq(b2f_pending_begin(f, &a.p), 0);
    ck_assert(a.p != NULL);
    pending_writer(&a);
    ck_assert_int_eq(a.rc, 0);
    b2f_pending_end(f, a.p);
    ck_assert_int_eq(b2f_is_dirty(f), 0);
    check_file(fd, &m2, "a pending commit with no changes after it");
    /* nothing staged, or a change a plain commit has to make: no pending commit */
    ck_assert_int_eq(b2f_pending_begin(f, &a.p), 0);
    ck_assert(a.p == NULL);
    ck_assert_int_eq(b2f_vlmeta_set(f, "note", "x", 1), 0);
    ck_assert_int_eq(b2f_pending_begin(f, &a.p), 0);
    ck_assert(a.p == NULL);
    commit(f);
    b2f_close(f);
    close(fd);
    free(src);
    free(m0.data);
    free(m1.data);
    free(m2.data);
}
END_TEST

/* A pending commit stopped at each of its writes (whole or torn) leaves the old frame
 * on disk and everything staged: a plain commit afterwards writes it all. */
START_TEST(pending_crash)
{
    int base = tmpfd();
    b2_frame *f = new_frame(base, B2_ZSTD, "shuffle", 4, 8192);
    model m0 = {0};
    uint8_t *src = malloc(8192 * 8);
    tu_fill_float_series(src, 8192 * 8, 31);
    append(f, &m0, src, 8192 * 4);
    commit(f);
    b2f_close(f);
    for (torn = 0; torn <= 1; torn++) {
        int went_through = 0;
        for (int k = 0; k < 50 && !went_through; k++) {
            int fd = tmpfd();
            copy_fd(base, fd);
            ck_assert_int_eq(b2f_open(&f, fd, B2F_RDWR, &crash_io, NULL, 0), 0);
            model m1 = model_dup(&m0);
            uint8_t c[8192];
            tu_fill_random(c, sizeof c, 32);
            update(f, &m1, 2, c, sizeof c);
            append(f, &m1, src + 8192 * 4, 8192 * 2);
            pending_arg a = {NULL, 0, ""};
            ck_assert_int_eq(b2f_pending_begin(f, &a.p), 0);
            model m2 = model_dup(&m1);
            edit_while_pending(f, &m2, src);
            fail_at = k;
            nops = 0;
            pending_writer(&a);
            fail_at = -1;
            b2f_pending_end(f, a.p);
            if (a.rc < 0) {
                ck_assert_msg(a.err[0] != 0, "stopped at write %d: no reason given", k);
                ck_assert_msg(same_contents(fd, &m0, NULL) == 1,
                              "stopped at write %d: the file is not the old frame", k);
            } else {
                went_through = 1;
                ck_assert_msg(same_contents(fd, &m1, NULL) == 1, "the pending commit went "
                              "through at write %d but the file does not hold it", k);
            }
            check_frame(f, &m2, "after a stopped pending commit");
            commit(f);
            ck_assert_msg(same_contents(fd, &m2, NULL) == 1, "stopped at write %d: the next "
                          "commit does not hold everything", k);
            b2f_close(f);
            close(fd);
            free(m1.data);
            free(m2.data);
        }
        ck_assert_msg(went_through, "the pending commit never went through");
    }
    torn = 0;
    close(base);
    free(src);
    free(m0.data);
}
END_TEST

/* ---- concurrent readers ---- */

typedef struct reader_arg {
    b2_frame *f;
    const model *m;
    int seed, bad;
} reader_arg;

static void *reader(void *p)
{
    reader_arg *a = p;
    b2_dctx *ctx = b2_dctx_new();
    uint8_t buf[20000];
    uint64_t s = (uint64_t)a->seed * 2654435761u + 1;
    for (int i = 0; i < 300; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        size_t off = (size_t)(s % a->m->len), len = (size_t)(s >> 40) % sizeof buf + 1;
        if (off + len > a->m->len)
            len = a->m->len - off;
        if (b2f_pread(a->f, ctx, buf, len, off) != (ssize_t)len ||
            memcmp(buf, a->m->data + off, len) != 0)
            a->bad++;
    }
    b2_dctx_free(ctx);
    return NULL;
}

START_TEST(concurrent_readers)
{
    int fd = tmpfd();
    b2_frame *f = new_frame(fd, B2_ZSTD, "shuffle", 8, 65536);
    model m = {0};
    uint8_t *src = malloc(1 << 20);
    tu_fill_float_series(src, 1 << 20, 2);
    append(f, &m, src, 1 << 20);
    commit(f);
    b2f_close(f);
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    pthread_t t[4];
    reader_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (reader_arg){f, &m, i, 0};
        pthread_create(&t[i], NULL, reader, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(a[i].bad, 0);
    }
    b2f_close(f);
    close(fd);
    free(src);
    free(m.data);
}
END_TEST

START_TEST(refresh_sees_other_writer)
{
    int fd = tmpfd();
    b2_frame *w = new_frame(fd, B2_LZ4, "shuffle", 4, 4096);
    model m = {0};
    uint8_t data[10000];
    tu_fill_float_series(data, sizeof data, 8);
    append(w, &m, data, 8192);
    commit(w);
    b2_frame *r;
    ck_assert_int_eq(b2f_open(&r, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    ck_assert_int_eq(b2f_refresh(r, NULL, 0), 0);
    append(w, &m, data, 4096);
    commit(w);
    ck_assert_int_eq(b2f_refresh(r, NULL, 0), 1);
    b2f_stat st;
    b2f_stat_get(r, &st);
    ck_assert_int_eq(st.nbytes, 12288);
    b2f_close(r);
    b2f_close(w);
    close(fd);
    free(m.data);
}
END_TEST

/* A reader opening the file while another writer commits: the writer's commit lands
 * right before the reader reads the header, after it could have looked at the size. */
static b2_frame *racing_writer;

static ssize_t pread_after_commit(int fd, void *buf, size_t len, off_t off)
{
    if (racing_writer && off == 0 && len > 4) {   /* the header, not the magic sniff */
        commit(racing_writer);
        racing_writer = NULL;
    }
    return pread(fd, buf, len, off);
}

START_TEST(open_during_commit)
{
    int fd = tmpfd();
    b2_frame *w = new_frame(fd, B2_LZ4, "shuffle", 4, 4096);
    model m = {0};
    uint8_t data[16384];
    tu_fill_float_series(data, sizeof data, 9);
    append(w, &m, data, 4096);
    commit(w);
    append(w, &m, data + 4096, 12288);   /* staged: the file grows at the commit */
    racing_writer = w;
    static const b2f_io io = {pread_after_commit, NULL, NULL, NULL};
    b2_frame *r;
    char err[256] = "";
    int rc = b2f_open(&r, fd, B2F_RDONLY, &io, err, sizeof err);
    ck_assert_msg(racing_writer == NULL, "the commit did not run during the open");
    ck_assert_msg(rc == 0, "open during a commit: %s (%s)", b2f_strerror(rc), err);
    b2f_stat st;
    b2f_stat_get(r, &st);
    ck_assert_int_eq(st.nbytes, 16384);
    b2f_close(r);
    check_file(fd, &m, "after the racing commit");
    b2f_close(w);
    close(fd);
    free(m.data);
}
END_TEST

/* ---- frames for the interop checks (kept in tests/data/b2fs-written) ---- */

static FILE *manifest;
static char outdir[512];

static int out_file(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    ck_assert_msg(fd >= 0, "cannot create %s", path);
    return fd;
}

/* A manifest row in the columns of tests/data/MANIFEST.tsv: cols gives codec to chunksize,
 * the frame's header the blocksize and nchunks. */
static void record(int fd, const char *name, const model *m, const char *cols, const char *note)
{
    check_file(fd, m, name);
    b2_frame *f;
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    b2f_stat st;
    b2f_stat_get(f, &st);
    b2f_close(f);
    char hex[65];
    tu_sha256_hex(m->data, m->len, hex);
    fprintf(manifest, "%s\t%zu\t%s\t%s\t%d\t%lld\t%s\n", name, m->len, hex, cols,
            (int)st.blocksize, (long long)st.nchunks, note);
}

START_TEST(written_frames)
{
    const char *dir = getenv("B2F_WRITE_DIR");
    if (dir && *dir) {
        snprintf(outdir, sizeof outdir, "%s", dir);
        mkdir(outdir, 0755);
    } else {
        snprintf(outdir, sizeof outdir, "/tmp/b2fs-written-XXXXXX");
        ck_assert(mkdtemp(outdir) != NULL);
    }
    char mpath[1024];
    snprintf(mpath, sizeof mpath, "%s/MANIFEST.tsv", outdir);
    manifest = fopen(mpath, "w");
    ck_assert(manifest != NULL);
    fprintf(manifest, "file\tnbytes\tsha256\tcodec\tclevel\ttypesize\tfilters\tchunksize"
                      "\tblocksize\tnchunks\tnote\n");
    static const int codecs[] = {B2_BLOSCLZ, B2_LZ4, B2_LZ4HC, B2_ZLIB, B2_ZSTD};
    static const char *filters[] = {"none", "shuffle", "bitshuffle", "delta,shuffle",
                                    "trunc:20,shuffle"};
    static const size_t sizes[] = {1, 7, 12345, 50000, 65536};
    uint8_t *src = malloc(70000);
    tu_fill_float_series(src, 70000, 21);
    for (int c = 0; c < 5; c++) {
        for (int fi = 0; fi < 5; fi++) {
            size_t len = sizes[(c + fi) % 5];
            int ts = fi == 4 ? 4 : 8;
            char name[128], cols[128];
            snprintf(name, sizeof name, "%s-%s-t%d-n%zu.b2frame", b2_codec_name(codecs[c]),
                     filters[fi], ts, len);
            for (char *p = name; *p; p++)
                if (*p == ',' || *p == ':')
                    *p = '+';
            snprintf(cols, sizeof cols, "%s\t5\t%d\t%s\t16384", b2_codec_name(codecs[c]), ts,
                     filters[fi]);
            int fd = out_file(name);
            b2_frame *f = new_frame(fd, codecs[c], filters[fi], ts, 16384);
            model m = {0};
            append(f, &m, src, len);
            commit(f);
            b2f_close(f);
            if (fi == 4) {   /* lossy: the manifest holds what is decoded */
                ck_assert_int_eq(b2f_open(&f, fd, B2F_RDONLY, NULL, NULL, 0), 0);
                b2_dctx *ctx = b2_dctx_new();
                ck_assert_int_eq(b2f_pread(f, ctx, m.data, m.len, 0), (ssize_t)m.len);
                b2_dctx_free(ctx);
                b2f_close(f);
            }
            record(fd, name, &m, cols, fi == 4 ? "lossy" : "plain");
            close(fd);
            free(m.data);
        }
    }

    /* special chunks, metalayers, vlmetalayers, edits, then a compacted copy */
    int fd = out_file("edited-meta-zstd-t8.b2frame");
    b2f_params p;
    b2f_params_default(&p);
    p.cp.clevel = 3;
    p.chunksize = 8192;
    const char *names[] = {"units", "dims"};
    const void *vals[] = {"\xa5hello", "\x93\x01\x02\x03"};
    size_t lens[] = {6, 4};
    b2_frame *f;
    ck_assert_int_eq(b2f_create(&f, fd, &p, 2, names, vals, lens, NULL, NULL, 0), 0);
    model m = {0};
    append(f, &m, src, 8192 * 6);
    commit(f);
    uint8_t c8[8192];
    tu_fill_random(c8, sizeof c8, 5);
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 1, c8, sizeof c8), 0);   /* update */
    model_set(&m, 8192, c8, sizeof c8);
    tu_fill_text(c8, sizeof c8, 6);
    ck_assert_int_eq(b2f_insert_chunk(f, NULL, 3, c8, sizeof c8), 0);   /* insert */
    uint8_t *nm = malloc(m.len + 8192);
    memcpy(nm, m.data, 3 * 8192);
    memcpy(nm + 3 * 8192, c8, 8192);
    memcpy(nm + 4 * 8192, m.data + 3 * 8192, m.len - 3 * 8192);
    free(m.data);
    m.data = nm;
    m.len += 8192;
    ck_assert_int_eq(b2f_delete_chunk(f, 5), 0);                        /* delete */
    memmove(m.data + 5 * 8192, m.data + 6 * 8192, m.len - 6 * 8192);
    m.len -= 8192;
    commit(f);
    size_t old = m.len;
    ck_assert_int_eq(b2f_resize(f, NULL, old + 3 * 8192 + 1001), 0);   /* zero specials */
    uint8_t *z = calloc(1, 3 * 8192 + 1001);
    model_set(&m, old, z, 3 * 8192 + 1001);
    free(z);
    ck_assert_int_eq(b2f_vlmeta_set(f, "attrs", "{\"sensor\": \"t-17\"}", 18), 0);
    uint8_t hist[5000];
    for (int i = 0; i < 5000; i++)
        hist[i] = (uint8_t)(i % 251);
    ck_assert_int_eq(b2f_vlmeta_set(f, "history", hist, sizeof hist), 0);
    ck_assert_int_eq(b2f_meta_update(f, "units", "\xa5HELLO", 6), 0);
    commit(f);
    record(fd, "edited-meta-zstd-t8.b2frame", &m, "zstd\t3\t8\tshuffle\t8192",
           "edited: update, insert, delete, grow; metalayers:units,dims vlmetalayers:attrs,history");
    int out = out_file("compacted-meta-zstd-t8.b2frame");
    ck_assert_int_eq(b2f_compact_into(f, out, NULL, 0), 0);
    record(out, "compacted-meta-zstd-t8.b2frame", &m, "zstd\t3\t8\tshuffle\t8192",
           "compacted copy of edited-meta-zstd-t8");
    close(out);
    b2f_close(f);
    close(fd);
    free(m.data);

    /* an empty frame with a vlmetalayer, and a frame emptied after holding data */
    fd = out_file("empty-lz4.b2frame");
    f = new_frame(fd, B2_LZ4, "shuffle", 4, 4096);
    ck_assert_int_eq(b2f_vlmeta_set(f, "note", "nothing here", 12), 0);
    commit(f);
    model none = {NULL, 0};
    record(fd, "empty-lz4.b2frame", &none, "lz4\t5\t4\tshuffle\t4096", "empty vlmetalayers:note");
    b2f_close(f);
    close(fd);
    fd = out_file("emptied-zstd.b2frame");
    f = new_frame(fd, B2_ZSTD, "shuffle", 8, 4096);
    model e = {0};
    append(f, &e, src, 10000);
    commit(f);
    ck_assert_int_eq(b2f_resize(f, NULL, 0), 0);
    commit(f);
    record(fd, "emptied-zstd.b2frame", &none, "zstd\t5\t8\tshuffle\t4096", "emptied after data");
    b2f_close(f);
    close(fd);
    free(e.data);
    fclose(manifest);
    free(src);
    if (!(dir && *dir)) {   /* not kept: remove what was made */
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", outdir);
        ck_assert_int_eq(system(cmd), 0);
    }
}
END_TEST

/* b2f_encode_chunk: zeros of whole items become a zero special chunk, anything else a
 * chunk that decodes back; the result goes into a frame with b2f_update_encoded and
 * reads back after a commit. Encoded on two threads at once with their own contexts. */
typedef struct enc_arg {
    b2_cctx *cctx;
    const uint8_t *src;
    size_t len;
    uint8_t *out;
    int rc;
} enc_arg;

static void *encode_thread(void *p)
{
    enc_arg *a = p;
    a->out = malloc(a->len + B2_MAX_OVERHEAD);
    a->rc = b2f_encode_chunk(a->cctx, 4, a->src, a->len, a->out, a->len + B2_MAX_OVERHEAD);
    return NULL;
}

START_TEST(encode_chunk)
{
    const size_t cs = 65536, cap = cs + B2_MAX_OVERHEAD;
    int fd = tmpfd();
    b2_frame *f = new_frame(fd, B2_ZSTD, "shuffle", 4, (int32_t)cs);
    uint8_t *zeros = calloc(1, cs), *series = malloc(cs), *out = malloc(cap);
    tu_fill_float_series(series, cs, 3);
    b2_chunk_info ci;
    b2_cctx *cctx = b2f_cctx_new(f);
    ck_assert_ptr_nonnull(cctx);

    /* zeros: a special chunk with no data, also without a context */
    int cb = b2f_encode_chunk(NULL, 4, zeros, cs, out, cap);
    ck_assert_int_gt(cb, 0);
    ck_assert_int_le(cb, B2_HEADER_LEN + 8);
    ck_assert_int_eq(b2_chunk_parse_header(out, (size_t)cb, &ci), 0);
    ck_assert_int_eq(ci.special, B2_SPECIAL_ZERO);
    ck_assert_int_eq(ci.nbytes, (int32_t)cs);
    /* zeros that end in a partial item: encoded, not special (C-Blosc2 could not read it) */
    cb = b2f_encode_chunk(cctx, 4, zeros, 10, out, cap);
    ck_assert_int_gt(cb, 0);
    ck_assert_int_eq(b2_chunk_parse_header(out, (size_t)cb, &ci), 0);
    ck_assert_int_eq(ci.special, B2_SPECIAL_NONE);
    /* nothing; no context for data that needs one; no room */
    ck_assert_int_eq(b2f_encode_chunk(cctx, 4, zeros, 0, out, cap), B2F_ERANGE);
    ck_assert_int_lt(b2f_encode_chunk(NULL, 4, series, cs, out, cap), 0);
    ck_assert_int_lt(b2f_encode_chunk(cctx, 4, zeros, cs, out, 8), 0);

    /* data and zeros on two threads at once; then into the frame as chunks 0 and 1 */
    enc_arg a[2] = {{cctx, series, cs, NULL, -1}, {b2f_cctx_new(f), zeros, cs, NULL, -1}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, encode_thread, &a[i]), 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_gt(a[i].rc, 0);
        ck_assert_int_eq(b2_chunk_parse_header(a[i].out, (size_t)a[i].rc, &ci), 0);
        ck_assert_int_eq(ci.special, i ? B2_SPECIAL_ZERO : B2_SPECIAL_NONE);
        ck_assert_int_eq(b2f_update_encoded(f, i, a[i].out, a[i].rc), 0);
    }
    b2_cctx_free(a[1].cctx);
    b2_cctx_free(cctx);
    commit(f);
    b2f_close(f);
    model m = {0};
    model_set(&m, 0, series, cs);
    model_set(&m, cs, zeros, cs);
    check_file(fd, &m, "encoded chunks");
    b2_frame *g;
    ck_assert_int_eq(b2f_open(&g, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    ck_assert_int_eq(b2f_chunk_special(g, 1), B2_SPECIAL_ZERO);
    b2f_close(g);
    close(fd);
    free(m.data);
    free(zeros);
    free(series);
    free(out);
}
END_TEST

/* b2f_update_stored: a chunk stored as it is in the buffer it came in (room for the header
 * in front), all zeros as a zero special chunk instead (the buffer stays the caller's),
 * replaced and partial chunks; after a commit it reads back, its checksums hold (they were
 * taken when it was staged) and the chunks say they are stored. */
START_TEST(update_stored)
{
    const size_t cs = 65536;
    b2f_checksums_default(1, 1);
    int fd = tmpfd();
    b2_frame *f = new_frame(fd, B2_ZSTD, "shuffle", 4, (int32_t)cs);
    model m = {0};
    uint8_t *series = malloc(cs);
    tu_fill_float_series(series, cs, 5);
    for (int i = 0; i < 3; i++) {
        uint8_t *buf = malloc(B2_HEADER_LEN + cs);
        if (i == 1)
            memset(buf + B2_HEADER_LEN, 0, cs);
        else
            memcpy(buf + B2_HEADER_LEN, series, cs);
        if (i == 2)
            buf[B2_HEADER_LEN + 7] ^= 0x33;   /* not the same as chunk 0 */
        model_set(&m, (size_t)i * cs, buf + B2_HEADER_LEN, cs);
        int rc = b2f_update_stored(f, i, buf, cs);
        ck_assert_int_eq(rc, i == 1 ? 1 : 0);
        if (rc == 1)
            free(buf);   /* zeros: still ours */
    }
    /* chunk 0 again, then a partial last chunk */
    uint8_t *buf = malloc(B2_HEADER_LEN + cs);
    memcpy(buf + B2_HEADER_LEN, series, cs);
    buf[B2_HEADER_LEN] = 0x5a;
    model_set(&m, 0, buf + B2_HEADER_LEN, cs);
    ck_assert_int_eq(b2f_update_stored(f, 0, buf, cs), 0);
    buf = malloc(B2_HEADER_LEN + 1000);
    memcpy(buf + B2_HEADER_LEN, series + 9, 1000);
    model_set(&m, 3 * cs, buf + B2_HEADER_LEN, 1000);
    ck_assert_int_eq(b2f_update_stored(f, 3, buf, 1000), 0);
    /* out of range, a chunk past the next, a full chunk after a partial one: refused, the
     * buffer the caller's */
    buf = malloc(B2_HEADER_LEN + cs);
    memcpy(buf + B2_HEADER_LEN, series, cs);
    ck_assert_int_eq(b2f_update_stored(f, 9, buf, cs), B2F_ERANGE);
    ck_assert_int_lt(b2f_update_stored(f, 4, buf, cs), 0);
    ck_assert_int_eq(b2f_update_stored(f, 0, buf, 0), B2F_ERANGE);
    free(buf);
    check_frame(f, &m, "staged stored chunks");
    commit(f);
    b2f_close(f);
    check_file(fd, &m, "stored chunks");
    b2_frame *g;
    ck_assert_int_eq(b2f_open(&g, fd, B2F_RDONLY, NULL, NULL, 0), 0);
    ck_assert_int_eq(b2f_chunk_special(g, 1), B2_SPECIAL_ZERO);
    for (int64_t n = 0; n < 4; n++) {
        if (n == 1)
            continue;
        const b2_chunk_layout *lay;
        ck_assert_int_eq(b2f_chunk_layout(g, n, &lay), 0);
        ck_assert_int_eq(lay->info.memcpyed, 1);
        int32_t bad = -1;
        ck_assert_int_eq(b2f_chunk_verify(g, n, &bad), 1);   /* checked, and it holds */
    }
    b2f_close(g);
    close(fd);
    free(m.data);
    free(series);
}
END_TEST

/* ---- compaction in place ---- */

static uint8_t *file_bytes(int fd, size_t *len)
{
    struct stat st;
    ck_assert(fstat(fd, &st) == 0);
    uint8_t *b = malloc((size_t)st.st_size + 1);
    ck_assert(pread(fd, b, (size_t)st.st_size, 0) == st.st_size);
    *len = (size_t)st.st_size;
    return b;
}

static int same_file(int fd, const uint8_t *b, size_t len)
{
    size_t n;
    uint8_t *now = file_bytes(fd, &n);
    int same = n == len && memcmp(now, b, len) == 0;
    free(now);
    return same;
}

/* Chunks stored as written (b2fs's first commit of a new file), then those from chunk
 * first on compressed and committed after them: what fs/idle leaves before compacting in
 * place. The chunks are two of a series, all zeros, and a partial one of text. */
static void stored_then_compressed(int fd, model *m, int nchunks, int first)
{
    const size_t cs = 32768;
    b2_frame *f = new_frame(fd, B2_ZSTD, "shuffle", 4, (int32_t)cs);
    uint8_t *src = malloc(cs * 4);
    tu_fill_float_series(src, cs * 2, 31);
    memset(src + cs * 2, 0, cs);
    tu_fill_text(src + cs * 3, cs, 32);
    size_t len[4] = {cs, cs, cs, 5000};
    for (int i = 0; i < nchunks; i++) {
        uint8_t *buf = malloc(B2_HEADER_LEN + len[i]);
        memcpy(buf + B2_HEADER_LEN, src + (size_t)i * cs, len[i]);
        model_set(m, (size_t)i * cs, buf + B2_HEADER_LEN, len[i]);
        if (b2f_update_stored(f, i, buf, len[i]) == 1)
            free(buf);
    }
    commit(f);
    for (int i = first; i < nchunks; i++)
        ck_assert_int_eq(b2f_update_chunk(f, NULL, i, src + (size_t)i * cs, len[i]), 0);
    char err[256] = "";
    ck_assert_int_eq(b2f_commit(f, 0, err, sizeof err), 0);
    b2f_close(f);
    free(src);
}

/* A frame stored then compressed (stored_then_compressed), its file's bytes, and what
 * compaction into a new file makes of it (want). */
typedef struct own_case {
    int fd, want;
    model m;
    uint8_t *before, *want_bytes;
    size_t before_len, want_len;
} own_case;

static void own_case_make(own_case *c, int nchunks, int first)
{
    memset(c, 0, sizeof *c);
    c->fd = tmpfd();
    stored_then_compressed(c->fd, &c->m, nchunks, first);
    c->before = file_bytes(c->fd, &c->before_len);
    b2_frame *f;
    ck_assert_int_eq(b2f_open(&f, c->fd, B2F_RDWR, NULL, NULL, 0), 0);
    c->want = tmpfd();
    ck_assert_int_eq(b2f_compact_into(f, c->want, NULL, 0), 0);
    b2f_close(f);
    c->want_bytes = file_bytes(c->want, &c->want_len);
}

static void own_case_free(own_case *c)
{
    free(c->before);
    free(c->want_bytes);
    free(c->m.data);
    close(c->want);
    close(c->fd);
}

/* b2f_compact_in_place or b2f_move_past_end */
typedef int (*own_file_fn)(b2_frame *f, int64_t max_bytes, int durable, char *err,
                           size_t errlen);

/* Runs fn on copies of before, stopped at each of its writes in turn, cleanly and then
 * half done: each copy opens with m's contents, and the run that goes through ends with
 * want's bytes (NULL: not looked at). */
static void crash_each_own_write(const uint8_t *before, size_t before_len, const model *m,
                                 own_file_fn fn, int durable, const uint8_t *want,
                                 size_t want_len)
{
    for (torn = 0; torn <= 1; torn++) {
        int ops = -1;
        for (int k = 0; k < 50 && ops < 0; k++) {
            int g = tmpfd();
            ck_assert(pwrite(g, before, before_len, 0) == (ssize_t)before_len);
            b2_frame *f;
            ck_assert_int_eq(b2f_open(&f, g, B2F_RDWR, &crash_io, NULL, 0), 0);
            fail_at = k;
            nops = 0;
            char err[256] = "";
            int rc = fn(f, INT64_MAX, durable, err, sizeof err);
            fail_at = -1;
            b2f_close(f);
            ck_assert_msg(rc == 1 || (rc < 0 && err[0]), "stopped at write %d: %d", k, rc);
            ck_assert_msg(same_contents(g, m, NULL) == 1, "%lld bytes, stopped at write "
                          "%d%s: other contents", (long long)m->len, k, torn ? " (torn)" : "");
            if (rc == 1) {
                ck_assert(!want || same_file(g, want, want_len));
                ops = k;
            }
            close(g);
        }
        ck_assert_int_gt(ops, 2);
    }
    torn = 0;
}

START_TEST(compact_in_place)
{
    b2f_checksums_default(1, 1);
    for (int nchunks = 1; nchunks <= 4; nchunks++) {
        own_case k;
        own_case_make(&k, nchunks, 0);
        ck_assert_uint_lt(k.want_len, k.before_len);
        b2_frame *f;
        ck_assert_int_eq(b2f_open(&f, k.fd, B2F_RDWR, NULL, NULL, 0), 0);
        /* too big for max_bytes, or with a change staged: nothing written */
        ck_assert_int_eq(b2f_compact_in_place(f, 100, 0, NULL, 0), 0);
        ck_assert(same_file(k.fd, k.before, k.before_len));
        /* (the last chunk grown by 100 bytes) */
        size_t grown = k.m.len % 32768 + 100;
        uint8_t *c = malloc(grown);
        memset(c, 7, grown);
        ck_assert_int_eq(b2f_resize(f, NULL, (uint64_t)k.m.len + 100), 0);
        int64_t last = (int64_t)(k.m.len / 32768);
        ck_assert_int_eq(b2f_update_chunk(f, NULL, last, c, grown), 0);
        free(c);
        ck_assert_int_eq(b2f_compact_in_place(f, INT64_MAX, 0, NULL, 0), 0);
        ck_assert(same_file(k.fd, k.before, k.before_len));
        b2f_close(f);
        ck_assert_int_eq(b2f_open(&f, k.fd, B2F_RDWR, NULL, NULL, 0), 0);
        char err[256] = "";
        ck_assert_int_eq(b2f_compact_in_place(f, INT64_MAX, 0, err, sizeof err), 1);
        ck_assert_msg(same_file(k.fd, k.want_bytes, k.want_len), "%d chunks: not what "
                      "compaction into a new file makes", nchunks);
        check_frame(f, &k.m, "compacted in place, as the frame shows it");
        /* nothing dead in front any more: not again */
        ck_assert_int_eq(b2f_compact_in_place(f, INT64_MAX, 0, NULL, 0), 0);
        b2f_close(f);
        check_file(k.fd, &k.m, "compacted in place");
        /* stopped at each write, whole or torn: the file opens with the same contents
         * (the frame before or the compacted one) */
        crash_each_own_write(k.before, k.before_len, &k.m, b2f_compact_in_place, 0,
                             k.want_bytes, k.want_len);
        own_case_free(&k);
    }
}
END_TEST

/* What a compaction in place does to the file, in order: W a write, H the write at
 * offset 0 (the header), S a sync, T a cut. */
static char ops_seen[512];
static size_t nops_seen;
static void see(char op)
{
    if (nops_seen < sizeof ops_seen - 1)
        ops_seen[nops_seen++] = op;
}
static ssize_t seen_pwrite(int fd, const void *b, size_t n, off_t o)
{
    see(o == 0 ? 'H' : 'W');
    return pwrite(fd, b, n, o);
}
static int seen_sync(int fd)
{
    see('S');
    return fdatasync(fd);
}
static int seen_truncate(int fd, off_t len)
{
    see('T');
    return ftruncate(fd, len);
}
static const b2f_io seen_io = {NULL, seen_pwrite, seen_sync, seen_truncate};

/* Durable, a compaction in place syncs the commit before it (what it overwrites may be
 * live to the header on the disk), then the compacted chunks, index and trailer before
 * the header is written, and the header after it, as a durable commit does; a move past
 * the end (which overwrites nothing) the same but the first. Not durable, nothing is
 * synced. The file is the same either way. */
START_TEST(own_file_durable)
{
    b2f_checksums_default(1, 1);
    for (int move = 0; move <= 1; move++) {
        for (int durable = 0; durable <= 1; durable++) {
            own_case k;
            own_case_make(&k, move ? 4 : 3, move);
            b2_frame *f;
            ck_assert_int_eq(b2f_open(&f, k.fd, B2F_RDWR, &seen_io, NULL, 0), 0);
            memset(ops_seen, 0, sizeof ops_seen);
            nops_seen = 0;
            char err[256] = "";
            own_file_fn fn = move ? b2f_move_past_end : b2f_compact_in_place;
            ck_assert_int_eq(fn(f, INT64_MAX, durable, err, sizeof err), 1);
            b2f_close(f);
            /* (the sync first,) the chunks, the index and the trailer, then the header,
             * then the cut (none after a move: the file ends with the moved frame) */
            const char *ops = ops_seen + (durable && !move && ops_seen[0] == 'S');
            ck_assert_msg(durable && !move ? ops_seen[0] == 'S' : ops_seen[0] == 'W',
                          "move %d, durable %d: %s", move, durable, ops_seen);
            size_t w = strspn(ops, "W");
            ck_assert_uint_ge(w, 3);
            const char *want = durable ? (move ? "SHS" : "SHST") : (move ? "H" : "HT");
            ck_assert_msg(!strcmp(ops + w, want), "move %d, durable %d: %s", move, durable,
                          ops_seen);
            if (!move)
                ck_assert(same_file(k.fd, k.want_bytes, k.want_len));
            check_file(k.fd, &k.m, move ? "moved past its end" : "compacted in place");
            own_case_free(&k);
        }
    }
}
END_TEST

/* A frame whose first chunk was not rewritten (still stored in front), the others
 * compressed after it: its compacted copy does not fit in front of that chunk. Moved past
 * its end first, it then compacts in place to what compaction into a new file makes;
 * stopped at each write of the move, and of the compaction after it, the file opens with
 * the same contents. */
START_TEST(move_past_end)
{
    b2f_checksums_default(1, 1);
    for (int durable = 0; durable <= 1; durable++) {
        own_case k;
        own_case_make(&k, 4, 1);
        b2_frame *f;
        ck_assert_int_eq(b2f_open(&f, k.fd, B2F_RDWR, NULL, NULL, 0), 0);
        char err[256] = "";
        ck_assert_int_eq(b2f_compact_in_place(f, INT64_MAX, durable, err, sizeof err), 0);
        ck_assert(same_file(k.fd, k.before, k.before_len));
        /* past its bound: nothing written */
        ck_assert_int_eq(b2f_move_past_end(f, 100, durable, err, sizeof err), 0);
        ck_assert(same_file(k.fd, k.before, k.before_len));
        ck_assert_int_eq(b2f_move_past_end(f, INT64_MAX, durable, err, sizeof err), 1);
        check_frame(f, &k.m, "moved past its end, as the frame shows it");
        size_t moved_len;
        uint8_t *moved = file_bytes(k.fd, &moved_len);
        b2f_stat st;
        b2f_stat_get(f, &st);
        ck_assert_int_ge(st.file_len, (int64_t)k.before_len + (int64_t)k.want_len / 2);
        ck_assert_int_eq(b2f_compact_in_place(f, INT64_MAX, durable, err, sizeof err), 1);
        ck_assert_msg(same_file(k.fd, k.want_bytes, k.want_len), "moved and compacted in "
                      "place: not what compaction into a new file makes");
        check_frame(f, &k.m, "moved, then compacted in place");
        b2f_close(f);
        check_file(k.fd, &k.m, "moved, then compacted in place");
        crash_each_own_write(k.before, k.before_len, &k.m, b2f_move_past_end, durable, NULL, 0);
        /* and the compaction after it, stopped at each of its writes */
        crash_each_own_write(moved, moved_len, &k.m, b2f_compact_in_place, durable,
                             k.want_bytes, k.want_len);
        free(moved);
        own_case_free(&k);
    }
}
END_TEST

/* A frame that has no dead space in front of its chunks (committed once, or appended to)
 * is left as it is. */
START_TEST(compact_in_place_refused)
{
    int fd = tmpfd();
    b2_frame *f = new_frame(fd, B2_ZSTD, "shuffle", 4, 8192);
    model m = {0};
    uint8_t src[20000];
    tu_fill_float_series(src, sizeof src, 41);
    append(f, &m, src, 8192);
    commit(f);
    append(f, &m, src + 8192, 8192);
    commit(f);
    size_t len;
    uint8_t *b = file_bytes(fd, &len);
    ck_assert_int_eq(b2f_compact_in_place(f, INT64_MAX, 0, NULL, 0), 0);
    ck_assert(same_file(fd, b, len));
    b2f_close(f);
    check_file(fd, &m, "left as it was");
    free(b);
    free(m.data);
    close(fd);
}
END_TEST

/* A frame of at most 64 KiB is sealed whole (no table of checksums); one b2fs wrote with a
 * table before, committed again while a chunk of it is damaged, keeps its table instead,
 * so that it still opens and only that chunk's reads fail (found by fuzz_frame). */
START_TEST(small_frames_sealed_whole)
{
    b2f_checksums_default(1, 1);
    for (int damaged = 0; damaged < 2; damaged++) {
        int src = open(tu_data_path("integrity/small-table.b2frame"), O_RDONLY);
        ck_assert(src >= 0);
        int fd = tmpfd();
        copy_fd(src, fd);
        close(src);
        b2_frame *f;
        char err[256] = "";
        ck_assert_int_eq(b2f_open(&f, fd, B2F_RDWR, NULL, err, sizeof err), 0);
        b2f_integrity ig;
        b2f_integrity_get(f, &ig);
        ck_assert_int_eq(ig.sealed, B2F_SEALED);   /* as written before */
        b2f_stat st;
        b2f_stat_get(f, &st);
        ck_assert_int_eq(st.nchunks, 3);
        uint8_t *want[3];
        int32_t len[3];
        b2_dctx *ctx = b2_dctx_new();
        for (int64_t n = 0; n < 3; n++) {
            uint64_t off;
            ck_assert_int_eq(b2f_chunk_span(f, n, &off, &len[n]), 0);
            want[n] = malloc((size_t)len[n]);
            ck_assert_int_eq(b2f_read_chunk(f, ctx, n, want[n], (size_t)len[n]), len[n]);
        }
        if (damaged) {   /* a byte near the end of chunk 1: in its last block */
            int64_t at, next;
            int summed;
            ck_assert_int_eq(b2f_chunk_where(f, 1, &at, &summed), 0);
            ck_assert_int_eq(b2f_chunk_where(f, 2, &next, &summed), 0);
            uint8_t byte;
            ck_assert_int_eq(pread(fd, &byte, 1, next - 2), 1);
            byte ^= 0x10;
            ck_assert_int_eq(pwrite(fd, &byte, 1, next - 2), 1);
        }
        ck_assert_int_eq(b2f_vlmeta_set(f, "note", "x", 1), 0);
        commit(f);
        b2f_close(f);
        int rc = b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err);
        ck_assert_msg(rc == 0, "reopen (damaged %d): %s (%s)", damaged, b2f_strerror(rc), err);
        b2f_integrity_get(f, &ig);
        ck_assert_int_eq(ig.sealed, (damaged ? B2F_SEALED : B2F_SEALED_WHOLE));
        ck_assert_int_eq(ig.chunks_summed, 3);
        b2f_stat_get(f, &st);
        ck_assert_int_eq(st.nvlmeta, 1);   /* "note"; a table stays hidden */
        for (int64_t n = 0; n < 3; n++) {
            uint8_t *buf = malloc((size_t)len[n]);
            rc = b2f_read_chunk(f, ctx, n, buf, (size_t)len[n]);
            if (damaged && n == 1) {
                ck_assert_int_eq(rc, B2F_EDAMAGED);
            } else {
                ck_assert_int_eq(rc, len[n]);
                ck_assert_mem_eq(buf, want[n], (size_t)len[n]);
            }
            free(buf);
            free(want[n]);
        }
        b2_dctx_free(ctx);
        b2f_close(f);
        close(fd);
    }
}
END_TEST

static Suite *write_suite(void)
{
    Suite *s = suite_create("frame write");
    TCase *tc = tcase_create("write");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, codecs_and_filters);
    tcase_add_test(tc, edits);
    tcase_add_test(tc, meta_and_vlmeta);
    tcase_add_test(tc, params);
    tcase_add_test(tc, variable_chunks);
    tcase_add_test(tc, crash_consistency);
    tcase_add_test(tc, pending_commit);
    tcase_add_test(tc, pending_crash);
    tcase_add_test(tc, concurrent_readers);
    tcase_add_test(tc, refresh_sees_other_writer);
    tcase_add_test(tc, open_during_commit);
    tcase_add_test(tc, written_frames);
    tcase_add_test(tc, encode_chunk);
    tcase_add_test(tc, update_stored);
    tcase_add_test(tc, small_frames_sealed_whole);
    tcase_add_test(tc, compact_in_place);
    tcase_add_test(tc, own_file_durable);
    tcase_add_test(tc, move_past_end);
    tcase_add_test(tc, compact_in_place_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(write_suite());
}
