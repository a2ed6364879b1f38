/* b2frame verify and compact. */
#include "contrib/b2frame.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_REPORTED 20   /* bad chunks named per file; the rest are counted */

static const char verify_usage[] =
    "Usage: b2frame verify [-q] FILE...\n"
    "Checks each FILE (a frame, a Bloscpack file or a Blosc chunk): the header, every index\n"
    "offset, every chunk decoded, and every metalayer and vlmetalayer. In a frame b2fs\n"
    "wrote, also the fingerprint of its header, index and trailer and every chunk's\n"
    "checksums (per block); in a Bloscpack file, its checksums. Names each problem on\n"
    "stderr (a checksum mismatch with its chunk and block) and prints 'FILE: ok' for a sound\n"
    "file unless -q, with how many chunks checksums covered. A check that fails is made\n"
    "again under a shared lock on FILE, which waits for a b2fs commit in progress (another\n"
    "host's, on a cluster file system), and only its problems are named. Exit status 0\n"
    "only when every FILE is sound. On a terminal, stderr shows progress when it takes\n"
    "over a second; -q: no progress.\n";

static const char compact_usage[] =
    "Usage: b2frame compact [-q] FILE...\n"
    "Rewrites each frame without the space that replaced chunks and old indexes left\n"
    "behind: into a temporary file next to it, synced, then renamed over it, so a crash\n"
    "leaves either the old or the new file whole. Contents, metalayers and vlmetalayers\n"
    "are kept. On a terminal, stderr shows progress when it takes over a second; -q: no\n"
    "progress.\n";

/* Checks chunk n against its checksums: 1 checked, 0 none, -1 a mismatch (reported). */
static int verify_sums(const bt_input *in, int64_t n, int64_t *nbad)
{
    int32_t bad;
    int rc = b2f_chunk_verify(in->frame, n, &bad);
    if (rc >= 0)
        return rc;
    if (++*nbad > MAX_REPORTED)
        return -1;
    if (rc == B2F_EDAMAGED && bad == 0)
        bt_error(in->path, "chunk %lld, head: %s", (long long)n, b2f_strerror(rc));
    else if (rc == B2F_EDAMAGED)
        bt_error(in->path, "chunk %lld, block %d: %s", (long long)n, (int)bad - 1,
                 b2f_strerror(rc));
    else
        bt_error(in->path, "chunk %lld: %s", (long long)n, b2f_strerror(rc));
    return -1;
}

static int verify_chunks(const bt_input *in, b2_dctx *ctx, int64_t *nbad, int64_t *nsummed)
{
    b2f_stat st;
    b2f_stat_get(in->frame, &st);
    uint8_t *buf = NULL;
    size_t cap = 0;
    uint64_t expect_off = 0;
    bt_progress prog;
    bt_progress_begin(&prog, "verify", st.nbytes);
    for (int64_t n = 0; n < st.nchunks; n++) {
        uint64_t off;
        int32_t len;
        int rc = b2f_chunk_span(in->frame, n, &off, &len);
        if (rc == 0 && off != expect_off)
            rc = B2F_EINDEX;
        if (rc == 0 && (size_t)len > cap) {
            free(buf);
            cap = (size_t)len;
            buf = malloc(cap);
            if (!buf) {
                bt_error(in->path, "out of memory for %zu bytes", cap);
                return -1;
            }
        }
        int summed = rc == 0 ? verify_sums(in, n, nbad) : 0;
        *nsummed += summed > 0;
        if (summed < 0) {
            expect_off = off + (uint64_t)(len > 0 ? len : 0);
            continue;   /* reported */
        }
        if (rc == 0)
            rc = b2f_read_chunk(in->frame, ctx, n, buf, cap);
        if (rc >= 0 && rc != len) {
            if (++*nbad <= MAX_REPORTED)
                bt_error(in->path, "chunk %lld: decoded %d bytes, the index says %d", (long long)n, rc,
                         (int)len);
        } else if (rc < 0 && ++*nbad <= MAX_REPORTED) {
            bt_error(in->path, "chunk %lld: %s", (long long)n, b2f_strerror(rc));
        }
        expect_off = off + (uint64_t)(len > 0 ? len : 0);
        bt_progress_update(&prog, (int64_t)expect_off);
    }
    bt_progress_end(&prog);
    if (expect_off != (uint64_t)st.nbytes && ++*nbad <= MAX_REPORTED)
        bt_error(in->path, "chunks hold %llu bytes, the header says %lld",
                 (unsigned long long)expect_off, (long long)st.nbytes);
    free(buf);
    return 0;
}

static void ignore_meta(const char *name, const uint8_t *value, size_t len, int vl, int index) {}

