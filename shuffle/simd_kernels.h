/* The SIMD kernels, written once for any vector width. Included by shuffle_sse2.c and
 * shuffle_avx2.c after they define:
 *   V, VBYTES              the vector type and its size (16 or 32)
 *   B2K_TARGET             the target attribute for every function here
 *   SIMD(name)             the set's prefix for the kernel names
 *   V_LOADU(p), V_STOREU(p, v), V_ZERO(), V_AND, V_XOR, V_SET1_64, V_SRLI64, V_SLLI64,
 *   V_ADD8, V_SUB8 (bytewise, wrapping)
 *   V_UNPACKLO8, V_UNPACKHI8      byte interleave inside each 16-byte lane
 *   V_LOAD_LANES(p, q)     lane 0 from p, lane 1 (if any) from q, 16 bytes each
 *   H, LOAD128(p), STORE128(p, h), H_XOR   16-byte vectors
 *   V_LANE0(v), and V_LANE1(v) for 32-byte vectors only: a lane of v as an H
 *   V_SHUF32(v, imm), V_SHUFHI16(v, imm), V_BSLLI(v, bytes)   per lane, as pshufd,
 *                          pshufhw and pslldq
 *   V_LANE1_BOTH(v)        lane 1 in both lanes (v itself for SSE2), and for 32-byte
 *                          vectors only V_LANE0_UP(v): lane 0 of v in lane 1, zeros below
 *   V_JOIN_LANES(a, b, L)  (32-byte vectors only) lane L of a, then lane L of b
 *   V_OR, and optionally V_PICK_BYTES(v, table16): byte table16[q] of each lane of v
 *                          (0 where the top bit of table16[q] is set; needs SSSE3)
 *
 * How the byte transposes work. The unpack instructions act on each 16-byte lane on
 * its own. Number the bytes in flight by an address whose low 4 bits are the position
 * in the lane and whose other bits select the vector (the "slots") or the lane. One
 * round of unpacks, pairing the vectors that differ in one slot bit, moves the top
 * position bit into that slot and shifts the position left, putting the old slot bit
 * at the bottom. For 16 items of 2^m bytes (m = 1..4) in 2^m vectors:
 *   in:  slots = item bits 3..4-m, position = item bits 3-m..0, byte bits m-1..0
 *   out: slots = byte bits,        position = item bits 3..0
 * which takes 4 rounds for the shuffle (slots m-1, m-2, .., 0, m-1, ..) and m rounds
 * for the unshuffle (slots m-1 down to 0). For typesize 8 the rows come out in the
 * order 0 2 4 6 1 3 5 7. With 32-byte vectors the lane bit is item bit 4: each vector
 * is loaded from two 16-byte pieces 16 items apart, so that both lanes go through the
 * same rounds and each row comes out as 32 consecutive items.
 * Other typesizes go through 16 x 16 byte tiles (16 items x 16 bytes of each), which
 * are the case m = 4 above, except 3, 5, 6 and 7 where V_PICK_BYTES exists.
 */

#define B2K_INLINE static inline __attribute__((always_inline)) B2K_TARGET
#define ITEMS (VBYTES)          /* items per iteration: one row is one vector */

/* The stores of the unshuffles. With ref (the delta filter's reference block, at the
 * same offsets as dst) each stored byte is XORed with its ref byte on the way, which
 * saves the delta decode a pass over the block; a NULL ref is folded away. */
B2K_INLINE void SIMD(put)(uint8_t *dst, const uint8_t *ref, size_t at, V v)
{
    if (ref != NULL)
        v = V_XOR(v, V_LOADU(ref + at));
    V_STOREU(dst + at, v);
}

B2K_INLINE void SIMD(put_half)(uint8_t *dst, const uint8_t *ref, size_t at, H h)
{
    if (ref != NULL)
        h = H_XOR(h, LOAD128(ref + at));
    STORE128(dst + at, h);
}

/* One round of unpacks over nvec vectors, pairing on slot bit `slot`. */
B2K_INLINE void SIMD(round)(V *x, unsigned nvec, unsigned slot)
{
    unsigned bit = 1u << slot;
#pragma GCC unroll 16
    for (unsigned k = 0; k < nvec; k++) {
        if (k & bit)
            continue;
        V a = x[k], b = x[k | bit];
        x[k] = V_UNPACKLO8(a, b);
        x[k | bit] = V_UNPACKHI8(a, b);
    }
}

