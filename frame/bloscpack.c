/* frame/: the Bloscpack reader: header, offsets table or a walk over the chunks,
 * checksums.
 * Calls: codec/; fio.c. */
#include "frame/bloscpack.h"
#include "frame/frame_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nettle/md5.h>
#include <nettle/nettle-meta.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <zlib.h>

#define MAX_DIGEST 64

struct b2_bloscpack {
    int fd;
    b2f_io io;
    b2bp_header hdr;
    int cklen;
    int64_t file_len;
    int64_t nchunks;
    int64_t nbytes, cbytes;
    b2bp_chunk *chunks;
    b2_chunk_info first;
};

static const struct {
    const char *name;
    int len;
} checksums[] = {
    [B2BP_CK_NONE] = {"none", 0},      [B2BP_CK_ADLER32] = {"adler32", 4},
    [B2BP_CK_CRC32] = {"crc32", 4},    [B2BP_CK_MD5] = {"md5", 16},
    [B2BP_CK_SHA1] = {"sha1", 20},     [B2BP_CK_SHA224] = {"sha224", 28},
    [B2BP_CK_SHA256] = {"sha256", 32}, [B2BP_CK_SHA384] = {"sha384", 48},
    [B2BP_CK_SHA512] = {"sha512", 64},
};
#define NCHECKSUMS ((int)(sizeof checksums / sizeof checksums[0]))

int b2bp_checksum_len(int checksum)
{
    return checksum >= 0 && checksum < NCHECKSUMS ? checksums[checksum].len : -1;
}

const char *b2bp_checksum_name(int checksum)
{
    return checksum >= 0 && checksum < NCHECKSUMS ? checksums[checksum].name : NULL;
}

