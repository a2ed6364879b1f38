/* Unit tests of fs/ that need no mount: option values, the name mapping (suffixes,
 * shadowing, temporary names, symlinks never followed), the block cache's bound, its
 * page runs and room reserved in it, and read-ahead into it. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/options.h"
#include "fs/paths.h"
#include "fs/bcache.h"
#include "fs/node.h"
#include "fs/read.h"
#include "fs/pagerun.h"
#include "tests/lib/testutil.h"

START_TEST(sizes)
{
    ck_assert_int_eq(b2fs_parse_size("0"), 0);
    ck_assert_int_eq(b2fs_parse_size("4096"), 4096);
    ck_assert_int_eq(b2fs_parse_size("64K"), 65536);
    ck_assert_int_eq(b2fs_parse_size("1M"), 1 << 20);
    ck_assert_int_eq(b2fs_parse_size("2G"), (int64_t)2 << 30);
    ck_assert_int_eq(b2fs_parse_size("3k"), 3072);
    const char *bad[] = {"", "x", "1Q", "-5", "1MM", "M", "1 M", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(b2fs_parse_size(bad[i]) < 0, "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(params)
{
    b2f_params p;
    const char *why = NULL;
    char text[64];
    b2f_params_default(&p);
    ck_assert_int_eq(b2fs_param_set(&p, "codec", "lz4hc", '+', &why), 0);
    ck_assert_int_eq(p.cp.codec, B2_LZ4HC);
    ck_assert_int_eq(b2fs_param_set(&p, "codec", "snappy", '+', &why), -1);
    ck_assert_ptr_nonnull(why);
    ck_assert_int_eq(p.cp.codec, B2_LZ4HC);
    ck_assert_int_eq(b2fs_param_set(&p, "clevel", "9", '+', &why), 0);
    ck_assert_int_eq(p.cp.clevel, 9);
    ck_assert_int_eq(b2fs_param_set(&p, "clevel", "10", '+', &why), -1);
    ck_assert_int_eq(b2fs_param_set(&p, "clevel", "3x", '+', &why), -1);
    ck_assert_int_eq(b2fs_param_set(&p, "filters", "delta+shuffle", '+', &why), 0);
    ck_assert_int_eq(b2_filters_format(p.cp.filters, p.cp.filters_meta, ',', text, sizeof text), 0);
    ck_assert_str_eq(text, "delta,shuffle");
    ck_assert_int_eq(b2fs_param_set(&p, "filters", "trunc:20,shuffle", ',', &why), 0);
    ck_assert_int_eq(b2_filters_format(p.cp.filters, p.cp.filters_meta, ',', text, sizeof text), 0);
    ck_assert_str_eq(text, "trunc:20,shuffle");
    ck_assert_int_eq(b2fs_param_set(&p, "filters", "shuffle+bogus", '+', &why), -1);
    ck_assert_int_eq(b2fs_param_set(&p, "typesize", "0", '+', &why), -1);
    ck_assert_int_eq(b2fs_param_set(&p, "typesize", "256", '+', &why), -1);
    ck_assert_int_eq(b2fs_param_set(&p, "typesize", "4", '+', &why), 0);
    ck_assert_int_eq(p.cp.typesize, 4);
    ck_assert_int_eq(b2fs_param_set(&p, "chunksize", "256K", '+', &why), 0);
    ck_assert_int_eq(p.chunksize, 262144);
    ck_assert_int_eq(b2fs_param_set(&p, "chunksize", "100", '+', &why), -1);
    ck_assert_int_eq(b2fs_param_set(&p, "blocksize", "0", '+', &why), 0);
    ck_assert_int_eq(b2fs_param_set(&p, "blocksize", "8", '+', &why), -1);
    ck_assert_int_eq(b2fs_param_set(&p, "nosuch", "1", '+', &why), -1);
}
END_TEST

START_TEST(names)
{
    char shown[300];
    ck_assert_int_eq(name_kind("a.b2frame", shown, sizeof shown), B2FS_FRAME);
    ck_assert_str_eq(shown, "a");
    ck_assert_int_eq(name_kind("run.f32.b2f", shown, sizeof shown), B2FS_FRAME);
    ck_assert_str_eq(shown, "run.f32");
    ck_assert_int_eq(name_kind("x.b2nd", shown, sizeof shown), B2FS_FRAME);
    ck_assert_str_eq(shown, "x.npy");
    ck_assert_int_eq(name_kind("x.blp", shown, sizeof shown), B2FS_BLP);
    ck_assert_int_eq(name_kind(".b2frame", shown, sizeof shown), B2FS_PLAIN);
    ck_assert_int_eq(name_kind("notes.txt", shown, sizeof shown), B2FS_PLAIN);
    ck_assert_str_eq(shown, "notes.txt");
    char b[300];
    ck_assert_int_eq(name_backing(b, sizeof b, "y", "a.b2f"), 0);
    ck_assert_str_eq(b, "y.b2f");
    ck_assert_int_eq(name_backing(b, sizeof b, "y.npy", "x.b2nd"), 0);
    ck_assert_str_eq(b, "y.b2nd");
    ck_assert_int_eq(name_backing(b, sizeof b, "y.txt", "x.b2nd"), -EXDEV);
    ck_assert_int_eq(name_backing(b, sizeof b, "y.txt", NULL), 0);
    ck_assert_str_eq(b, "y.txt");
    char al[8][300];
    ck_assert_int_eq(name_aliases("t.npy", al, 8), 5);
    ck_assert_str_eq(al[2], "t.b2nd");
    ck_assert_int_eq(name_aliases("t", al, 8), 4);
    ck_assert(name_is_temp(".b2fs-tmp-12-3"));
    ck_assert(!name_is_temp("b2fs-tmp"));
    char out[300], longname[300];
    memset(longname, 'a', 250);
    longname[250] = 0;
    ck_assert_int_eq(name_with_suffix(out, sizeof out, "x", ".b2frame"), 0);
    ck_assert_str_eq(out, "x.b2frame");
    ck_assert_int_eq(name_with_suffix(out, sizeof out, longname, ".b2frame"), -ENAMETOOLONG);
}
END_TEST

static char tmpl[64];

static void put(const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpl, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void make_tree(void)
{
    strcpy(tmpl, "/tmp/b2fs-test-fs.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    put("x", "plain");
    put("x.b2frame", "frame");
    put("y.b2f", "frame");
    put("y.b2nd", "frame");
    put("w.b2nd", "array");
    put("w.npy", "plain");
    put("v.npy.b2frame", "frame");
    put("v.b2nd", "array");
    put("z.blp", "bloscpack");
    put(".b2fs-tmp-1-1", "temp");
    put(".b2fs-tmp-999999999-1", "stale temp");   /* no such process */
    char old[128];
    snprintf(old, sizeof old, "%s/.b2fs-tmp-999999999-1", tmpl);
    struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    ck_assert_int_eq(utimensat(AT_FDCWD, old, ts, 0), 0);
    char p[128];
    snprintf(p, sizeof p, "%s/d.b2frame", tmpl);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/sub", tmpl);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    put("sub/file", "inner");
    snprintf(p, sizeof p, "%s/l.b2frame", tmpl);
    ck_assert_int_eq(symlink("/etc/passwd", p), 0);
    snprintf(p, sizeof p, "%s/s", tmpl);
    ck_assert_int_eq(symlink("sub", p), 0);
    b2fs_cfg.rootfd = open(tmpl, O_PATH | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(b2fs_cfg.rootfd, 0);
}