/* Output row held by vector k after the shuffle rounds for typesize 2^m. */
B2K_INLINE size_t SIMD(row_of)(unsigned m, unsigned k)
{
    static const unsigned char rows8[8] = { 0, 2, 4, 6, 1, 3, 5, 7 };
    return m == 3 ? rows8[k] : k;
}

/* The transpose of ITEMS items of typesize 2^m into x (row row_of(m, k) in x[k]). */
B2K_INLINE void SIMD(shuffle_group)(unsigned m, const uint8_t *s, V *x)
{
    const unsigned ts = 1u << m;
#pragma GCC unroll 16
    for (unsigned k = 0; k < ts; k++)
        x[k] = V_LOAD_LANES(s + 16 * k, s + 16 * ts + 16 * k);
#pragma GCC unroll 4
    for (unsigned r = 0; r < 4; r++)
        SIMD(round)(x, ts, (m - 1) - r % m);
}

enum { DIRECT_ROWS = 4 };

/* The shuffles prefetch their source, and the unshuffles their destination, this far
 * ahead: a block walked through memory otherwise keeps too few lines in flight and the
 * loops fall well behind memcpy. The prefetches go to L2 (prefetcht1), so that lines
 * waiting for memory do not hold the few L1 miss buffers the loop's own loads and
 * stores need; every line is prefetched (every other line was as slow as none), and
 * never past the end of the block, where it could only cost. Reading the destination
 * ahead starts the read-for-ownership its stores need anyway; non-temporal stores
 * would avoid that, but the decoded block is read again right away. */
enum { PREFETCH_AHEAD = 8192 };

B2K_INLINE void SIMD(prefetch)(const uint8_t *p, size_t len, const uint8_t *end)
{
    size_t left = (size_t)(end - p);
    if (left <= PREFETCH_AHEAD)
        return;
    size_t stop = left - PREFETCH_AHEAD < len ? left - PREFETCH_AHEAD : len;
    /* a line apart: called on consecutive pieces, this reaches every line at least once
     * (a per-line test for pieces shorter than a line was slower than prefetching twice) */
    for (size_t l = 0; l < stop; l += 64)
        __builtin_prefetch(p + PREFETCH_AHEAD + l, 0, 2);
}

/* Rows past DIRECT_ROWS of step s go to ring slot s % RING_SLOTS and reach the block
 * RING_LAG steps later, so that they land in other cache sets than the rows written
 * directly, and the copy overlaps the (shuffle-port bound) transposes. */
enum { RING_SLOTS = 16, RING_LAG = 8 };

B2K_INLINE void SIMD(flush_slot)(unsigned ts, const uint8_t *slot, uint8_t *dst,
                                 size_t stride)
{
#pragma GCC unroll 16
    for (unsigned row = DIRECT_ROWS; row < ts; row++) {
        const uint8_t *s = slot + (row - DIRECT_ROWS) * 2 * VBYTES;
        V a = V_LOADU(s), b = V_LOADU(s + VBYTES);
        V_STOREU(dst + row * stride, a);
        V_STOREU(dst + row * stride + VBYTES, b);
    }
}

B2K_INLINE size_t SIMD(shuffle_ring)(unsigned m, size_t n, const uint8_t *src, uint8_t *dst,
                                     size_t stride)
{
    const unsigned ts = 1u << m;
    const size_t step = 2 * ITEMS, nsteps = n / step;
    const size_t slot_bytes = ts > DIRECT_ROWS ? (ts - DIRECT_ROWS) * 2 * VBYTES : 1;
    _Alignas(64) uint8_t ring[RING_SLOTS * (8 - DIRECT_ROWS) * 2 * VBYTES];  /* ts <= 8 */
    for (size_t c = 0; c < nsteps; c++) {
        size_t i = c * step;
        V x[16], y[16];
        SIMD(prefetch)(src + i * ts, step * ts, src + n * ts);
        SIMD(shuffle_group)(m, src + i * ts, x);
        SIMD(shuffle_group)(m, src + (i + ITEMS) * ts, y);
        uint8_t *slot = ring + (c % RING_SLOTS) * slot_bytes;
#pragma GCC unroll 16
        for (unsigned k = 0; k < ts; k++) {
            size_t row = SIMD(row_of)(m, k);
            uint8_t *d = row < DIRECT_ROWS ? dst + row * stride + i
                                           : slot + (row - DIRECT_ROWS) * 2 * VBYTES;
            V_STOREU(d, x[k]);
            V_STOREU(d + VBYTES, y[k]);
        }
        if (ts > DIRECT_ROWS && c >= RING_LAG)
            SIMD(flush_slot)(ts, ring + ((c - RING_LAG) % RING_SLOTS) * slot_bytes,
                             dst + (c - RING_LAG) * step, stride);
    }
    if (ts > DIRECT_ROWS)
        for (size_t c = nsteps > RING_LAG ? nsteps - RING_LAG : 0; c < nsteps; c++)
            SIMD(flush_slot)(ts, ring + (c % RING_SLOTS) * slot_bytes, dst + c * step,
                             stride);
    return nsteps * step;
}