int b2bp_is_bloscpack(const void *buf, size_t len)
{
    return len >= 4 && memcmp(buf, B2BP_MAGIC, 4) == 0;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int64_t get_i64(const uint8_t *p)
{
    return (int64_t)((uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32);
}

static int read_full(const b2_bloscpack *bp, void *buf, size_t len, uint64_t off)
{
    return b2f_io_pread(&bp->io, bp->fd, buf, len, off);
}

static const struct nettle_hash *nettle_for(int checksum)
{
    switch (checksum) {
    case B2BP_CK_MD5: return &nettle_md5;
    case B2BP_CK_SHA1: return &nettle_sha1;
    case B2BP_CK_SHA224: return &nettle_sha224;
    case B2BP_CK_SHA256: return &nettle_sha256;
    case B2BP_CK_SHA384: return &nettle_sha384;
    case B2BP_CK_SHA512: return &nettle_sha512;
    default: return NULL;
    }
}

/* The digest of buf as Bloscpack stores it: zlib sums little-endian, hashes raw. */
static void digest(int checksum, const uint8_t *buf, size_t len, uint8_t out[MAX_DIGEST])
{
    if (checksum == B2BP_CK_ADLER32 || checksum == B2BP_CK_CRC32) {
        uLong sum = checksum == B2BP_CK_ADLER32 ? adler32(0L, Z_NULL, 0) : crc32(0L, Z_NULL, 0);
        while (len > 0) {
            uInt part = len > 0x40000000u ? 0x40000000u : (uInt)len;
            sum = checksum == B2BP_CK_ADLER32 ? adler32(sum, buf, part) : crc32(sum, buf, part);
            buf += part;
            len -= part;
        }
        for (int i = 0; i < 4; i++)
            out[i] = (uint8_t)(sum >> (8 * i));
        return;
    }
    const struct nettle_hash *h = nettle_for(checksum);
    if (!h)
        return;
    union {
        struct md5_ctx md5;
        struct sha1_ctx sha1;
        struct sha256_ctx sha256;   /* also sha224 */
        struct sha512_ctx sha512;   /* also sha384 */
    } ctx;
    h->init(&ctx);
    h->update(&ctx, len, buf);
    h->digest(&ctx, h->digest_size, out);
}

static int parse_header(const uint8_t *b, b2bp_header *h, char *err, size_t errlen)
{
    if (!b2bp_is_bloscpack(b, B2BP_HEADER_LEN))
        return b2f_fail(err, errlen, B2F_EFORMAT, "not a Bloscpack file (no \"blpk\" magic)");
    h->version = b[4];
    h->options = b[5];
    h->checksum = b[6];
    h->typesize = b[7];
    h->chunksize = (int32_t)get_u32(b + 8);
    h->last_chunk = (int32_t)get_u32(b + 12);
    h->nchunks = get_i64(b + 16);
    if (h->version != 2)
        return b2f_fail(err, errlen, B2F_EHEADER, "Bloscpack format version %d not supported (only 2)",
                    h->version);
    if (h->options & ~1)
        return b2f_fail(err, errlen, B2F_EHEADER, "unknown Bloscpack options 0x%02x", h->options);
    if (b2bp_checksum_len(h->checksum) < 0)
        return b2f_fail(err, errlen, B2F_EHEADER, "unknown checksum id %d", h->checksum);
    if (h->chunksize < -1 || h->chunksize == 0 || h->chunksize > B2_MAX_NBYTES)
        return b2f_fail(err, errlen, B2F_EHEADER, "chunk-size %" PRId32 " out of range", h->chunksize);
    if (h->last_chunk < -1 || (h->chunksize > 0 && h->last_chunk > h->chunksize))
        return b2f_fail(err, errlen, B2F_EHEADER, "last-chunk %" PRId32 " out of range (chunk-size %" PRId32 ")",
                    h->last_chunk, h->chunksize);
    if (h->nchunks < -1)
        return b2f_fail(err, errlen, B2F_EHEADER, "nchunks %" PRId64 " out of range", h->nchunks);
    if ((h->options & 1) && h->nchunks < 0)
        return b2f_fail(err, errlen, B2F_EHEADER, "offsets table present but nchunks unknown");
    return 0;
}

/* Reads and checks the chunk header at off: the chunk and its checksum must end by
 * limit. Fills c (except content_off). */
static int load_chunk(b2_bloscpack *bp, int64_t n, uint64_t off, uint64_t limit,
                      b2bp_chunk *c, b2_chunk_info *info, char *err, size_t errlen)
{
    uint8_t head[B2_HEADER_LEN];
    if (off > limit || limit - off < B2_HEADER_LEN_V1 + (uint64_t)bp->cklen)
        return b2f_fail(err, errlen, B2F_ERANGE, "chunk %" PRId64 ": header at %" PRIu64 " past end (%" PRIu64 ")",
                    n, off, limit);
    size_t want = limit - off < B2_HEADER_LEN ? (size_t)(limit - off) : B2_HEADER_LEN;
    int rc = read_full(bp, head, want, off);
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "chunk %" PRId64 ": reading header at %" PRIu64 " failed", n, off);
    rc = b2_chunk_parse_header(head, want, info);
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "chunk %" PRId64 " at %" PRIu64 ": bad Blosc header: %s", n, off,
                    b2_strerror(rc));
    if ((uint64_t)info->cbytes + (uint64_t)bp->cklen > limit - off)
        return b2f_fail(err, errlen, B2F_ERANGE,
                    "chunk %" PRId64 " at %" PRIu64 ": cbytes %" PRId32 " plus %d checksum bytes past end (%" PRIu64 ")",
                    n, off, info->cbytes, bp->cklen, limit);
    c->file_off = off;
    c->cbytes = info->cbytes;
    c->nbytes = info->nbytes;
    return 0;
}

/* Declared sizes, where known, must match what the chunks say. */
static int check_sizes(const b2_bloscpack *bp, int64_t n, const b2bp_chunk *c, char *err,
                       size_t errlen)
{
    const b2bp_header *h = &bp->hdr;
    int last = n == bp->nchunks - 1;
    int32_t want = last ? h->last_chunk : h->chunksize;   /* -1: not declared */
    if (want >= 0 && c->nbytes != want)
        return b2f_fail(err, errlen, B2F_EHEADER,
                    "chunk %" PRId64 ": %" PRId32 " bytes, header says %s %" PRId32, n, c->nbytes,
                    last ? "last-chunk" : "chunk-size", want);
    return 0;
}

static int grow(b2_bloscpack *bp, int64_t *cap, int64_t need)
{
    if (need <= *cap)
        return 0;
    int64_t ncap = *cap ? *cap * 2 : 64;
    if (ncap < need)
        ncap = need;
    b2bp_chunk *p = realloc(bp->chunks, (size_t)ncap * sizeof *p);
    if (!p)
        return B2E_NOMEM;
    bp->chunks = p;
    *cap = ncap;
    return 0;
}