static void remove_tree(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
    ck_assert_int_eq(system(cmd), 0);
    close(b2fs_cfg.rootfd);
}

/* "name " or, where the backing name differs, "name=backing " */
static int collect(void *ctx, const char *name, const char *backing, ino_t ino,
                   unsigned char type)
{
    strcat(ctx, name);
    if (strcmp(name, backing)) {
        strcat(ctx, "=");
        strcat(ctx, backing);
    }
    strcat(ctx, " ");
    return 0;
}

static void expect(const char *path, int rc, int kind, const char *name)
{
    b2fs_loc loc;
    int r = loc_resolve(path, &loc);
    ck_assert_msg(r == rc, "%s: rc %d, expected %d", path, r, rc);
    if (r == 0) {
        ck_assert_msg(loc.kind == kind, "%s: kind %d, expected %d", path, loc.kind, kind);
        if (name)
            ck_assert_str_eq(loc.name, name);
        loc_done(&loc);
    }
}

START_TEST(mapping)
{
    make_tree();
    char list[1024] = "";
    int dfd = loc_open_dir("/");
    ck_assert_int_ge(dfd, 0);
    ck_assert_int_eq(dir_list(dfd, collect, list), 0);
    /* x.b2frame shadows x; an array w.b2nd shows as w.npy and shadows a plain w.npy,
     * v.npy.b2frame shadows the array v.b2nd; temporary names never show; each with its
     * backing name where that differs (a directory and a symlink named d.b2frame and
     * l.b2frame are themselves) */
    ck_assert_str_eq(list, "d.b2frame l.b2frame s sub "
                           "v.npy=v.npy.b2frame w.npy=w.b2nd x=x.b2frame y=y.b2f "
                           "y.npy=y.b2nd z=z.blp ");

    char stale[128];
    snprintf(stale, sizeof stale, "%s/.b2fs-tmp-999999999-1", tmpl);
    ck_assert_msg(access(stale, F_OK) != 0, "a stale temporary file is removed by a listing");
    snprintf(stale, sizeof stale, "%s/.b2fs-tmp-1-1", tmpl);
    ck_assert_msg(access(stale, F_OK) == 0, "a temporary file of a live process stays");

    expect("/x", 0, B2FS_FRAME, "x.b2frame");
    expect("/y", 0, B2FS_FRAME, "y.b2f");
    expect("/z", 0, B2FS_BLP, "z.blp");
    expect("/x.b2frame", 0, B2FS_NONE, NULL);
    expect("/y.b2nd", 0, B2FS_NONE, NULL);
    expect("/y.npy", 0, B2FS_FRAME, "y.b2nd");
    expect("/w.npy", 0, B2FS_FRAME, "w.b2nd");
    expect("/v.npy", 0, B2FS_FRAME, "v.npy.b2frame");
    expect("/d.b2frame", 0, B2FS_PLAIN, "d.b2frame");
    expect("/l", 0, B2FS_NONE, NULL);             /* a symlink is never a frame */
    expect("/l.b2frame", 0, B2FS_PLAIN, "l.b2frame");
    expect("/sub/file", 0, B2FS_PLAIN, "file");
    expect("/s/file", -ENOTDIR, 0, NULL);         /* no walking through a symlink */
    expect("/.b2fs-tmp-1-1", 0, B2FS_NONE, NULL);
    expect("/nosuch/a", -ENOENT, 0, NULL);
    expect("/../etc/passwd", -ENOENT, 0, NULL);
    expect("/", 0, B2FS_PLAIN, ".");
    remove_tree();
}
END_TEST