/* For typesize 16 a ring slot would hold 12 rows, and the copies no longer hide behind
 * the transposes: there the other rows go to a staging tile in L1 instead, copied out
 * one row at a time after each tile. */
enum { STAGE_BYTES = 16384 };

B2K_INLINE size_t SIMD(shuffle_staged)(unsigned m, size_t n, const uint8_t *src,
                                       uint8_t *dst, size_t stride)
{
    const unsigned ts = 1u << m;
    const size_t step = 2 * ITEMS, done = n - n % step;
    const size_t tile = STAGE_BYTES / (ts - DIRECT_ROWS) / step * step;
    _Alignas(64) uint8_t stage[STAGE_BYTES];
    for (size_t i0 = 0; i0 < done; i0 += tile) {
        size_t len = done - i0 < tile ? done - i0 : tile;
        for (size_t i = 0; i < len; i += step) {
            V x[16], y[16];
            SIMD(prefetch)(src + (i0 + i) * ts, step * ts, src + n * ts);
            SIMD(shuffle_group)(m, src + (i0 + i) * ts, x);
            SIMD(shuffle_group)(m, src + (i0 + i + ITEMS) * ts, y);
#pragma GCC unroll 16
            for (unsigned k = 0; k < ts; k++) {
                size_t row = SIMD(row_of)(m, k);
                uint8_t *d = row < DIRECT_ROWS ? dst + row * stride + i0 + i
                                               : stage + (row - DIRECT_ROWS) * tile + i;
                V_STOREU(d, x[k]);
                V_STOREU(d + VBYTES, y[k]);
            }
        }
        for (size_t row = DIRECT_ROWS; row < ts; row++)
            memcpy(dst + row * stride + i0, stage + (row - DIRECT_ROWS) * tile, len);
    }
    return done;
}

/* Typesize 2^m: returns how many items were done (a multiple of 2 * ITEMS).
 * The rows of a block lie a power of two apart, so lines being written to many rows at
 * once compete for the same cache sets. Hence two groups of ITEMS items are transposed
 * before anything is stored, so that each row receives whole lines; and only the first
 * DIRECT_ROWS rows are written in place, the others a little later (ring or staging). */
B2K_INLINE size_t SIMD(shuffle_pow2)(unsigned m, size_t n, const uint8_t *src, uint8_t *dst,
                                     size_t stride)
{
    return m == 4 ? SIMD(shuffle_staged)(m, n, src, dst, stride)
                  : SIMD(shuffle_ring)(m, n, src, dst, stride);
}

/* Vectors k0 .. k0 + n - 1 of the transpose of ITEMS items of typesize ts (in x[0..n)),
 * stored to dst + d (and XORed with ref + d). */
B2K_INLINE void SIMD(put_transposed)(uint8_t *dst, const uint8_t *ref, size_t d, unsigned ts,
                                     unsigned k0, const V *x, unsigned n)
{
#ifdef V_JOIN_LANES
    /* lane 0 of vectors k and k + 1 are 32 consecutive bytes; so are their lanes 1 */
#pragma GCC unroll 16
    for (unsigned k = 0; k < n; k += 2) {
        size_t at = d + 16 * (k0 + k);
        SIMD(put)(dst, ref, at, V_JOIN_LANES(x[k], x[k + 1], 0));
        SIMD(put)(dst, ref, at + 16 * ts, V_JOIN_LANES(x[k], x[k + 1], 1));
    }
#else
#pragma GCC unroll 16
    for (unsigned k = 0; k < n; k++)
        SIMD(put)(dst, ref, d + 16 * (k0 + k), x[k]);
#endif
}

