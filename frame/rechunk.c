/* frame/: a copy of a frame with chunks of one fixed size (frames of variable-size
 * chunks cannot take writes at arbitrary offsets: fs/ rewrites them with this first).
 *
 * The copy is built with the ordinary write path (b2f_create, b2f_update_chunk,
 * b2f_commit) on the new file, committed every few chunks so that memory stays bounded;
 * each commit leaves a small dead index and trailer behind, which compaction reclaims.
 *
 * Calls: codec/; fio.c, read.c, meta.c, open.c, write.c, commit.c. */
#include <string.h>
#include <sys/stat.h>

#include "frame/frame_int.h"

/* Decompressed bytes staged between two commits of the copy. */
#define RECHUNK_COMMIT_BYTES ((int64_t)64 << 20)
/* Smallest default chunk size: below it the index of a large file gets as big as its
 * data and every write touches many chunks. */
#define RECHUNK_MIN_DEFAULT (64 << 10)

/* The largest chunk (at least RECHUNK_MIN_DEFAULT), in whole items: every old chunk then
 * fits in one new chunk or straddles two, and the granularity the writer chose stays. */
static int32_t default_chunksize(const b2_frame *f, int typesize)
{
    int64_t cs = RECHUNK_MIN_DEFAULT;
    for (int64_t i = 0; i < f->nchunks; i++)
        if (f->chunks[i].nbytes > cs)
            cs = f->chunks[i].nbytes;
    cs = (cs + typesize - 1) / typesize * typesize;
    return cs > B2_MAX_NBYTES ? B2_MAX_NBYTES / typesize * typesize : (int32_t)cs;
}

/* Codec parameters of the copy: the header's codec and clevel (a chunk header does not
 * tell lz4 from lz4hc, nor the level), the filters and typesize of the first chunk that
 * has them, and an automatic blocksize (a header of variable-size chunks may carry the
 * blocksize of any one chunk, e.g. 8 bytes). */
static void copy_params(b2_frame *f, b2f_params *p)
{
    p->cp = f->wp.cp;
    p->cp.blocksize = 0;
    const b2_chunk_layout *lay;
    if (f->nchunks == 0 || b2f_chunk_layout(f, 0, &lay) < 0)
        return;
    const b2_chunk_info *ci = &lay->info;
    if (ci->special != B2_SPECIAL_NONE || ci->memcpyed || ci->header_len != B2_HEADER_LEN)
        return;
    int family = p->cp.codec == B2_LZ4HC ? B2_LZ4 : p->cp.codec;
    if (ci->codec != family)
        p->cp.codec = ci->codec;
    p->cp.typesize = ci->typesize;
    memcpy(p->cp.filters, ci->filters, B2_MAX_FILTERS);
    memcpy(p->cp.filters_meta, ci->filters_meta, B2_MAX_FILTERS);
}

/* A new empty frame in out_fd with f's metalayers. */
static int create_copy(b2_frame *f, int out_fd, const b2f_params *p, b2_frame **out, char *err,
                       size_t errlen)
{
    const char *names[B2F_MAX_META];
    const void *values[B2F_MAX_META];
    size_t lens[B2F_MAX_META];
    int nmeta = b2f_meta_count(f);
    for (int i = 0; i < nmeta; i++) {
        const uint8_t *v;
        names[i] = b2f_meta_name(f, i);
        b2f_meta_get(f, names[i], &v, &lens[i]);
        values[i] = v;
    }
    return b2f_create(out, out_fd, p, nmeta, names, values, lens, &f->io, err, errlen);
}

/* Decodes f's contents chunksize bytes at a time into nf's chunks. */
static int copy_contents(b2_frame *f, b2_frame *nf, int32_t cs, int nthreads, char *err,
                         size_t errlen)
{
    uint8_t *buf = malloc((size_t)cs);
    b2_dctx *d = b2_dctx_new();
    b2_cctx *c = b2f_cctx_new(nf);
    int rc = buf && d && c ? 0 : B2E_NOMEM;
    if (rc == 0 && nthreads > 1) { /* with fewer threads it is only slower */
        b2_dctx_set_nthreads(d, nthreads);
        b2_cctx_set_nthreads(c, nthreads);
    }
    int64_t staged = 0;
    for (int64_t n = 0; rc == 0 && (uint64_t)n * (uint64_t)cs < (uint64_t)f->nbytes; n++) {
        uint64_t off = (uint64_t)n * (uint64_t)cs;
        size_t len = (uint64_t)f->nbytes - off < (uint64_t)cs ? (size_t)((uint64_t)f->nbytes - off)
                                                             : (size_t)cs;
        ssize_t got = b2f_pread(f, d, buf, len, off);
        if (got != (ssize_t)len) {
            rc = got < 0 ? (int)got : B2F_ERANGE;
            rc = b2f_fail(err, errlen, rc, "cannot read %zu bytes at %llu: %s", len,
                          (unsigned long long)off, b2f_strerror(rc));
        } else if ((rc = b2f_update_chunk(nf, c, n, buf, len)) < 0) {
            rc = b2f_fail(err, errlen, rc, "new chunk %lld: %s", (long long)n, b2f_strerror(rc));
        } else if ((staged += (int64_t)len) >= RECHUNK_COMMIT_BYTES) {
            staged = 0;
            rc = b2f_commit(nf, 0, err, errlen);
        }
    }
    b2_cctx_free(c);
    b2_dctx_free(d);
    free(buf);
    return rc;
}

int b2f_rechunk_into(b2_frame *f, int out_fd, int32_t chunksize, int nthreads, char *err,
                     size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    if (f->kind != B2F_KIND_FRAME)
        return b2f_fail(err, errlen, B2F_ERDONLY, "only contiguous frames can be rechunked");
    struct stat st;
    if (fstat(out_fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != 0)
        return b2f_fail(err, errlen, B2F_ERANGE, "the output is not an empty regular file");
    b2f_params p;
    copy_params(f, &p);
    if (chunksize < 0 || chunksize > B2_MAX_NBYTES)
        return b2f_fail(err, errlen, B2F_ERANGE, "chunksize %ld out of range", (long)chunksize);
    p.chunksize = chunksize ? chunksize : default_chunksize(f, p.cp.typesize);
    b2_frame *nf;
    int rc = create_copy(f, out_fd, &p, &nf, err, errlen);
    if (rc < 0)
        return rc;
    if (nthreads > B2_MAX_THREADS)
        nthreads = B2_MAX_THREADS;
    rc = copy_contents(f, nf, p.chunksize, nthreads, err, errlen);
    if (rc == 0 && (rc = b2f_vlmeta_copy(f, nf)) < 0)
        b2f_fail(err, errlen, rc, "cannot copy the vlmetalayers: %s", b2f_strerror(rc));
    if (rc == 0)
        rc = b2f_commit(nf, 0, err, errlen);
    b2f_close(nf);
    return rc;
}