/* Blocks of many sizes through a 1 MiB cache: every get returns the bytes put, the
 * cache never holds or touches more than its size, and eviction is least recent first. */
START_TEST(bcache_bound)
{
    const size_t cap = 1 << 20;
    bcache_init(cap);
    uint8_t *src = malloc(cap + 1), *out = malloc(cap + 1);
    ck_assert_ptr_nonnull(src);
    ck_assert_ptr_nonnull(out);
    size_t total = 0;
    for (int k = 0; k < 400; k++) {
        size_t len = 1 + (size_t)(k * 7919u % 300000u);
        tu_fill_random(src, len, (uint64_t)k);
        bcache_put(7, k, k % 5, src, len);
        total += len;
        ck_assert_uint_le(bcache_used(), cap);
        ck_assert_uint_le(bcache_touched(), cap);
        size_t off = (size_t)k * 131 % len, n = len - off;
        ck_assert_msg(bcache_get(7, k, k % 5, off, out, n), "block %d missing", k);
        ck_assert_msg(memcmp(out, src + off, n) == 0, "block %d differs", k);
        ck_assert(!bcache_get(7, k, k % 5, off, out, n + 1)); /* past its end */
        ck_assert(!bcache_get(8, k, k % 5, 0, out, 1));       /* other generation */
    }
    ck_assert_uint_gt(total, 40 * cap);

    /* a 100 KiB block kept in use survives a stream of others; an unused one does not */
    tu_fill_random(src, 100000, 1000);
    bcache_put(9, 0, 0, src, 100000);
    bcache_put(9, 1, 0, src, 100000);
    for (int k = 0; k < 40; k++) {
        bcache_put(9, 100 + k, 0, src, 50000);
        ck_assert(bcache_get(9, 0, 0, 99990, out, 10));
    }
    ck_assert(memcmp(out, src + 99990, 10) == 0);
    ck_assert(!bcache_get(9, 1, 0, 0, out, 1));

    /* the same key again changes nothing; a block larger than the cache is not kept */
    size_t before = bcache_used();
    bcache_put(9, 0, 0, src, 100000);
    ck_assert_uint_eq(bcache_used(), before);
    bcache_put(9, 2, 0, src, cap + 1);
    ck_assert(!bcache_get(9, 2, 0, 0, out, 1));
    ck_assert(bcache_get(9, 0, 0, 0, out, 100000));

    bcache_shutdown();
    ck_assert_uint_eq(bcache_used(), 0);
    bcache_put(9, 3, 0, src, 10);
    ck_assert(!bcache_get(9, 3, 0, 0, out, 10));

    /* bcache_take: a copy short of the block's end keeps it, one to its end frees it,
     * and the next block reuses its pages: a stream touches one block's worth */
    bcache_init(cap);
    tu_fill_random(src, 100000, 1001);
    bcache_put(10, 0, 0, src, 100000);
    ck_assert(bcache_take(10, 0, 0, 0, out, 50000));
    ck_assert(bcache_get(10, 0, 0, 50000, out, 10));
    ck_assert(bcache_take(10, 0, 0, 50000, out, 50000));
    ck_assert(memcmp(out, src + 50000, 50000) == 0);
    ck_assert(!bcache_get(10, 0, 0, 0, out, 1));
    ck_assert_uint_eq(bcache_used(), 0);
    for (int k = 1; k < 100; k++) {
        bcache_put(10, k, 0, src, 100000);
        ck_assert(bcache_take(10, k, 0, 0, out, 100000));
    }
    ck_assert_uint_eq(bcache_used(), 0);
    ck_assert_uint_le(bcache_touched(), (100000 / 8192 + 1) * 8192);
    bcache_shutdown();

    bcache_init(0); /* cache_size=0: nothing is kept */
    bcache_put(9, 4, 0, src, 10);
    ck_assert(!bcache_get(9, 4, 0, 0, out, 10));
    bcache_shutdown();
    free(src);
    free(out);
}
END_TEST