/* Typesize 16 in two halves: the first round pairs rows j and j + 8, after which the
 * vectors of each half go through the other three rounds on their own. Eight vectors in
 * flight instead of sixteen leave registers for the compiler (with all sixteen it spilled
 * to the stack on every round); the rows are loaded twice, from L1. */
B2K_INLINE void SIMD(unshuffle_group16)(const uint8_t *s, size_t stride, uint8_t *dst,
                                        const uint8_t *ref, size_t d)
{
#pragma GCC unroll 2
    for (unsigned h = 0; h < 2; h++) {
        V y[8];
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++) {
            V a = V_LOADU(s + j * stride), b = V_LOADU(s + (j + 8) * stride);
            y[j] = h ? V_UNPACKHI8(a, b) : V_UNPACKLO8(a, b);
        }
#pragma GCC unroll 3
        for (unsigned r = 0; r < 3; r++)
            SIMD(round)(y, 8, 2 - r);
        /* y[k] is what vector 8h + k of the whole transpose would be */
        SIMD(put_transposed)(dst, ref, d, 16, 8 * h, y, 8);
    }
}

/* ITEMS items of typesize 2^m from rows at s, s + stride, ..; to dst + d (and ref + d). */
B2K_INLINE void SIMD(unshuffle_group)(unsigned m, const uint8_t *s, size_t stride,
                                      uint8_t *dst, const uint8_t *ref, size_t d)
{
    const unsigned ts = 1u << m;
    if (m == 4) {
        SIMD(unshuffle_group16)(s, stride, dst, ref, d);
        return;
    }
    V x[16];
#pragma GCC unroll 16
    for (unsigned j = 0; j < ts; j++)
        x[j] = V_LOADU(s + j * stride);
#pragma GCC unroll 4
    for (unsigned r = 0; r < m; r++)
        SIMD(round)(x, ts, (m - 1) - r);
    SIMD(put_transposed)(dst, ref, d, ts, 0, x, ts);
}

/* For typesize 16 the 16 rows of a power-of-two block all fall in one L1 set, which
 * has fewer ways: a line loaded for one group of items is gone before the next group
 * needs its other half. So each row's next 64 bytes are first copied, both halves at
 * once, into a small tile, and the groups are transposed from there. */
enum { LINE = 64 };

B2K_INLINE size_t SIMD(unshuffle_tiled)(size_t n, const uint8_t *src, size_t stride,
                                        uint8_t *dst, const uint8_t *ref)
{
    _Alignas(64) uint8_t tile[16 * LINE];
    size_t i = 0;
    for (; i + LINE <= n; i += LINE) {
        SIMD(prefetch)(dst + i * 16, LINE * 16, dst + n * 16);
        const uint8_t *row = src + i;   /* one pointer down the rows: no 16 offsets */
        for (unsigned j = 0; j < 16; j++, row += stride) {
            V v[LINE / VBYTES];
#pragma GCC unroll 4
            for (unsigned q = 0; q < LINE / VBYTES; q++)
                v[q] = V_LOADU(row + q * VBYTES);
#pragma GCC unroll 4
            for (unsigned q = 0; q < LINE / VBYTES; q++)
                V_STOREU(tile + j * LINE + q * VBYTES, v[q]);
        }
#pragma GCC unroll 4
        for (unsigned g = 0; g < LINE / ITEMS; g++)
            SIMD(unshuffle_group)(4, tile + g * ITEMS, LINE, dst, ref, (i + g * ITEMS) * 16);
    }
    return i;
}

B2K_INLINE size_t SIMD(unshuffle_pow2)(unsigned m, size_t n, const uint8_t *src,
                                       size_t stride, uint8_t *dst, const uint8_t *ref)
{
    const unsigned ts = 1u << m;
    if (m == 4)
        return SIMD(unshuffle_tiled)(n, src, stride, dst, ref);
    size_t i = 0;
    for (; i + ITEMS <= n; i += ITEMS) {
        SIMD(prefetch)(dst + i * ts, ITEMS * ts, dst + n * ts);
        SIMD(unshuffle_group)(m, src + i, stride, dst, ref, i * ts);
    }
    return i;
}

