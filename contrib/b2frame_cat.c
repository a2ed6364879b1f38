/* b2frame cat / unpack: decompressed contents, chunks decoded on worker threads and
 * written in order. */
#include "contrib/b2frame.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_WORKERS 8
#define MAX_BUFFERED ((uint64_t)512 << 20)   /* decoded bytes held at once, at most */

enum { SLOT_FREE, SLOT_BUSY, SLOT_DONE };

typedef struct slot {
    int state;
    int64_t chunk;
    uint8_t *buf;
    int32_t len;            /* decoded bytes, or an error code < 0 */
    char err[256];
} slot;

typedef struct pipeline {
    b2_frame *f;
    int64_t nchunks;
    size_t buf_cap;
    int nworkers, nslots;
    slot slots[2 * MAX_WORKERS];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t next_claim;     /* next chunk a worker takes */
    int stop;
} pipeline;

static int workers_for(int64_t nchunks)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > MAX_WORKERS)
        n = MAX_WORKERS;
    return nchunks < n ? (int)(nchunks > 0 ? nchunks : 1) : (int)n;
}

static void *worker(void *arg)
{
    pipeline *p = arg;
    b2_dctx *ctx = b2_dctx_new();
    pthread_mutex_lock(&p->mu);
    for (;;) {
        int64_t n = p->next_claim;
        if (p->stop || n >= p->nchunks)
            break;
        slot *s = &p->slots[n % p->nslots];
        if (s->state != SLOT_FREE) {   /* the writer has not consumed chunk n - nslots yet */
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        p->next_claim++;
        s->state = SLOT_BUSY;
        s->chunk = n;
        pthread_mutex_unlock(&p->mu);

        s->err[0] = '\0';
        int rc = ctx ? b2f_read_chunk(p->f, ctx, n, s->buf, p->buf_cap) : B2E_NOMEM;
        uint64_t off;
        int32_t want;
        if (rc >= 0 && b2f_chunk_span(p->f, n, &off, &want) == 0 && rc != want) {
            snprintf(s->err, sizeof s->err, "decoded %d bytes, the index says %d", rc, (int)want);
            rc = B2E_CORRUPT;
        }
        s->len = rc;

        pthread_mutex_lock(&p->mu);
        s->state = SLOT_DONE;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    b2_dctx_free(ctx);
    return NULL;
}

/* Largest decompressed chunk, for the buffers. */
static int64_t max_chunk_bytes(b2_frame *f, int64_t nchunks)
{
    int64_t max = 0;
    for (int64_t n = 0; n < nchunks; n++) {
        uint64_t off;
        int32_t len;
        if (b2f_chunk_span(f, n, &off, &len) == 0 && len > max)
            max = len;
    }
    return max;
}

static int frame_to_fd(bt_input *in, int out, const char *outname, const char *what)
{
    b2f_stat st;
    b2f_stat_get(in->frame, &st);
    pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        bt_error(in->path, "out of memory");
        return BT_FAIL;
    }
    p->f = in->frame;
    p->nchunks = st.nchunks;
    p->buf_cap = (size_t)max_chunk_bytes(in->frame, st.nchunks);
    p->nworkers = workers_for(st.nchunks);
    p->nslots = 2 * p->nworkers;
    /* Big chunks: fewer buffers in flight, so memory stays near MAX_BUFFERED. */
    while (p->nslots > 1 && (uint64_t)p->nslots * p->buf_cap > MAX_BUFFERED)
        p->nslots--;
    if (p->nworkers > p->nslots)
        p->nworkers = p->nslots;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    int status = BT_OK, nstarted = 0;
    pthread_t tids[MAX_WORKERS];
    for (int i = 0; i < p->nslots; i++) {
        p->slots[i].buf = malloc(p->buf_cap ? p->buf_cap : 1);
        if (!p->slots[i].buf) {
            bt_error(in->path, "out of memory for %zu-byte chunks", p->buf_cap);
            status = BT_FAIL;
            goto done;
        }
    }
    for (; nstarted < p->nworkers; nstarted++)
        if (pthread_create(&tids[nstarted], NULL, worker, p) != 0)
            break;
    if (nstarted == 0) {
        bt_error(in->path, "cannot start a thread");
        status = BT_FAIL;
        goto done;
    }

    bt_progress prog;
    bt_progress_begin(&prog, what, st.nbytes);
    int64_t written = 0;
    for (int64_t n = 0; n < p->nchunks && status == BT_OK; n++) {
        slot *s = &p->slots[n % p->nslots];
        pthread_mutex_lock(&p->mu);
        while (!(s->state == SLOT_DONE && s->chunk == n))
            pthread_cond_wait(&p->cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
        if (s->len < 0) {
            bt_error(in->path, "chunk %lld: %s", (long long)n,
                     s->err[0] ? s->err : b2f_strerror(s->len));
            status = BT_FAIL;
        } else {
            int rc = bt_write_all(out, s->buf, (size_t)s->len);
            if (rc < 0) {
                bt_error(outname, "write failed: %s", strerror(-rc));
                status = BT_FAIL;
            }
            written += s->len;
            bt_progress_update(&prog, written);
        }
        pthread_mutex_lock(&p->mu);
        s->state = SLOT_FREE;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    bt_progress_end(&prog);
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
done:
    for (int i = 0; i < nstarted; i++)
        pthread_join(tids[i], NULL);
    for (int i = 0; i < p->nslots; i++)
        free(p->slots[i].buf);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
    return status;
}

static int chunk_to_fd(bt_input *in, int out, const char *outname)
{
    uint8_t *dst = malloc(in->info.nbytes ? (size_t)in->info.nbytes : 1);
    if (!dst) {
        bt_error(in->path, "out of memory for %d bytes", (int)in->info.nbytes);
        return BT_FAIL;
    }
    b2_dctx *ctx = b2_dctx_new();
    int rc = ctx ? b2_chunk_decode(ctx, in->chunk, (size_t)in->info.cbytes, dst,
                                   (size_t)in->info.nbytes)
                 : B2E_NOMEM;
    b2_dctx_free(ctx);
    int status = BT_OK;
    if (rc < 0) {
        bt_error(in->path, "chunk: %s", b2_strerror(rc));
        status = BT_FAIL;
    } else if ((rc = bt_write_all(out, dst, (size_t)rc)) < 0) {
        bt_error(outname, "write failed: %s", strerror(-rc));
        status = BT_FAIL;
    }
    free(dst);
    return status;
}

/* Writes the decompressed contents of path to out; an array frame as a .npy file when
 * as_npy. what names the command in the progress line. */
static int decode_to_fd(const char *path, int out, const char *outname, int as_npy,
                        const char *what)
{
    bt_input in;
    int status = bt_open_input(&in, path, B2F_RDONLY, 1);
    if (status != BT_OK)
        return status;
    if (as_npy && bt_is_array(&in))
        status = bt_unpack_npy(&in, out, outname);
    else
        status = in.frame ? frame_to_fd(&in, out, outname, what) : chunk_to_fd(&in, out, outname);
    bt_close_input(&in);
    return status;
}

static const char cat_usage[] =
    "Usage: b2frame cat [-q] FILE...\n"
    "Writes the decompressed contents of each FILE to stdout: a Blosc2 frame, a Bloscpack\n"
    "file or a single Blosc1/Blosc2 chunk, told apart by content. Chunks are decoded on\n"
    "one thread per CPU. Exit status 1 if a file cannot be read or a chunk does not decode.\n"
    "On a terminal, stderr shows progress when it takes over a second; -q: no progress.\n";

int bt_cmd_cat(int argc, char **argv)
{
    int status = BT_OK;
    if (bt_progress_options(argc, argv, cat_usage, 1, -1, &status) < 0)
        return status;
    for (int i = optind; i < argc && status == BT_OK; i++)
        status = decode_to_fd(argv[i], STDOUT_FILENO, "stdout", 0, "cat");
    return status;
}

static const char unpack_usage[] =
    "Usage: b2frame unpack [-q] IN OUT\n"
    "Writes the decompressed contents of IN (a frame, a Bloscpack file or a Blosc chunk)\n"
    "to the plain file OUT: through a temporary file next to it, renamed into place when\n"
    "complete, so OUT is never seen half written. An array frame (a b2nd metalayer) and\n"
    "an OUT ending in .npy give the NumPy .npy file of the array: its items in C order.\n"
    "On a terminal, stderr shows progress when it takes over a second; -q: no progress.\n";

int bt_cmd_unpack(int argc, char **argv)
{
    int status = BT_OK;
    if (bt_progress_options(argc, argv, unpack_usage, 2, 2, &status) < 0)
        return status;
    const char *out = argv[optind + 1];
    char tmp[4096];
    int fd = bt_temp_next_to(out, tmp, sizeof tmp);
    if (fd < 0)
        return BT_FAIL;
    size_t olen = strlen(out);
    status = decode_to_fd(argv[optind], fd, out, olen > 4 && !strcmp(out + olen - 4, ".npy"),
                          "unpack");
    if (status != BT_OK) {
        bt_drop_temp(fd, tmp);
        return status;
    }
    return bt_commit_temp(fd, tmp, out) == 0 ? BT_OK : BT_FAIL;
}
