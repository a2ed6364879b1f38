/* frame/: opening and validating a container, stat, close, refresh.
 * Calls: fio.c, params.c, header.c, trailer.c, index.c, bloscpack.c, read.c. */
#include <string.h>
#include <sys/stat.h>

#include "frame/frame_int.h"

static int file_size(int fd, int64_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return b2f_sys_error();
    *size = (int64_t)st.st_size;
    return 0;
}

/* Content offsets of variable-size chunks (starts has cap + 1 entries). */
void b2f_rebuild_starts(b2_frame *f)
{
    if (!f->variable)
        return;
    uint64_t *s = f->starts, sum = 0;
    for (int64_t i = 0; i < f->nchunks; i++) {
        s[i] = sum;
        sum += (uint64_t)f->chunks[i].nbytes;
    }
    s[f->nchunks] = sum;
}

/* Frees the frame state (not the struct, fd or lock), for close and refresh. */
void b2f_release(b2_frame *f)
{
    b2f_lays_free(f);
    for (int64_t i = 0; i < f->nchunks; i++)
        b2f_chunk_drop_data(&f->chunks[i]);
    free(f->chunks);
    f->chunks = NULL;
    free(f->starts);
    f->starts = NULL;
    f->nchunks = f->cap = 0;
    for (int i = 0; i < f->nvlmeta; i++)
        free(f->vlmeta[i].data);
    free(f->vlmeta);
    f->vlmeta = NULL;
    f->nvlmeta = f->vlmeta_cap = 0;
    free(f->hdr);
    f->hdr = NULL;
    f->nmeta = 0;
    free(f->sums_table);
    f->sums_table = NULL;
    f->sums_len = 0;
    b2f_window_drop(f);
    f->sealed = f->meta_changed = 0;
    if (f->bp)
        b2bp_close(f->bp);
    f->bp = NULL;
}

/* Reads n bytes at off into a new buffer. */
static int read_new(b2_frame *f, uint64_t off, size_t n, uint8_t **out, const char *what, char *err,
                    size_t errlen)
{
    uint8_t *b = malloc(n ? n : 1);
    if (!b)
        return B2E_NOMEM;
    int rc = b2f_file_read(f, b, n, off);
    if (rc < 0) {
        free(b);
        return b2f_fail(err, errlen, rc, "cannot read the %s (%zu bytes at %llu): %s", what, n,
                        (unsigned long long)off, b2f_strerror(rc));
    }
    *out = b;
    return 0;
}

/* Takes the vlmetalayer name out of the frame's list: its entry (data NULL if none). */
static b2f_vlmeta take_vlmeta(b2_frame *f, const char *name)
{
    b2f_vlmeta v = {.data = NULL};
    for (int i = 0; i < f->nvlmeta; i++) {
        if (strcmp(f->vlmeta[i].name, name) != 0)
            continue;
        v = f->vlmeta[i];
        memmove(f->vlmeta + i, f->vlmeta + i + 1, (size_t)(f->nvlmeta - i - 1) * sizeof v);
        f->nvlmeta--;
        break;
    }
    return v;
}

/* The table of sums a small frame's whole-frame fingerprint covers, made from its chunks
 * as they are now (*out malloc'ed); B2F_EDAMAGED when a chunk's head does not parse. */
static int whole_table(b2_frame *f, uint64_t meta_sum, uint8_t **out, size_t *len, char *err,
                       size_t errlen)
{
    b2f_sums_buf b;
    int rc = b2f_sums_begin(&b, meta_sum);
    if (rc == 0)
        rc = b2f_sums_of_chunks(f, &b, NULL, err, errlen);
    if (rc < 0) {
        b2f_sums_free(&b);
        return rc;
    }
    *out = b.p;
    *len = b.len;
    return 0;
}

/* The fingerprint (when reads are checked) and the table of checksums (the vlmetalayer v,
 * data NULL when there is none) of the frame whose trailer tb (tl bytes) was read. */
