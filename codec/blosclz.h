/* BloscLZ stream codec (private to codec/). */
#ifndef B2FS_BLOSCLZ_H
#define B2FS_BLOSCLZ_H

/* Compresses srclen bytes into dst (capacity dstcap) at clevel 1..9. Returns the
 * compressed size, or 0 when the data does not compress into dstcap (the caller then
 * stores it raw). */
int blosclz_compress(int clevel, const void *src, int srclen, void *dst, int dstcap);

/* The same for the blocks of a chunk whose dont_split flag is set: c-blosc 1.21 tunes
 * its parse differently there, and this follows it. blosclz_compress is right for
 * every block of a split chunk (its leftover block too). */
int blosclz_compress_unsplit(int clevel, const void *src, int srclen, void *dst, int dstcap);

/* Decompresses a whole stream. Returns the number of bytes written (at most dstcap), or
 * a negative value when the stream is malformed; never reads past src + srclen nor
 * writes past dst + dstcap. */
int blosclz_decompress(const void *src, int srclen, void *dst, int dstcap);

#endif
