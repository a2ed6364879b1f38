/* Check tests of b2f_rechunk_into: every frame of variable-size chunks under
 * tests/data/variable, and of chunks of variable-length blocks under tests/data/vlblocks
 * (both made by C-Blosc2), copied with fixed-size chunks decodes to its
 * manifest sha256, keeps its metalayers and vlmetalayers, and has zero runs as zero
 * special chunks; staged changes are included; bad input is refused.
 *
 * With B2F_WRITE_DIR set, the copies are kept there (for checks with C-Blosc2 by hand). */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frame/frame.h"
#include "tests/lib/testutil.h"

static int tmpfd(void)
{
    char path[] = "/tmp/b2fs-rc-XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    unlink(path);
    return fd;
}

static b2_frame *open_path(const char *path, int mode, int *fd)
{
    *fd = open(path, mode == B2F_RDWR ? O_RDWR : O_RDONLY);
    ck_assert_msg(*fd >= 0, "%s: cannot open", path);
    b2_frame *f;
    char err[256] = "";
    int rc = b2f_open(&f, *fd, mode, NULL, err, sizeof err);
    ck_assert_msg(rc == 0, "%s: %s (%s)", path, b2f_strerror(rc), err);
    return f;
}

/* A private copy of a data file, open read-write (fixtures stay untouched). */
static int copy_of(const char *name)
{
    size_t len;
    uint8_t *data = tu_read_file(tu_data_path(name), &len);
    ck_assert_msg(data != NULL, "%s: cannot read", name);
    int fd = tmpfd();
    ck_assert(pwrite(fd, data, len, 0) == (ssize_t)len);
    free(data);
    return fd;
}

static uint8_t *contents(b2_frame *f, size_t *len)
{
    b2f_stat st;
    b2f_stat_get(f, &st);
    uint8_t *buf = malloc((size_t)st.nbytes + 1);
    b2_dctx *d = b2_dctx_new();
    ck_assert(b2f_pread(f, d, buf, (size_t)st.nbytes, 0) == (ssize_t)st.nbytes);
    b2_dctx_free(d);
    *len = (size_t)st.nbytes;
    return buf;
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static void keep_copy(int fd, const char *name, int32_t cs)
{
    const char *dir = getenv("B2F_WRITE_DIR");
    if (!dir || !*dir)
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/rechunked-%d-%s", dir, (int)cs, name);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert(out >= 0);
    uint8_t buf[65536];
    ssize_t got;
    for (off_t off = 0; (got = pread(fd, buf, sizeof buf, off)) > 0; off += got)
        ck_assert(write(out, buf, (size_t)got) == got);
    close(out);
}

/* The copy of src (open) in fd: same contents (sha256 want), same metalayers and
 * vlmetalayers, chunks of cs bytes (want_cs > 0: exactly that), zero chunks special. */
static void check_copy(b2_frame *src, int fd, const char *want, int32_t want_cs, const char *what)
{
    b2_frame *f;
    char err[256] = "";
    int rc = b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err);
    ck_assert_msg(rc == 0, "%s: copy does not open: %s (%s)", what, b2f_strerror(rc), err);
    b2f_stat st, ss;
    b2f_stat_get(f, &st);
    b2f_stat_get(src, &ss);
    ck_assert_msg(st.chunksize > 0, "%s: copy has variable chunks", what);
    if (want_cs > 0)
        ck_assert_int_eq(st.chunksize, want_cs);
    ck_assert_int_eq(st.nbytes, ss.nbytes);
    ck_assert_int_eq(st.typesize, ss.typesize);
    ck_assert_int_eq(st.clevel, ss.clevel);
    ck_assert_int_eq(st.codec, ss.codec);
    ck_assert(memcmp(st.filters, ss.filters, sizeof st.filters) == 0);
    ck_assert_int_eq(st.blocksize, 0);
    size_t len;
    uint8_t *data = contents(f, &len);
    char hex[65];
    tu_sha256_hex(data, len, hex);
    ck_assert_msg(strcmp(hex, want) == 0, "%s: sha256 %s, want %s", what, hex, want);
    for (int64_t n = 0; n < st.nchunks; n++) {
        uint64_t off;
        int32_t nb;
        ck_assert_int_eq(b2f_chunk_span(f, n, &off, &nb), 0);
        ck_assert_msg(n == st.nchunks - 1 || nb == st.chunksize, "%s: chunk %lld holds %d", what,
                      (long long)n, (int)nb);
        if (all_zero(data + off, (size_t)nb) && nb % st.typesize == 0)
            ck_assert_msg(b2f_chunk_special(f, n) == B2_SPECIAL_ZERO,
                          "%s: zero chunk %lld not special", what, (long long)n);
        else
            ck_assert_int_eq(b2f_chunk_special(f, n), B2_SPECIAL_NONE);
    }
    free(data);
    ck_assert_int_eq(b2f_meta_count(f), b2f_meta_count(src));
    for (int i = 0; i < b2f_meta_count(src); i++) {
        const char *name = b2f_meta_name(src, i);
        const uint8_t *a, *b;
        size_t la, lb;
        ck_assert_int_eq(b2f_meta_get(src, name, &a, &la), 0);
        ck_assert_msg(b2f_meta_get(f, name, &b, &lb) == 0, "%s: metalayer %s lost", what, name);
        ck_assert(la == lb && memcmp(a, b, la) == 0);
    }
    ck_assert_int_eq(b2f_vlmeta_count(f), b2f_vlmeta_count(src));
    for (int i = 0; i < b2f_vlmeta_count(src); i++) {
        const char *name = b2f_vlmeta_name(src, i);
        uint8_t *a, *b;
        size_t la, lb;
        ck_assert_int_eq(b2f_vlmeta_get(src, name, &a, &la), 0);
        ck_assert_msg(b2f_vlmeta_get(f, name, &b, &lb) == 0, "%s: vlmetalayer %s lost", what, name);
        ck_assert(la == lb && memcmp(a, b, la) == 0);
        free(a);
        free(b);
    }
    b2f_close(f);
}