/* Page runs against a model: runs handed out never overlap, the free count is right,
 * fresh pages are used only when no freed run fits, and freed runs merge again. */
START_TEST(pagerun_model)
{
    enum { NP = 300, HELD = 64 };
    static uint32_t meta[3 * NP];
    ck_assert_uint_eq(pagerun_meta_bytes(NP), sizeof meta);
    pagerun_pool p;
    pagerun_init(&p, NP, meta);
    int owner[NP];
    for (int i = 0; i < NP; i++)
        owner[i] = -1;
    uint32_t first[HELD], len[HELD] = { 0 }, used = 0;
    uint64_t rng = 12345;
    for (int step = 0; step < 20000; step++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        int h = (int)(rng >> 33) % HELD;
        if (len[h]) {
            for (uint32_t i = 0; i < len[h]; i++)
                owner[first[h] + i] = -1;
            pagerun_free(&p, first[h], len[h]);
            used -= len[h];
            len[h] = 0;
        } else {
            uint32_t want = 1 + (uint32_t)(rng >> 40) % ((rng >> 20) % 4 ? 12 : 90);
            uint32_t fresh = p.fresh, at = pagerun_alloc(&p, want);
            if (at == PAGERUN_NONE)
                continue;
            ck_assert_uint_le(at + want, NP);
            for (uint32_t i = 0; i < want; i++) {
                ck_assert_msg(owner[at + i] == -1, "page %u handed out twice", at + i);
                owner[at + i] = h;
            }
            /* fresh pages only when every freed run is shorter than want */
            if (p.fresh > fresh)
                for (uint32_t s = 0, run = 0; s < fresh; s++) {
                    run = owner[s] == -1 ? run + 1 : 0;
                    ck_assert_msg(run < want, "fresh pages taken with a run of %u free", run);
                }
            first[h] = at;
            len[h] = want;
            used += want;
        }
        ck_assert_uint_eq(p.nfree, NP - used);
    }
    ck_assert_uint_gt(p.fresh, NP / 2);
    for (int h = 0; h < HELD; h++)
        if (len[h])
            pagerun_free(&p, first[h], len[h]);
    ck_assert_uint_eq(p.nfree, NP);
    ck_assert_uint_eq(pagerun_alloc(&p, NP), 0); /* everything merged into one run */
    ck_assert_uint_eq(pagerun_alloc(&p, 1), PAGERUN_NONE);
    pagerun_free(&p, 0, NP);
    ck_assert_uint_eq(pagerun_alloc(&p, 0), PAGERUN_NONE);
    ck_assert_uint_eq(pagerun_alloc(&p, NP + 1), PAGERUN_NONE);
}
END_TEST