/* Any typesize: 16-byte columns of ITEMS items at a time. For typesize < 16 the
 * 16-byte accesses reach into the following items, so the loop stops while they stay
 * inside the block. The last column of a typesize >= 16 that is not a multiple of 16
 * overlaps the one before; those rows are simply written twice. */
static size_t SIMD(items_in_reach)(size_t ts, size_t n)
{
    size_t reach = ts < 16 ? (16 - ts + ts - 1) / ts : 0;   /* whole items of overreach */
    return n > reach ? n - reach : 0;
}

B2K_INLINE size_t SIMD(column_start)(size_t ts, size_t j0)
{
    return j0 + 16 <= ts ? j0 : (ts >= 16 ? ts - 16 : 0);
}

B2K_TARGET static size_t SIMD(shuffle_any)(size_t ts, size_t n, const uint8_t *src,
                                           uint8_t *dst, size_t stride)
{
    size_t i = 0, limit = SIMD(items_in_reach)(ts, n);
    for (; i + ITEMS <= limit; i += ITEMS) {
        SIMD(prefetch)(src + i * ts, ITEMS * ts, src + n * ts);
        for (size_t j0 = 0; j0 < ts; j0 += 16) {
            size_t jb = SIMD(column_start)(ts, j0), rows = ts - jb < 16 ? ts - jb : 16;
            const uint8_t *s = src + i * ts + jb;
            V x[16];
#pragma GCC unroll 16
            for (unsigned k = 0; k < 16; k++)
                x[k] = V_LOAD_LANES(s + k * ts, s + (16 + k) * ts);
#pragma GCC unroll 4
            for (unsigned r = 0; r < 4; r++)
                SIMD(round)(x, 16, 3 - r);
            for (size_t r = 0; r < rows; r++)
                V_STOREU(dst + (jb + r) * stride + i, x[r]);
        }
    }
    return i;
}

/* Items are stored in increasing order (lane 0, then lane 1), so that what a store
 * writes past its item is overwritten by the next one. */
B2K_INLINE size_t SIMD(unshuffle_any)(size_t ts, size_t n, const uint8_t *src,
                                      size_t stride, uint8_t *dst, const uint8_t *ref)
{
    size_t i = 0, limit = SIMD(items_in_reach)(ts, n);
    for (; i + ITEMS <= limit; i += ITEMS) {
        SIMD(prefetch)(dst + i * ts, ITEMS * ts, dst + n * ts);
        for (size_t j0 = 0; j0 < ts; j0 += 16) {
            size_t jb = SIMD(column_start)(ts, j0), rows = ts - jb < 16 ? ts - jb : 16;
            V x[16];
#pragma GCC unroll 16
            for (unsigned r = 0; r < 16; r++)
                x[r] = r < rows ? V_LOADU(src + (jb + r) * stride + i) : V_ZERO();
#pragma GCC unroll 4
            for (unsigned r = 0; r < 4; r++)
                SIMD(round)(x, 16, 3 - r);
            size_t d = i * ts + jb;
#pragma GCC unroll 16
            for (unsigned k = 0; k < 16; k++)
                SIMD(put_half)(dst, ref, d + k * ts, V_LANE0(x[k]));
#ifdef V_LANE1
#pragma GCC unroll 16
            for (unsigned k = 0; k < 16; k++)
                SIMD(put_half)(dst, ref, d + (16 + k) * ts, V_LANE1(x[k]));
#endif
        }
    }
    return i;
}

#ifdef V_PICK_BYTES
/* Typesizes 3, 5, 6 and 7, where a 16 x 16 tile would mostly carry bytes nobody
 * wants: each 16-byte lane of a row (or of the item stream) is picked together from
 * the ts lanes it draws on, one byte table per pair of lanes (V_PICK_BYTES). A table
 * entry with the top bit set picks nothing. */
enum { SMALL_MAX = 7 };

/* Row j, lane of 16 items: byte p is item byte p * ts + j of the 16 * ts loaded. */
static void SIMD(row_tables)(size_t ts, uint8_t tab[SMALL_MAX][SMALL_MAX][16])
{
    for (size_t j = 0; j < ts; j++)
        for (size_t v = 0; v < ts; v++)
            for (size_t p = 0; p < 16; p++) {
                size_t at = p * ts + j;
                tab[j][v][p] = at >= 16 * v && at < 16 * v + 16 ? (uint8_t)(at - 16 * v) : 0x80;
            }
}