/* Whether two files hold the same bytes. */
static int same_bytes(int a, int b)
{
    struct stat sa, sb;
    if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0 || sa.st_size != sb.st_size)
        return 0;
    size_t n = (size_t)sa.st_size;
    uint8_t *pa = malloc(n + 1), *pb = malloc(n + 1);
    int same = pa && pb && pread(a, pa, n, 0) == (ssize_t)n && pread(b, pb, n, 0) == (ssize_t)n &&
               memcmp(pa, pb, n) == 0;
    free(pa);
    free(pb);
    return same;
}

static int32_t largest_chunk(b2_frame *f)
{
    b2f_stat st;
    b2f_stat_get(f, &st);
    int32_t big = 0;
    for (int64_t n = 0; n < st.nchunks; n++) {
        uint64_t off;
        int32_t nb;
        ck_assert_int_eq(b2f_chunk_span(f, n, &off, &nb), 0);
        if (nb > big)
            big = nb;
    }
    return big;
}

/* Every C-Blosc2 frame of variable-size chunks or variable-length blocks, with the
 * default chunk size and with small ones (chunks straddling the old boundaries, partial
 * items included). */
static const char *const variable_dirs[] = {"variable", "vlblocks"};

START_TEST(variable_fixtures)
{
    const char *dir = variable_dirs[_i];
    tu_manifest *m = tu_manifest_load(dir);
    ck_assert_msg(m && m->nrows >= 4, "tests/data/%s/MANIFEST.tsv missing", dir);
    for (int r = 0; r < m->nrows; r++) {
        const char *file = tu_manifest_get(m, r, "file");
        const char *sha = tu_manifest_get(m, r, "sha256");
        char name[300];
        snprintf(name, sizeof name, "%s/%s", dir, file);
        int sfd;
        b2_frame *src = open_path(tu_data_path(name), B2F_RDONLY, &sfd);
        b2f_stat ss;
        b2f_stat_get(src, &ss);
        ck_assert_msg(ss.chunksize == 0, "%s: not a frame of variable-size chunks", file);
        const int32_t sizes[] = {0, 4096, 1000, 3 << 20};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            int fd = tmpfd();
            char err[256] = "", what[400];
            snprintf(what, sizeof what, "%s at %d", file, (int)sizes[i]);
            int rc = b2f_rechunk_into(src, fd, sizes[i], 1, err, sizeof err);
            ck_assert_msg(rc == 0, "%s: %s (%s)", what, b2f_strerror(rc), err);
            int32_t want = sizes[i];
            if (!want) {   /* the largest chunk, at least 64 KiB, whole items */
                int32_t ts = ss.typesize, big = largest_chunk(src);
                want = big > 65536 ? big : 65536;
                want = (want + ts - 1) / ts * ts;
            }
            check_copy(src, fd, sha, want, what);
            if (i == 0) { /* blocks coded by more threads: the same file */
                int fd3 = tmpfd();
                ck_assert_int_eq(b2f_rechunk_into(src, fd3, 0, 3, err, sizeof err), 0);
                ck_assert_msg(same_bytes(fd, fd3), "%s: 3 threads wrote another file", what);
                close(fd3);
            }
            keep_copy(fd, file, sizes[i]);
            close(fd);
        }
        b2f_close(src);
        close(sfd);
    }
    tu_manifest_free(m);
}
END_TEST

/* Frames of fixed-size chunks (with metalayers and vlmetalayers, and an empty one) get
 * another chunk size. */
START_TEST(fixed_frames)
{
    const char *files[] = {"meta-lz4-t4.b2frame", "special-zstd-t8-c262144.b2frame",
                           "b2fs-written/empty-lz4.b2frame"};
    const char *dirs[] = {".", ".", "b2fs-written"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        tu_manifest *m = tu_manifest_load(dirs[i]);
        ck_assert(m);
        const char *base = strrchr(files[i], '/') ? strrchr(files[i], '/') + 1 : files[i];
        const char *sha = NULL;
        for (int r = 0; r < m->nrows; r++)
            if (strcmp(tu_manifest_get(m, r, "file"), base) == 0)
                sha = tu_manifest_get(m, r, "sha256");
        ck_assert_msg(sha, "%s not in its manifest", files[i]);
        int sfd;
        b2_frame *src = open_path(tu_data_path(files[i]), B2F_RDONLY, &sfd);
        int fd = tmpfd();
        char err[256] = "";
        int rc = b2f_rechunk_into(src, fd, 100000, 1, err, sizeof err);
        ck_assert_msg(rc == 0, "%s: %s (%s)", files[i], b2f_strerror(rc), err);
        check_copy(src, fd, sha, 100000, files[i]);
        close(fd);
        b2f_close(src);
        close(sfd);
        tu_manifest_free(m);
    }
}
END_TEST