static int load_sums(b2_frame *f, const b2f_vlmeta *v, const uint8_t *tb, size_t tl,
                     int64_t trailer_off, char *err, size_t errlen)
{
    int type = tb[tl - 17];
    int rc = 0;
    if (f->sums_verify && type != 0 && type != B2F_FP_XXH3_128 && type != B2F_FP_XXH3_WHOLE)
        return b2f_fail(err, errlen, B2F_EDAMAGED, "the trailer's fingerprint type is %d, "
                        "neither none nor b2fs's", type);
    if (f->sums_verify && type == B2F_FP_XXH3_WHOLE && f->h.frame_len > (int64_t)B2F_WHOLE_MAX)
        return b2f_fail(err, errlen, B2F_EDAMAGED, "a whole-frame fingerprint on a frame of "
                        "%lld bytes (at most %zu)", (long long)f->h.frame_len, B2F_WHOLE_MAX);
    uint8_t *whole = NULL;
    size_t whole_len = 0;
    if (f->sums_verify && type != 0) {
        uint8_t *index = NULL, fp[16];
        size_t ilen = 0;
        if (f->h.nbytes > 0) {
            uint64_t at = (uint64_t)f->h.header_len + (uint64_t)f->h.cbytes;
            ilen = (size_t)((uint64_t)trailer_off - at);
            rc = read_new(f, at, ilen, &index, "index", err, errlen);
        }
        if (rc == 0 && type == B2F_FP_XXH3_WHOLE &&
            (rc = whole_table(f, b2f_fingerprint_meta_sum(tb + tl - 16), &whole, &whole_len,
                              err, errlen)) == 0)
            rc = b2f_frame_fingerprint_whole(f->hdr, index, ilen, tb, tl, whole, whole_len, fp);
        else if (rc == 0 && type == B2F_FP_XXH3_128)
            rc = b2f_frame_fingerprint(f->hdr, index, ilen, tb, tl, fp);
        free(index);
        if (rc == 0 && whole && memcmp(fp, tb + tl - 16, 16) != 0)
            rc = b2f_fail(err, errlen, B2F_EDAMAGED, "the frame changed since b2fs wrote it "
                          "(whole-frame fingerprint mismatch)");
        if (rc == 0 && memcmp(fp, tb + tl - 16, 16) != 0)
            rc = b2f_fail(err, errlen, B2F_EDAMAGED, "the header, index or trailer changed "
                          "since b2fs wrote them (fingerprint mismatch)");
        if (rc < 0) {
            free(whole);
            return rc;
        }
        f->sealed = whole ? B2F_SEALED_WHOLE : B2F_SEALED;
    }
    if (whole)
        return b2f_sums_install(f, whole, whole_len, 1);
    if (!v->data)
        return 0;
    uint8_t *table;
    size_t len;
    if ((rc = b2f_vlmeta_decode(v->data, v->len, &table, &len)) < 0) {
        if (rc == B2E_NOMEM || !f->sums_verify)
            return rc == B2E_NOMEM ? rc : 0;   /* unchecked: the frame reads as before */
        return b2f_fail(err, errlen, B2F_EDAMAGED, "the table of checksums does not decode: %s",
                        b2f_strerror(rc));
    }
    if (b2f_sums_install(f, table, len, f->sealed) < 0 && f->sums_verify)
        return b2f_fail(err, errlen, B2F_EDAMAGED, "the table of checksums does not hold "
                        "together");
    return 0;
}

/* open_once's answer when the header changed while it was read: another writer committed,
 * and what was read may mix two frames (never returned by b2f_open_frame). */
#define HEADER_MOVED (-5999)