/* Room reserved in the cache: published it is a cached block, cancelled it is free
 * again; room held by a decoder is never evicted, and a key already there wins. */
START_TEST(bcache_reserved)
{
    const size_t cap = 1 << 20, page = 8192;
    bcache_init(cap);
    uint8_t src[3000], out[3000];
    tu_fill_random(src, sizeof src, 5);
    bcache_entry *e;
    uint8_t *room = bcache_reserve(sizeof src, &e);
    ck_assert_ptr_nonnull(room);
    ck_assert(!bcache_get(1, 0, 0, 0, out, 1)); /* not visible before it is published */
    memcpy(room, src, sizeof src);
    bcache_publish(e, 1, 0, 0);
    ck_assert(bcache_get(1, 0, 0, 0, out, sizeof src));
    ck_assert(memcmp(out, src, sizeof src) == 0);
    ck_assert_uint_eq(bcache_used(), page);

    ck_assert_ptr_nonnull(bcache_reserve(100, &e));
    ck_assert_uint_eq(bcache_used(), 2 * page);
    bcache_cancel(e);
    ck_assert_uint_eq(bcache_used(), page);
    bcache_cancel(NULL);

    ck_assert_ptr_nonnull(bcache_reserve(10, &e)); /* the same key published twice */
    bcache_publish(e, 1, 0, 0);
    ck_assert_uint_eq(bcache_used(), page);
    ck_assert(bcache_get(1, 0, 0, 0, out, sizeof src));
    ck_assert(memcmp(out, src, sizeof src) == 0);

    bcache_entry *big;
    ck_assert_ptr_null(bcache_reserve(cap + 1, &big));
    ck_assert_ptr_null(big);
    ck_assert_ptr_nonnull(bcache_reserve(cap - page, &big)); /* the block stays */
    ck_assert(bcache_get(1, 0, 0, 0, out, 1));
    ck_assert_ptr_nonnull(bcache_reserve(page, &e));        /* evicts it */
    ck_assert(!bcache_get(1, 0, 0, 0, out, 1));
    bcache_entry *none;
    ck_assert_ptr_null(bcache_reserve(1, &none)); /* everything is held */
    bcache_cancel(e);
    bcache_cancel(big);
    ck_assert_uint_eq(bcache_used(), 0);
    ck_assert_ptr_nonnull(bcache_reserve(cap, &big));
    bcache_cancel(big);

    /* one-page blocks, the least recent on every other page: a four-page block finds no
     * run after a bounded number of evictions and is refused rather than flush them all */
    for (int k = 0; k < 128; k++)
        bcache_put(2, k, 0, src, 100);
    for (int k = 1; k < 128; k += 2)
        ck_assert(bcache_get(2, k, 0, 0, out, 100));
    ck_assert_ptr_null(bcache_reserve(4 * page, &none));
    int odd = 0, even = 0;
    for (int k = 0; k < 128; k++)
        if (bcache_get(2, k, 0, 0, out, 1))
            *(k % 2 ? &odd : &even) += 1;
    ck_assert_int_eq(odd, 64);
    ck_assert_int_ge(even, 32);
    ck_assert_ptr_nonnull(bcache_reserve(page, &e));
    bcache_cancel(e);
    bcache_shutdown();
}
END_TEST

static b2fs_node *open_backing_node(b2fs_loc *loc);

/* A node for r.b2frame in a new temporary backing directory, its chunks (cs bytes each,
 * 32 KiB blocks, typesize 4) committed, with a 4 MiB block cache. */