/* Item-stream lane v: byte q is byte (16 v + q) % ts of item (16 v + q) / ts. */
static void SIMD(stream_tables)(size_t ts, uint8_t tab[SMALL_MAX][SMALL_MAX][16])
{
    for (size_t v = 0; v < ts; v++)
        for (size_t j = 0; j < ts; j++)
            for (size_t q = 0; q < 16; q++) {
                size_t at = 16 * v + q;
                tab[v][j][q] = at % ts == j ? (uint8_t)(at / ts) : 0x80;
            }
}

B2K_INLINE size_t SIMD(shuffle_small)(size_t ts, size_t n, const uint8_t *src, uint8_t *dst,
                                      size_t stride)
{
    uint8_t tab[SMALL_MAX][SMALL_MAX][16];
    SIMD(row_tables)(ts, tab);
    size_t i = 0;
    for (; i + ITEMS <= n; i += ITEMS) {
        const uint8_t *s = src + i * ts;
        SIMD(prefetch)(s, ITEMS * ts, src + n * ts);
        V x[SMALL_MAX];
#pragma GCC unroll 7
        for (size_t v = 0; v < ts; v++)
            x[v] = V_LOAD_LANES(s + 16 * v, s + 16 * ts + 16 * v);
#pragma GCC unroll 7
        for (size_t j = 0; j < ts; j++) {
            V r = V_PICK_BYTES(x[0], tab[j][0]);
#pragma GCC unroll 7
            for (size_t v = 1; v < ts; v++)
                r = V_OR(r, V_PICK_BYTES(x[v], tab[j][v]));
            V_STOREU(dst + j * stride + i, r);
        }
    }
    return i;
}

B2K_INLINE size_t SIMD(unshuffle_small)(size_t ts, size_t n, const uint8_t *src,
                                        size_t stride, uint8_t *dst, const uint8_t *ref)
{
    uint8_t tab[SMALL_MAX][SMALL_MAX][16];
    SIMD(stream_tables)(ts, tab);
    size_t i = 0;
    for (; i + ITEMS <= n; i += ITEMS) {
        SIMD(prefetch)(dst + i * ts, ITEMS * ts, dst + n * ts);
        V x[SMALL_MAX];
#pragma GCC unroll 7
        for (size_t j = 0; j < ts; j++)
            x[j] = V_LOADU(src + j * stride + i);
        size_t d = i * ts;
#pragma GCC unroll 7
        for (size_t v = 0; v < ts; v++) {
            V r = V_PICK_BYTES(x[0], tab[v][0]);
#pragma GCC unroll 7
            for (size_t j = 1; j < ts; j++)
                r = V_OR(r, V_PICK_BYTES(x[j], tab[v][j]));
            SIMD(put_half)(dst, ref, d + 16 * v, V_LANE0(r));
#ifdef V_LANE1
            SIMD(put_half)(dst, ref, d + 16 * ts + 16 * v, V_LANE1(r));
#endif
        }
    }
    return i;
}
#endif

B2K_TARGET static void SIMD(shuffle)(size_t ts, size_t n, const uint8_t *src, uint8_t *dst,
                                     size_t stride)
{
    size_t done;
    switch (ts) {
    case 2: done = SIMD(shuffle_pow2)(1, n, src, dst, stride); break;
    case 4: done = SIMD(shuffle_pow2)(2, n, src, dst, stride); break;
    case 8: done = SIMD(shuffle_pow2)(3, n, src, dst, stride); break;
    case 16: done = SIMD(shuffle_pow2)(4, n, src, dst, stride); break;
#ifdef V_PICK_BYTES
    case 3: done = SIMD(shuffle_small)(3, n, src, dst, stride); break;
    case 5: done = SIMD(shuffle_small)(5, n, src, dst, stride); break;
    case 6: done = SIMD(shuffle_small)(6, n, src, dst, stride); break;
    case 7: done = SIMD(shuffle_small)(7, n, src, dst, stride); break;
#endif
    default: done = SIMD(shuffle_any)(ts, n, src, dst, stride); break;
    }
    if (done < n)
        b2k_generic_shuffle(ts, n - done, src + done * ts, dst + done, stride);
}

