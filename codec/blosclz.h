/* BloscLZ stream codec (private to codec/). */
#ifndef B2FS_BLOSCLZ_H
#define B2FS_BLOSCLZ_H

/* Compresses srclen bytes into dst (capacity dstcap) at clevel 1..9. Returns the
 * compressed size, or 0 when the data does not compress into dstcap (the caller then
 * stores it raw). */
int blosclz_compress(int clevel, const void *src, int srclen, void *dst, int dstcap);

/* Decompresses a whole stream. Returns the number of bytes written (at most dstcap), or
 * a negative value when the stream is malformed; never reads past src + srclen nor
 * writes past dst + dstcap. */
int blosclz_decompress(const void *src, int srclen, void *dst, int dstcap);

#endif