static b2fs_node *open_node(const uint8_t *const *chunks, int nchunks, size_t cs, b2fs_loc *loc)
{
    strcpy(tmpl, "/tmp/b2fs-test-fs.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    char path[128];
    snprintf(path, sizeof path, "%s/r.b2frame", tmpl);
    b2f_params p;
    b2f_params_default(&p);
    p.cp.typesize = 4;
    p.cp.blocksize = 32 << 10;
    p.chunksize = (int32_t)cs;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge(fd, 0);
    b2_frame *f;
    char err[200];
    ck_assert_int_eq(b2f_create(&f, fd, &p, 0, NULL, NULL, NULL, NULL, err, sizeof err), 0);
    for (int c = 0; c < nchunks; c++)
        ck_assert_int_eq(b2f_update_chunk(f, NULL, c, chunks[c], cs), 0);
    ck_assert_int_eq(b2f_commit(f, 0, err, sizeof err), 0);
    b2f_close(f);
    close(fd);
    return open_backing_node(loc);
}

/* A node for r.b2frame, already in tmpl, with a 4 MiB block cache. */
static b2fs_node *open_backing_node(b2fs_loc *loc)
{
    b2fs_cfg.backing = tmpl;
    b2fs_cfg.rootfd = open(tmpl, O_PATH | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(b2fs_cfg.rootfd, 0);
    bcache_init(4 << 20);
    ck_assert_int_eq(loc_resolve("/r", loc), 0);
    b2fs_node *n;
    ck_assert_int_eq(node_get("/r", loc, &n), 0);
    return n;
}

static void close_node(b2fs_node *n, b2fs_loc *loc)
{
    node_put(n);
    loc_done(loc);
    bcache_shutdown();
    remove_tree();
}

/* Read-ahead (a NULL destination) decodes a chunk's blocks into the cache only, where a
 * reader then finds them, except those a streaming reader has already asked for; a zero
 * chunk needs nothing. */
START_TEST(readahead_fills_cache)
{
    const size_t cs = 256 << 10;
    uint8_t *data = malloc(cs), *out = malloc(cs), *zeros = calloc(1, cs);
    ck_assert(data && out && zeros);
    tu_fill_float_series(data, cs, 7);
    const uint8_t *chunks[] = { data, zeros };
    b2fs_loc loc;
    b2fs_node *n = open_node(chunks, 2, cs, &loc);
    const b2_chunk_layout *lay;
    ck_assert_int_eq(b2f_chunk_layout(n->frame, 0, &lay), 0);
    int32_t bs = lay->info.blocksize, nblocks = lay->info.nblocks;
    ck_assert_int_eq(bs, 32 << 10);
    ck_assert_int_eq(nblocks, 8);
    ck_assert(!bcache_get(n->gen, 0, 0, 0, out, 1));

    /* blocks a streaming reader has already asked for are left to it */
    n->ra_claimed = 2 * (uint64_t)bs;
    ck_assert_int_eq(read_chunk_part(n, 0, 0, (uint32_t)cs, NULL, READ_AHEAD), 0);
    ck_assert(!bcache_get(n->gen, 0, 0, 0, out, 1));
    ck_assert(!bcache_get(n->gen, 0, 1, 0, out, 1));
    ck_assert(bcache_get(n->gen, 0, 2, 0, out, 1));
    n->ra_claimed = 0;
    ck_assert_int_eq(read_chunk_part(n, 0, 0, (uint32_t)cs, NULL, READ_AHEAD), 0);
    for (int32_t b = 0; b < nblocks; b++) {   /* 8 whole blocks, asserted above */
        ck_assert_msg(bcache_get(n->gen, 0, b, 0, out, (size_t)bs), "block %d not in the cache", b);
        ck_assert(memcmp(out, data + (size_t)b * bs, (size_t)bs) == 0);
    }
    ck_assert_int_eq(read_chunk_part(n, 1, 0, (uint32_t)cs, NULL, READ_AHEAD), 0);
    ck_assert_int_eq(read_chunk_part(n, 0, 1000, 5000, out, READ_KEEP), 0);
    ck_assert(memcmp(out, data + 1000, 5000) == 0);

    /* with an empty cache: a reader that wants part of a block gets it and leaves the
     * whole block in the cache, decoded there; a streaming reader that reaches the
     * block's end leaves nothing */
    bcache_shutdown();
    bcache_init(4 << 20);
    ck_assert_int_eq(read_chunk_part(n, 0, (uint32_t)bs + 7, 100, out, READ_KEEP), 0);
    ck_assert(memcmp(out, data + bs + 7, 100) == 0);
    ck_assert(bcache_get(n->gen, 0, 1, 0, out, (size_t)bs));
    ck_assert(memcmp(out, data + bs, (size_t)bs) == 0);
    ck_assert_int_eq(read_chunk_part(n, 0, 3 * (uint32_t)bs, 10, out, READ_STREAM), 0);
    ck_assert(bcache_get(n->gen, 0, 3, 0, out, (size_t)bs));
    ck_assert(memcmp(out, data + 3 * bs, (size_t)bs) == 0);
    ck_assert_int_eq(read_chunk_part(n, 0, 5 * (uint32_t)bs - 10, 10, out, READ_STREAM), 0);
    ck_assert(memcmp(out, data + 5 * bs - 10, 10) == 0);
    ck_assert(!bcache_get(n->gen, 0, 4, 0, out, 1));
    ck_assert_uint_eq(bcache_used(), 2 * (size_t)bs);

    close_node(n, &loc);
    free(data);
    free(out);
    free(zeros);
}
END_TEST

/* A stored (incompressible, memcpyed) chunk is read as it is, the bytes asked for, and
 * never enters the cache, nor is it read ahead. */
START_TEST(stored_chunks_not_cached)
{
    const size_t cs = 256 << 10;
    uint8_t *data = malloc(cs), *out = malloc(cs);
    ck_assert(data && out);
    tu_fill_random(data, cs, 8);
    const uint8_t *chunks[] = { data };
    b2fs_loc loc;
    b2fs_node *n = open_node(chunks, 1, cs, &loc);
    const b2_chunk_layout *lay;
    ck_assert_int_eq(b2f_chunk_layout(n->frame, 0, &lay), 0);
    ck_assert(lay->info.memcpyed);
    ck_assert_int_eq(read_chunk_part(n, 0, 0, (uint32_t)cs, NULL, READ_AHEAD), 0);
    ck_assert_uint_eq(bcache_used(), 0);
    const uint32_t at[][2] = { { 5, 4096 }, { 40000, 70000 }, { 0, (uint32_t)cs } };
    const int modes[] = { READ_KEEP, READ_STREAM };
    for (size_t i = 0; i < 3; i++)
        for (size_t m = 0; m < 2; m++) {
            memset(out, 0, cs);
            ck_assert_int_eq(read_chunk_part(n, 0, at[i][0], at[i][1], out, modes[m]), 0);
            ck_assert_msg(memcmp(out, data + at[i][0], at[i][1]) == 0, "read %zu differs", i);
                    ck_assert_uint_eq(bcache_used(), 0);
        }
    close_node(n, &loc);

    /* C-Blosc2 gives a stored chunk one block of the whole chunk: parts of it still read
     * right, and nothing is kept */
    strcpy(tmpl, "/tmp/b2fs-test-fs.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    size_t flen;
    uint8_t *file = tu_read_file(tu_data_path("random-lz45-shuffle-t8-c131072.b2frame"), &flen);
    ck_assert_ptr_nonnull(file);
    char path[128];
    snprintf(path, sizeof path, "%s/r.b2frame", tmpl);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, file, flen), (ssize_t)flen);
    close(fd);
    free(file);
    n = open_backing_node(&loc);
    ck_assert_int_eq(b2f_chunk_layout(n->frame, 0, &lay), 0);
    ck_assert(lay->info.memcpyed);
    ck_assert_int_eq(lay->info.blocksize, lay->info.nbytes);
    size_t nb = (size_t)lay->info.nbytes;
    b2_dctx *dctx = b2_dctx_new();
    ck_assert_int_eq(b2f_read_chunk(n->frame, dctx, 0, data, cs), (int)nb);
    b2_dctx_free(dctx);
    ck_assert_int_eq(read_chunk_part(n, 0, 1000, 4096, out, READ_KEEP), 0);
    ck_assert(memcmp(out, data + 1000, 4096) == 0);
    ck_assert_int_eq(read_chunk_part(n, 0, 0, (uint32_t)nb, out, READ_STREAM), 0);
    ck_assert(memcmp(out, data, nb) == 0);
    ck_assert_uint_eq(bcache_used(), 0);
    close_node(n, &loc);
    free(data);
    free(out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fs");
    TCase *tc = tcase_create("fs");
    tcase_add_test(tc, sizes);
    tcase_add_test(tc, params);
    tcase_add_test(tc, names);
    tcase_add_test(tc, mapping);
    tcase_add_test(tc, bcache_bound);
    tcase_add_test(tc, pagerun_model);
    tcase_add_test(tc, bcache_reserved);
    tcase_add_test(tc, readahead_fills_cache);
    tcase_add_test(tc, stored_chunks_not_cached);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