/* Written once for both unshuffle primitives: ref NULL is the plain one. */
B2K_INLINE void SIMD(unshuffle_to)(size_t ts, size_t n, const uint8_t *src, size_t stride,
                                   uint8_t *dst, const uint8_t *ref)
{
    size_t done;
    switch (ts) {
    case 2: done = SIMD(unshuffle_pow2)(1, n, src, stride, dst, ref); break;
    case 4: done = SIMD(unshuffle_pow2)(2, n, src, stride, dst, ref); break;
    case 8: done = SIMD(unshuffle_pow2)(3, n, src, stride, dst, ref); break;
    case 16: done = SIMD(unshuffle_pow2)(4, n, src, stride, dst, ref); break;
#ifdef V_PICK_BYTES
    case 3: done = SIMD(unshuffle_small)(3, n, src, stride, dst, ref); break;
    case 5: done = SIMD(unshuffle_small)(5, n, src, stride, dst, ref); break;
    case 6: done = SIMD(unshuffle_small)(6, n, src, stride, dst, ref); break;
    case 7: done = SIMD(unshuffle_small)(7, n, src, stride, dst, ref); break;
#endif
    default: done = SIMD(unshuffle_any)(ts, n, src, stride, dst, ref); break;
    }
    if (done < n && ref != NULL)
        b2k_generic_unshuffle_xor(ts, n - done, src + done, stride, dst + done * ts,
                                  ref + done * ts);
    else if (done < n)
        b2k_generic_unshuffle(ts, n - done, src + done, stride, dst + done * ts);
}

B2K_TARGET static void SIMD(unshuffle)(size_t ts, size_t n, const uint8_t *src,
                                       size_t stride, uint8_t *dst)
{
    SIMD(unshuffle_to)(ts, n, src, stride, dst, NULL);
}

B2K_TARGET static void SIMD(unshuffle_xor)(size_t ts, size_t n, const uint8_t *src,
                                           size_t stride, uint8_t *dst, const uint8_t *ref)
{
    SIMD(unshuffle_to)(ts, n, src, stride, dst, ref);
}

/* Four vectors a step, as the loads of both sources then keep several lines in flight. */
B2K_TARGET static void SIMD(xor)(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 4 * VBYTES <= n; i += 4 * VBYTES) {
        V x[4];
#pragma GCC unroll 4
        for (unsigned k = 0; k < 4; k++)
            x[k] = V_XOR(V_LOADU(a + i + k * VBYTES), V_LOADU(b + i + k * VBYTES));
#pragma GCC unroll 4
        for (unsigned k = 0; k < 4; k++)
            V_STOREU(dst + i + k * VBYTES, x[k]);
    }
    for (; i + VBYTES <= n; i += VBYTES)
        V_STOREU(dst + i, V_XOR(V_LOADU(a + i), V_LOADU(b + i)));
    if (i < n)
        b2k_generic_xor(dst + i, a + i, b + i, n - i);
}

/* b2k_transpose8x8 on every 64-bit lane. */
B2K_INLINE V SIMD(swap_bits)(V x, uint64_t mask, int shift)
{
    V t = V_AND(V_XOR(x, V_SRLI64(x, shift)), V_SET1_64((long long)mask));
    return V_XOR(V_XOR(x, t), V_SLLI64(t, shift));
}

B2K_TARGET static void SIMD(bit_transpose)(size_t nwords, const uint8_t *src, uint8_t *dst)
{
    const size_t per = VBYTES / 8;
    size_t w = 0;
    for (; w + per <= nwords; w += per) {
        V x = V_LOADU(src + 8 * w);
        x = SIMD(swap_bits)(x, 0x00AA00AA00AA00AAull, 7);
        x = SIMD(swap_bits)(x, 0x0000CCCC0000CCCCull, 14);
        x = SIMD(swap_bits)(x, 0x00000000F0F0F0F0ull, 28);
        V_STOREU(dst + 8 * w, x);
    }
    if (w < nwords)
        b2k_generic_bit_transpose(nwords - w, src + 8 * w, dst + 8 * w);
}

/* Delta's block 0: the running XOR of its words (w = 1, 2, 4 or 8 bytes). Each vector
 * gets the XOR of the words before it inside itself (shifts within each lane, then lane
 * 0's last word into lane 1), and the XOR of everything before the vector as `carry`;
 * the carry only depends on the previous vectors' own sums, so the loop's chain is one
 * XOR per vector. */