static int load_chunks(b2_bloscpack *bp, char *err, size_t errlen)
{
    const b2bp_header *h = &bp->hdr;
    uint64_t file_len = (uint64_t)bp->file_len;
    uint64_t data_start = B2BP_HEADER_LEN;
    uint64_t min_chunk = B2_HEADER_LEN_V1 + (uint64_t)bp->cklen;
    int64_t cap = 0;
    uint8_t *table = NULL;
    int rc;

    if (h->nchunks > B2F_MAX_NCHUNKS)
        return b2f_fail(err, errlen, B2F_ETOOBIG, "nchunks %" PRId64 " is more than b2fs accepts (%" PRId64 ")",
                        h->nchunks, B2F_MAX_NCHUNKS);
    if (h->nchunks >= 0) {
        /* Each chunk takes at least a header and a checksum: refuse counts the file cannot hold. */
        uint64_t room = file_len - B2BP_HEADER_LEN;
        uint64_t per = min_chunk + ((h->options & 1) ? 8 : 0);
        if ((uint64_t)h->nchunks > room / per)
            return b2f_fail(err, errlen, B2F_EHEADER,
                        "nchunks %" PRId64 " cannot fit in %" PRIu64 " bytes", h->nchunks, file_len);
        if ((rc = grow(bp, &cap, h->nchunks)) < 0)
            return b2f_fail(err, errlen, rc, "out of memory for %" PRId64 " chunks", h->nchunks);
    }
    if (h->options & 1) {
        size_t tlen = (size_t)h->nchunks * 8;
        data_start += tlen;
        table = malloc(tlen ? tlen : 1);
        if (!table)
            return b2f_fail(err, errlen, B2E_NOMEM, "out of memory for the offsets table");
        if ((rc = read_full(bp, table, tlen, B2BP_HEADER_LEN)) < 0) {
            free(table);
            return b2f_fail(err, errlen, rc, "reading the offsets table failed");
        }
    }

    uint64_t next = data_start;   /* where the next chunk may start */
    uint64_t content = 0;
    int64_t n = 0;
    for (;; n++) {
        if (h->nchunks >= 0 ? n == h->nchunks : next == file_len)
            break;
        uint64_t off = next;
        if (table) {
            /* Chunks follow each other without gaps: the table must say exactly where. */
            int64_t o = get_i64(table + 8 * n);
            if (o < 0 || (uint64_t)o != next) {
                rc = b2f_fail(err, errlen, B2F_EINDEX,
                          "chunk %" PRId64 ": offset %" PRId64 " in the offsets table, but the %s ends at %" PRIu64,
                          n, o, n ? "previous chunk" : "offsets table", next);
                goto out;
            }
        }
        if (n >= B2F_MAX_NCHUNKS) {
            rc = b2f_fail(err, errlen, B2F_ETOOBIG, "more than %" PRId64 " chunks", B2F_MAX_NCHUNKS);
            goto out;
        }
        if (h->nchunks < 0 && (rc = grow(bp, &cap, n + 1)) < 0) {
            rc = b2f_fail(err, errlen, rc, "out of memory for %" PRId64 " chunks", n + 1);
            goto out;
        }
        b2_chunk_info info;
        b2bp_chunk *c = &bp->chunks[n];
        if ((rc = load_chunk(bp, n, off, file_len, c, &info, err, errlen)) < 0)
            goto out;
        if (n == 0)
            bp->first = info;
        c->content_off = content;
        content += (uint64_t)c->nbytes;
        bp->cbytes += c->cbytes;
        next = off + (uint64_t)c->cbytes + (uint64_t)bp->cklen;
        bp->nchunks = n + 1;
    }
    bp->nchunks = n;
    bp->nbytes = (int64_t)content;
    if (next != file_len) {
        rc = b2f_fail(err, errlen, B2F_ERANGE, "%" PRIu64 " bytes after the last chunk (which ends at %" PRIu64 ")",
                  file_len - next, next);
        goto out;
    }
    for (int64_t i = 0; i < n; i++)
        if ((rc = check_sizes(bp, i, &bp->chunks[i], err, errlen)) < 0)
            goto out;
    rc = 0;
out:
    free(table);
    return rc;
}