static int open_once(b2_frame *f, char *err, size_t errlen)
{
    b2f_checksums_apply(f);
    int rc = file_size(f->fd, &f->file_size);
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "cannot stat the file");
    uint8_t fixed[B2F_HEADER_MINLEN];
    if (f->file_size < B2F_HEADER_MINLEN)
        return b2f_fail(err, errlen, B2F_EFORMAT, "file of %lld bytes: too short for a frame",
                        (long long)f->file_size);
    b2f_window_fill(f);
    rc = b2f_file_read(f, fixed, sizeof fixed, 0);
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "cannot read the header: %s", b2f_strerror(rc));
    b2f_hdr *h = &f->h;
    rc = b2f_hdr_parse(fixed, sizeof fixed, h, err, errlen);
    if (rc < 0)
        return rc;
    /* The size again, after the header: a commit grows the file before it writes its
     * header, so a size read before the header may predate the frame that header ends. */
    if ((rc = file_size(f->fd, &f->file_size)) < 0)
        return b2f_fail(err, errlen, rc, "cannot stat the file");
    if (h->frame_len > f->file_size)
        return b2f_fail(err, errlen, B2F_EHEADER, "frame length %lld past the end of the file "
                        "(%lld bytes)", (long long)h->frame_len, (long long)f->file_size);
    if (f->win && h->frame_len > (int64_t)f->win_len)
        return HEADER_MOVED;   /* the file grew while it was read: a commit; again */
    if (h->header_len > B2F_MAX_HEADER_LEN)
        return b2f_fail(err, errlen, B2F_ETOOBIG, "header of %d bytes", h->header_len);
    rc = read_new(f, 0, (size_t)h->header_len, &f->hdr, "header", err, errlen);
    if (rc < 0)
        return rc;
    if (memcmp(f->hdr, fixed, sizeof fixed) != 0)
        return HEADER_MOVED;
    rc = b2f_hdr_parse_meta(f->hdr, (size_t)h->header_len, f->meta, &f->nmeta, err, errlen);
    if (rc < 0)
        return rc;

    /* The trailer: its length sits 22 bytes before the frame end. */
    uint8_t tail[B2F_TRAILER_MINLEN];
    rc = b2f_file_read(f, tail, sizeof tail, (uint64_t)(h->frame_len - sizeof tail));
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "cannot read the trailer: %s", b2f_strerror(rc));
    int64_t tl = (int64_t)b2f_be_get(tail + 3, 4);
    if (tail[2] != 0xce || tl < B2F_TRAILER_MINLEN || tl > h->frame_len - h->header_len)
        return b2f_fail(err, errlen, B2F_ETRAILER, "trailer length %lld at frame end %lld out of "
                        "bounds (header %d bytes)", (long long)tl, (long long)h->frame_len,
                        h->header_len);
    if (tl > B2F_MAX_TRAILER_LEN)
        return b2f_fail(err, errlen, B2F_ETOOBIG, "trailer of %lld bytes", (long long)tl);
    f->trailer_len = (uint32_t)tl;
    /* Without data C-Blosc2 reads the trailer right after the header. */
    int64_t trailer_off = h->nbytes > 0 ? h->frame_len - tl : h->header_len;
    uint8_t *tb;
    rc = read_new(f, (uint64_t)trailer_off, (size_t)tl, &tb, "trailer", err, errlen);
    if (rc < 0)
        return rc;
    rc = b2f_trailer_parse(tb, (size_t)tl, &f->vlmeta, &f->nvlmeta, err, errlen);
    if (rc < 0) {
        free(tb);
        return rc;
    }
    f->vlmeta_cap = f->nvlmeta + 1;
    b2f_vlmeta sums = take_vlmeta(f, B2F_SUMS_VLMETA);

    /* A frame of variable-length-block chunks may still give a chunksize (when all its
     * chunks are as long); its chunks are read as variable ones, and a rewrite before the
     * first write leaves no such frame with ordinary chunks in it. */
    f->variable = (h->chunksize == 0 || (h->gflags & B2F_VL_BLOCKS)) && h->nbytes > 0;
    f->nbytes = h->nbytes;
    if (h->nbytes > 0) {
        int64_t index_off = h->cbytes > h->frame_len ? INT64_MAX : h->header_len + h->cbytes;
        if (index_off > trailer_off - B2_HEADER_LEN)
            rc = b2f_fail(err, errlen, B2F_EHEADER, "header says %lld bytes of chunks after the "
                          "%d-byte header: no room for the index before the trailer at %lld",
                          (long long)h->cbytes, h->header_len, (long long)trailer_off);
        else
            rc = b2f_index_load(f, index_off, trailer_off - index_off, err, errlen);
    }
    if (rc == 0)
        rc = load_sums(f, &sums, tb, (size_t)tl, trailer_off, err, errlen);
    free(tb);
    free(sums.data);
    if (rc < 0)
        return rc;
    b2f_hdr_to_cparams(h, &f->wp);
    if (f->wp.chunksize <= 0)
        f->wp.chunksize = f->nchunks > 0 ? f->chunks[0].nbytes : (1 << 20);
    return 0;
}

int b2f_open_frame(b2_frame *f, char *err, size_t errlen)
{
    for (int tries = 0; tries < 100; tries++) {
        int rc = open_once(f, err, errlen);
        if (rc != HEADER_MOVED)
            return rc;
        b2f_release(f);
    }
    return b2f_fail(err, errlen, B2F_EHEADER, "the header changed each time it was read");
}

int b2f_probe(int fd)
{
    int64_t size = 0;
    int rc = file_size(fd, &size);
    if (rc < 0)
        return rc;
    uint8_t head[B2F_HEADER_MINLEN];
    size_t got = size < (int64_t)sizeof head ? (size_t)size : sizeof head;
    b2f_io io;
    b2f_io_init(&io, NULL);
    if ((rc = b2f_io_pread(&io, fd, head, got, 0)) < 0)
        return rc;
    if (b2bp_is_bloscpack(head, got))
        return 1;
    b2f_hdr h;
    return b2f_hdr_parse(head, got, &h, NULL, 0) != B2F_EFORMAT;
}