static int verify_once(const char *path, int quiet)
{
    bt_input in;
    if (bt_open_input(&in, path, B2F_RDONLY, 1) != BT_OK)
        return BT_FAIL;
    int64_t nbad = 0, nchunks = 1, nsummed = 0;
    b2f_integrity integ = {0};
    b2_dctx *ctx = b2_dctx_new();
    if (!ctx) {
        bt_error(path, "out of memory");
        bt_close_input(&in);
        return BT_FAIL;
    }
    if (in.frame) {
        b2f_stat st;
        b2f_stat_get(in.frame, &st);
        nchunks = st.nchunks;
        b2f_integrity_get(in.frame, &integ);
        if (integ.meta_changed && ++nbad)
            bt_error(path, "metalayers changed since b2fs wrote the frame (rewritten in place by "
                     "another program, or damaged); `b2frame seal` takes them as they are");
        if (verify_chunks(&in, ctx, &nbad, &nsummed) < 0)
            nbad++;
        if (bt_each_meta(&in, 0, ignore_meta) < 0 || bt_each_meta(&in, 1, ignore_meta) < 0)
            nbad++;
    } else {
        uint8_t *dst = malloc(in.info.nbytes ? (size_t)in.info.nbytes : 1);
        int rc = dst ? b2_chunk_decode(ctx, in.chunk, (size_t)in.info.cbytes, dst,
                                       (size_t)in.info.nbytes)
                     : B2E_NOMEM;
        if (rc >= 0 && rc != in.info.nbytes)
            rc = B2E_CORRUPT;
        if (rc < 0) {
            bt_error(path, "chunk: %s", b2_strerror(rc));
            nbad++;
        }
        free(dst);
    }
    b2_dctx_free(ctx);
    bt_close_input(&in);
    if (nbad > MAX_REPORTED)
        bt_error(path, "%lld problems in all", (long long)nbad);
    if (nbad)
        return BT_FAIL;
    if (!quiet && nsummed == 0 && !integ.sealed)
        printf("%s: ok (%lld chunks)\n", path, (long long)nchunks);
    else if (!quiet)
        printf("%s: ok (%lld chunks, %lld of %lld stored ones checked against checksums%s)\n",
               path, (long long)nchunks, (long long)nsummed, (long long)integ.chunks_stored,
               integ.sealed == B2F_SEALED_WHOLE ? "; the whole frame by fingerprint"
               : integ.sealed ? "; header, index and trailer by fingerprint" : "");
    return BT_OK;
}

/* A b2fs mount commits to a frame under an OFD write lock; a check made meanwhile, where
 * another host's writes reach this one's reads out of order (a cluster file system), may
 * read a header of one commit with an index of another. So a check that fails is made
 * again under a shared lock, which waits for the commit in progress and keeps the next
 * one out until the check ends; the first check, done without it, holds no writer up. */
int bt_verify_file(const char *path, int quiet)
{
    bt_errors_muted(1);
    int r = verify_once(path, quiet);
    bt_errors_muted(0);
    if (r == BT_OK)
        return r;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        (void)bt_lock_frame(fd, F_RDLCK, 1);   /* (none where the file system has none) */
    r = verify_once(path, quiet);
    if (fd >= 0)
        close(fd);
    return r;
}

int bt_cmd_verify(int argc, char **argv)
{
    int quiet, status = BT_OK;
    if (bt_quiet_option(argc, argv, verify_usage, "FILE", &quiet, &status) < 0)
        return status;
    for (int i = optind; i < argc; i++)
        if (bt_verify_file(argv[i], quiet) != BT_OK)
            status = BT_FAIL;
    return status;
}

static void compact_progress(void *ctx, int64_t done, int64_t total)
{
    bt_progress *p = ctx;
    p->total = total;
    bt_progress_update(p, done);
}

static int compact_one(const char *path)
{
    bt_input in;
    if (bt_open_input(&in, path, B2F_RDWR, 0) != BT_OK)
        return BT_FAIL;
    /* A writer (b2fs) holds this lock while it commits: do not compact under it. */
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(in.fd, F_SETLK, &lk) < 0) {
        bt_error(path, "in use by another writer (locked): %s", strerror(errno));
        bt_close_input(&in);
        return BT_FAIL;
    }
    struct stat fst;
    char tmp[4096], err[512] = "";
    int status = BT_FAIL;
    int out = -1;
    if (fstat(in.fd, &fst) < 0)
        bt_error(path, "%s", strerror(errno));
    else
        out = bt_temp_next_to(path, tmp, sizeof tmp);
    if (out >= 0) {
        bt_progress prog;
        bt_progress_begin(&prog, "compact", 0);
        b2f_set_progress(in.frame, compact_progress, &prog);
        int rc = b2f_compact_into(in.frame, out, err, sizeof err);
        b2f_set_progress(in.frame, NULL, NULL);
        bt_progress_end(&prog);
        if (rc < 0) {
            bt_error(path, "compaction failed: %s", bt_reason(rc, err));
            bt_drop_temp(out, tmp);
        } else {
            fchmod(out, fst.st_mode & 07777);
            off_t after = lseek(out, 0, SEEK_END);
            if (bt_commit_temp(out, tmp, path) == 0) {
                printf("%s: %lld -> %lld bytes\n", path, (long long)fst.st_size, (long long)after);
                status = BT_OK;
            }
        }
    }
    bt_close_input(&in);
    return status;
}

int bt_cmd_compact(int argc, char **argv)
{
    int status = BT_OK;
    if (bt_progress_options(argc, argv, compact_usage, 1, -1, &status) < 0)
        return status;
    for (int i = optind; i < argc; i++)
        if (compact_one(argv[i]) != BT_OK)
            status = BT_FAIL;
    return status;
}