int b2bp_open(b2_bloscpack **out, int fd, const b2f_io *io, char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    b2_bloscpack *bp = calloc(1, sizeof *bp);
    if (!bp)
        return b2f_fail(err, errlen, B2E_NOMEM, "out of memory");
    bp->fd = fd;
    b2f_io_init(&bp->io, io);

    int rc;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        rc = b2f_fail(err, errlen, -errno, "fstat failed: %s", strerror(errno));
        goto bad;
    }
    bp->file_len = st.st_size;
    uint8_t head[B2BP_HEADER_LEN];
    if (bp->file_len < B2BP_HEADER_LEN) {
        rc = b2f_fail(err, errlen, bp->file_len >= 4 ? B2F_EHEADER : B2F_EFORMAT,
                  "file of %" PRId64 " bytes is shorter than a Bloscpack header", bp->file_len);
        goto bad;
    }
    if ((rc = read_full(bp, head, sizeof head, 0)) < 0) {
        rc = b2f_fail(err, errlen, rc, "reading the header failed");
        goto bad;
    }
    if ((rc = parse_header(head, &bp->hdr, err, errlen)) < 0)
        goto bad;
    bp->cklen = b2bp_checksum_len(bp->hdr.checksum);
    if ((rc = load_chunks(bp, err, errlen)) < 0)
        goto bad;
    *out = bp;
    return 0;
bad:
    b2bp_close(bp);
    return rc;
}

void b2bp_close(b2_bloscpack *bp)
{
    if (!bp)
        return;
    free(bp->chunks);
    free(bp);
}

const b2bp_header *b2bp_get_header(const b2_bloscpack *bp) { return &bp->hdr; }
int64_t b2bp_nchunks(const b2_bloscpack *bp) { return bp->nchunks; }
int64_t b2bp_nbytes(const b2_bloscpack *bp) { return bp->nbytes; }
int64_t b2bp_cbytes(const b2_bloscpack *bp) { return bp->cbytes; }
int64_t b2bp_file_len(const b2_bloscpack *bp) { return bp->file_len; }

const b2_chunk_info *b2bp_first_info(const b2_bloscpack *bp)
{
    return bp->nchunks > 0 ? &bp->first : NULL;
}

int b2bp_chunk_get(const b2_bloscpack *bp, int64_t n, b2bp_chunk *c)
{
    if (n < 0 || n >= bp->nchunks)
        return B2F_ERANGE;
    *c = bp->chunks[n];
    return 0;
}

int b2bp_read_chunk(b2_bloscpack *bp, int64_t n, void *buf, size_t cap, char *err, size_t errlen)
{
    if (n < 0 || n >= bp->nchunks)
        return b2f_fail(err, errlen, B2F_ERANGE, "chunk %" PRId64 " out of range (%" PRId64 " chunks)", n,
                    bp->nchunks);
    const b2bp_chunk *c = &bp->chunks[n];
    size_t len = (size_t)c->cbytes;
    if (cap < len)
        return b2f_fail(err, errlen, B2E_DST_SMALL, "chunk %" PRId64 ": buffer of %zu bytes < cbytes %zu", n,
                    cap, len);
    uint8_t stored[MAX_DIGEST], computed[MAX_DIGEST];
    int rc = read_full(bp, buf, len, c->file_off);
    if (rc == 0 && bp->cklen)
        rc = read_full(bp, stored, (size_t)bp->cklen, c->file_off + len);
    if (rc < 0)
        return b2f_fail(err, errlen, rc,
                    "chunk %" PRId64 ": reading %zu bytes at %" PRIu64 " failed", n, len, c->file_off);
    /* The file may have changed since open: the chunk must still say the same size. */
    b2_chunk_info info;
    rc = b2_chunk_parse_header(buf, len, &info);
    if (rc < 0 || info.cbytes != c->cbytes || info.nbytes != c->nbytes)
        return b2f_fail(err, errlen, rc < 0 ? rc : B2E_HEADER,
                    "chunk %" PRId64 ": header changed since open", n);
    if (bp->cklen) {
        digest(bp->hdr.checksum, buf, len, computed);
        if (memcmp(stored, computed, (size_t)bp->cklen) != 0)
            return b2f_fail(err, errlen, B2F_ECHECKSUM, "chunk %" PRId64 ": %s checksum mismatch", n,
                        b2bp_checksum_name(bp->hdr.checksum));
    }
    return c->cbytes;
}