B2K_INLINE V SIMD(last_word_in_lanes)(V x, size_t w)
{
    x = V_SHUF32(x, 0xEE);              /* each lane: its top 8 bytes, twice */
    if (w == 1)
        x = V_UNPACKHI8(x, x);          /* top 8 bytes, each twice */
    if (w <= 2)
        x = V_SHUFHI16(x, 0xFF);
    if (w <= 4)
        x = V_SHUF32(x, 0xFF);
    return x;
}

B2K_INLINE V SIMD(prefix_in_vector)(V x, size_t w)
{
    if (w <= 1)
        x = V_XOR(x, V_BSLLI(x, 1));
    if (w <= 2)
        x = V_XOR(x, V_BSLLI(x, 2));
    if (w <= 4)
        x = V_XOR(x, V_BSLLI(x, 4));
    x = V_XOR(x, V_BSLLI(x, 8));
#ifdef V_LANE0_UP
    x = V_XOR(x, V_LANE0_UP(SIMD(last_word_in_lanes)(x, w)));
#endif
    return x;
}

B2K_INLINE void SIMD(prefix_xor_w)(size_t w, uint8_t *buf, size_t n)
{
    size_t i = 0;
    V carry = V_ZERO();
    for (; i + 2 * VBYTES <= n; i += 2 * VBYTES) {
        V a = SIMD(prefix_in_vector)(V_LOADU(buf + i), w);
        V b = SIMD(prefix_in_vector)(V_LOADU(buf + i + VBYTES), w);
        V ta = V_LANE1_BOTH(SIMD(last_word_in_lanes)(a, w));
        V tb = V_LANE1_BOTH(SIMD(last_word_in_lanes)(b, w));
        V_STOREU(buf + i, V_XOR(a, carry));
        V_STOREU(buf + i + VBYTES, V_XOR(b, V_XOR(carry, ta)));
        carry = V_XOR(carry, V_XOR(ta, tb));
    }
    /* the last word done stands before the rest as its first */
    if (i > 0)
        b2k_generic_prefix_xor(w, buf + i - w, n - i + w);
    else
        b2k_generic_prefix_xor(w, buf, n);
}

B2K_TARGET static void SIMD(prefix_xor)(size_t w, uint8_t *buf, size_t n)
{
    switch (w) {
    case 1: SIMD(prefix_xor_w)(1, buf, n); break;
    case 2: SIMD(prefix_xor_w)(2, buf, n); break;
    case 4: SIMD(prefix_xor_w)(4, buf, n); break;
    default: SIMD(prefix_xor_w)(8, buf, n); break;
    }
}

/* Bytedelta. The differences read each vector a second time one byte earlier; the sums
 * add up each vector in log steps (per lane, then lane 0's total into lane 1) and carry
 * the running total, the last byte broadcast, from vector to vector. */
B2K_TARGET static void SIMD(byte_differences)(const uint8_t *src, uint8_t *dst, size_t n)
{
    size_t i = 1;
    for (; i + VBYTES <= n; i += VBYTES)
        V_STOREU(dst + i, V_SUB8(V_LOADU(src + i), V_LOADU(src + i - 1)));
    for (; i < n; i++)
        dst[i] = (uint8_t)(src[i] - src[i - 1]);
    if (n > 0)
        dst[0] = src[0];
}

B2K_TARGET static void SIMD(byte_sums)(const uint8_t *src, uint8_t *dst, size_t n)
{
    size_t i = 0;
    V carry = V_ZERO();
    for (; i + VBYTES <= n; i += VBYTES) {
        V x = V_LOADU(src + i);
        x = V_ADD8(x, V_BSLLI(x, 1));
        x = V_ADD8(x, V_BSLLI(x, 2));
        x = V_ADD8(x, V_BSLLI(x, 4));
        x = V_ADD8(x, V_BSLLI(x, 8));
#ifdef V_LANE0_UP
        x = V_ADD8(x, V_LANE0_UP(SIMD(last_word_in_lanes)(x, 1)));
#endif
        x = V_ADD8(x, carry);
        V_STOREU(dst + i, x);
        carry = V_LANE1_BOTH(SIMD(last_word_in_lanes)(x, 1));
    }
    uint8_t acc = i > 0 ? dst[i - 1] : 0;
    for (; i < n; i++)
        dst[i] = acc = (uint8_t)(acc + src[i]);
}

#undef ITEMS
#undef B2K_INLINE
