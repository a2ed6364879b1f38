/* frame/: the Bloscpack reader (format version 2 header), used behind b2f_open.
 *
 * A Bloscpack file is a 32-byte header ("blpk", version 2), an optional table of int64
 * chunk offsets, then Blosc1 chunks, each followed by a checksum of its compressed
 * bytes. Opening checks the header, every offset and every chunk header against the
 * file size (walking the chunks when there is no offsets table or the sizes are -1);
 * reading a chunk verifies its checksum. Read only. Errors as in frame.h.
 */
#ifndef B2FS_BLOSCPACK_H
#define B2FS_BLOSCPACK_H

#include <stddef.h>
#include <stdint.h>

#include "frame/frame.h"

#define B2BP_MAGIC "blpk"
#define B2BP_HEADER_LEN 32

enum b2bp_checksum {
    B2BP_CK_NONE = 0, B2BP_CK_ADLER32, B2BP_CK_CRC32, B2BP_CK_MD5, B2BP_CK_SHA1,
    B2BP_CK_SHA224, B2BP_CK_SHA256, B2BP_CK_SHA384, B2BP_CK_SHA512,
};

typedef struct b2bp_header {
    int version;
    int options;            /* bit 0: offsets table present */
    int checksum;           /* enum b2bp_checksum */
    int typesize;
    int32_t chunksize;      /* as declared; -1 unknown */
    int32_t last_chunk;     /* as declared; -1 unknown */
    int64_t nchunks;        /* as declared; -1 unknown */
} b2bp_header;

/* One chunk as found at open. */
typedef struct b2bp_chunk {
    uint64_t file_off;      /* start of the Blosc header in the file */
    uint64_t content_off;   /* offset of its first byte in the decompressed contents */
    int32_t cbytes;         /* compressed length (the checksum follows) */
    int32_t nbytes;         /* decompressed length */
} b2bp_chunk;

typedef struct b2_bloscpack b2_bloscpack;

/* 1 if buf (len bytes) starts with the Bloscpack magic. */
int b2bp_is_bloscpack(const void *buf, size_t len);
/* Opens and validates the Bloscpack file in fd (the caller keeps owning fd; io may be
 * NULL for the plain system calls). */
int b2bp_open(b2_bloscpack **out, int fd, const b2f_io *io, char *err, size_t errlen);
void b2bp_close(b2_bloscpack *bp);

const b2bp_header *b2bp_get_header(const b2_bloscpack *bp);
int64_t b2bp_nchunks(const b2_bloscpack *bp);
int64_t b2bp_nbytes(const b2_bloscpack *bp);      /* decompressed size of all chunks */
int64_t b2bp_cbytes(const b2_bloscpack *bp);      /* compressed bytes of all chunks */
int64_t b2bp_file_len(const b2_bloscpack *bp);
/* The first chunk's parsed header (codec, filters, blocksize), for stat; NULL if empty. */
const b2_chunk_info *b2bp_first_info(const b2_bloscpack *bp);
/* Where chunk n is; B2F_ERANGE if n is out of range. */
int b2bp_chunk_get(const b2_bloscpack *bp, int64_t n, b2bp_chunk *c);
/* Reads the compressed bytes of chunk n into buf (cap >= its cbytes) and verifies its
 * checksum (B2F_ECHECKSUM naming the chunk in err on a mismatch). Returns cbytes. */
int b2bp_read_chunk(b2_bloscpack *bp, int64_t n, void *buf, size_t cap, char *err,
                    size_t errlen);

/* Digest length of a checksum id (0 for none), or -1 for an unknown id. */
int b2bp_checksum_len(int checksum);
/* "none", "adler32", "crc32", "md5", "sha1", ...; NULL for an unknown id. */
const char *b2bp_checksum_name(int checksum);

#endif