int b2f_open(b2_frame **out, int fd, int mode, const b2f_io *io, char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = 0;
    b2_frame *f = calloc(1, sizeof *f);
    if (!f)
        return B2E_NOMEM;
    f->fd = fd;
    b2f_io_init(&f->io, io);
    pthread_mutex_init(&f->lock, NULL);
    uint8_t magic[4] = {0};
    int rc = b2f_io_pread(&f->io, fd, magic, sizeof magic, 0);
    if (rc == 0 && b2bp_is_bloscpack(magic, sizeof magic)) {
        f->kind = B2F_KIND_BLOSCPACK;
        rc = mode == B2F_RDWR ? b2f_fail(err, errlen, B2F_ERDONLY, "Bloscpack files are read only")
                              : b2bp_open(&f->bp, fd, &f->io, err, errlen);
        if (rc == 0) {
            f->nchunks = f->cap = b2bp_nchunks(f->bp);
            f->nbytes = b2bp_nbytes(f->bp);
        }
    } else {
        f->kind = B2F_KIND_FRAME;
        f->writable = mode == B2F_RDWR;
        rc = b2f_open_frame(f, err, errlen);
    }
    if (rc < 0) {
        b2f_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

void b2f_close(b2_frame *f)
{
    if (!f)
        return;
    if (f->kind == B2F_KIND_BLOSCPACK)
        f->nchunks = 0;   /* its chunks live in f->bp */
    b2f_release(f);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

void b2f_stat_get(b2_frame *f, b2f_stat *st)
{
    memset(st, 0, sizeof *st);
    st->kind = f->kind;
    st->writable = f->writable;
    st->nbytes = f->nbytes;
    st->nchunks = f->nchunks;
    if (f->kind == B2F_KIND_BLOSCPACK) {
        const b2bp_header *bh = b2bp_get_header(f->bp);
        const b2_chunk_info *ci = b2bp_first_info(f->bp);
        st->cbytes = b2bp_cbytes(f->bp);
        st->file_len = b2bp_file_len(f->bp);
        st->chunksize = bh->chunksize > 0 ? bh->chunksize : 0;
        st->typesize = bh->typesize;
        st->frame_version = bh->version;
        if (ci) {
            st->blocksize = ci->blocksize;
            st->codec = ci->codec;
            memcpy(st->filters, ci->filters, B2_MAX_FILTERS);
            memcpy(st->filters_meta, ci->filters_meta, B2_MAX_FILTERS);
            st->splitmode = ci->dont_split ? B2_SPLIT_NEVER : B2_SPLIT_ALWAYS;
        }
        return;
    }
    st->cbytes = b2f_live_cbytes(f);
    st->file_len = f->h.frame_len;
    st->chunksize = f->variable ? 0 : f->wp.chunksize;
    st->blocksize = f->wp.cp.blocksize;
    st->typesize = f->wp.cp.typesize;
    st->codec = f->wp.cp.codec;
    st->clevel = f->wp.cp.clevel;
    st->splitmode = f->wp.cp.splitmode;
    memcpy(st->filters, f->wp.cp.filters, B2_MAX_FILTERS);
    memcpy(st->filters_meta, f->wp.cp.filters_meta, B2_MAX_FILTERS);
    st->frame_version = f->h.gflags & 0x0f;
    st->vlblocks = (f->h.gflags & B2F_VL_BLOCKS) != 0;
    st->choose = f->wp.cp.choose;
    st->choose_typesize = f->wp.cp.choose_typesize;
    st->nmeta = f->nmeta;
    st->nvlmeta = f->nvlmeta;
}

int b2f_refresh(b2_frame *f, char *err, size_t errlen)
{
    if (f->kind != B2F_KIND_FRAME)
        return 0;
    uint8_t fixed[B2F_HEADER_MINLEN];
    int64_t size;
    int rc = file_size(f->fd, &size);
    if (rc == 0)
        rc = b2f_io_pread(&f->io, f->fd, fixed, sizeof fixed, 0);
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "cannot read the header: %s", b2f_strerror(rc));
    if (memcmp(fixed, f->hdr, sizeof fixed) == 0)
        return 0;
    b2_frame tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.fd = f->fd;
    tmp.io = f->io;
    tmp.kind = f->kind;
    tmp.writable = f->writable;
    rc = b2f_open_frame(&tmp, err, errlen);
    if (rc < 0) {
        b2f_release(&tmp);
        return rc;
    }
    /* the writer's policy, not the file's */
    int choose = f->wp.cp.choose, choose_ts = f->wp.cp.choose_typesize;
    b2f_release(f);
    size_t skip = sizeof f->lock;
    memcpy((char *)f + skip, (char *)&tmp + skip, sizeof *f - skip);
    f->wp.cp.choose = choose;
    f->wp.cp.choose_typesize = choose_ts;
    return 1;
}