/* Changes staged in the source and not committed are in the copy. */
START_TEST(staged_changes)
{
    int sfd = copy_of("variable/var-zstd5-shuffle-t8-meta.b2frame");
    b2_frame *src;
    ck_assert_int_eq(b2f_open(&src, sfd, B2F_RDWR, NULL, NULL, 0), 0);
    uint8_t chunk[24000];
    tu_fill_float_series(chunk, sizeof chunk, 7);
    ck_assert_int_eq(b2f_update_chunk(src, NULL, 1, chunk, sizeof chunk), 0);
    ck_assert_int_eq(b2f_vlmeta_set(src, "added", "xyz", 3), 0);
    size_t len;
    uint8_t *want = contents(src, &len);
    char hex[65];
    tu_sha256_hex(want, len, hex);
    free(want);
    int fd = tmpfd();
    char err[256] = "";
    ck_assert_int_eq(b2f_rechunk_into(src, fd, 0, 1, err, sizeof err), 0);
    check_copy(src, fd, hex, 0, "staged");
    close(fd);
    b2f_close(src);
    close(sfd);
}
END_TEST

START_TEST(bad_input)
{
    int sfd;
    b2_frame *src = open_path(tu_data_path("variable/var-lz45-bitshuffle-t4.b2frame"), B2F_RDONLY,
                              &sfd);
    char err[256];
    int fd = tmpfd();
    ck_assert_int_eq(b2f_rechunk_into(src, fd, -1, 1, err, sizeof err), B2F_ERANGE);
    ck_assert_int_eq(b2f_rechunk_into(src, fd, B2_MAX_NBYTES + 1, 1, err, sizeof err), B2F_ERANGE);
    ck_assert(pwrite(fd, "x", 1, 0) == 1);   /* the output must be empty */
    err[0] = 0;
    ck_assert_int_eq(b2f_rechunk_into(src, fd, 0, 1, err, sizeof err), B2F_ERANGE);
    ck_assert(err[0]);
    close(fd);
    b2f_close(src);
    close(sfd);

    /* Bloscpack: read only, not a frame */
    src = open_path(tu_data_path("bloscpack/f64-lz4-c262144-off-adler32.blp"), B2F_RDONLY,
                    &sfd);
    fd = tmpfd();
    ck_assert_int_eq(b2f_rechunk_into(src, fd, 0, 1, err, sizeof err), B2F_ERDONLY);
    close(fd);
    b2f_close(src);
    close(sfd);

    /* a chunk whose data is damaged: the error names where */
    sfd = copy_of("variable/var-lz45-bitshuffle-t4.b2frame");
    uint8_t *raw;
    int32_t cb;
    ck_assert_int_eq(b2f_open(&src, sfd, B2F_RDONLY, NULL, NULL, 0), 0);
    ck_assert_int_eq(b2f_read_raw_chunk(src, 1, &raw, &cb), 0);
    b2f_close(src);
    /* find chunk 1 in the file and overwrite its block data with garbage */
    size_t flen;
    uint8_t *file = tu_read_file(tu_data_path("variable/var-lz45-bitshuffle-t4.b2frame"), &flen);
    uint8_t *at = memmem(file, flen, raw, (size_t)cb);
    ck_assert(at);
    off_t pos = (off_t)(at - file) + cb / 2;
    uint8_t junk[64];
    memset(junk, 0xA5, sizeof junk);
    ck_assert(pwrite(sfd, junk, sizeof junk, pos) == (ssize_t)sizeof junk);
    free(file);
    free(raw);
    ck_assert_int_eq(b2f_open(&src, sfd, B2F_RDONLY, NULL, NULL, 0), 0);
    fd = tmpfd();
    err[0] = 0;
    int rc = b2f_rechunk_into(src, fd, 0, 1, err, sizeof err);
    ck_assert_msg(rc < 0, "damaged chunk copied");
    ck_assert_msg(strstr(err, "at ") != NULL, "error text: %s", err);
    close(fd);
    b2f_close(src);
    close(sfd);
}
END_TEST

static Suite *rechunk_suite(void)
{
    Suite *s = suite_create("frame rechunk");
    TCase *tc = tcase_create("rechunk");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, variable_fixtures, 0,
                        (int)(sizeof variable_dirs / sizeof variable_dirs[0]));
    tcase_add_test(tc, fixed_frames);
    tcase_add_test(tc, staged_changes);
    tcase_add_test(tc, bad_input);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(rechunk_suite());
}
