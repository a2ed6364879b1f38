/* BloscLZ stream constants shared by the encoder and the decoder (private to codec/). */
#ifndef B2FS_BLOSCLZ_FORMAT_H
#define B2FS_BLOSCLZ_FORMAT_H

#define BLZ_MAX_LITERALS 32    /* one literal instruction carries 1..32 bytes */
#define BLZ_NEAR_LIMIT 8191    /* biased distances below this fit in 13 bits */
#define BLZ_FAR_BASE 8192      /* a far match's 16-bit field counts from here */
#define BLZ_WINDOW 73725       /* matches reach back less than this (8191 + 65535 - 1) */
#define BLZ_MARKER 0x20        /* top bits of the first byte of every stream */

/* blosclz_decompress failures (all < 0). */
enum {
    BLZ_ERR_PARAM = -1,      /* bad arguments */
    BLZ_ERR_TRUNCATED = -2,  /* an instruction runs past the end of the stream */
    BLZ_ERR_OVERFLOW = -3,   /* the output would exceed dstcap */
    BLZ_ERR_DISTANCE = -4,   /* a match reaches before the start of the output */
};

#endif
