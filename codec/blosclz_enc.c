/* BloscLZ stream encoder (stream layout: see blosclz_dec.c).
 *
 * A greedy LZ77 parser with one hash-table probe per position, tuned like the reference
 * encoder so that ratios match it: 4-byte hashed candidates, a match end pulled back by
 * `shift` bytes, matches shorter than `min_len` (after the pull-back) sent as literals,
 * and an entropy probe that gives up early on data that would compress too little.
 * The tuning follows c-blosc 1.21 (what Debian's python3-blosc writes): the probe scans
 * up to 4 KiB from the last quarter of the buffer, and a buffer whose probe ratio is
 * below 4 (or that is a whole unsplit block) is parsed with shift and min_len 3
 * instead of 4. On c-blosc 1.21's own streams the output is byte for byte the same.
 */
#include "codec/blosclz.h"
#include "codec/blosclz_format.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAX_HASH_LOG 14
#define PROBE_HASH_LOG 12
#define MIN_INPUT 16     /* smaller inputs are left to the caller to store raw */
#define MIN_OUTPUT 66

struct parse_tuning {
    int hash_log;
    int shift;          /* bytes the end of a found match is pulled back */
    int min_len;        /* shortest (pulled-back) match worth a match instruction */
    int hash_twice;     /* also index the position after a match (clevel 9) */
};

static inline uint32_t load32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t hash_of(uint32_t v, int hash_log)
{
    return (v * 2654435761u) >> (32 - hash_log);
}

/* Returns the last position indexed under the hash of the 4 bytes at `at` (0 when
 * none was: the table starts zeroed) and indexes `at` in its place. */
static inline size_t swap_candidate(uint32_t *table, int hash_log, const uint8_t *base,
                                    size_t at)
{
    uint32_t h = hash_of(load32(base + at), hash_log);
    size_t cand = table[h];
    table[h] = (uint32_t)at;
    return cand;
}

/* Scans forward from p comparing with r (r < p) and returns one past the first
 * differing byte, or bound when none differs before bound. */
static size_t match_end(const uint8_t *base, size_t p, size_t r, size_t bound)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
    while (p + 8 <= bound) {
        uint64_t diff = load64(base + p) ^ load64(base + r);
        if (diff)
            return p + (size_t)(__builtin_ctzll(diff) >> 3) + 1;
        p += 8;
        r += 8;
    }
#endif
    for (; p < bound; p++, r++)
        if (base[p] != base[r])
            return p + 1;
    return bound;
}

/* Size of the encoding of a match (length already biased), without literals. */
static inline size_t match_cost(size_t len, size_t biased_dist)
{
    size_t extra = len >= 7 ? (len - 7) / 255 + 1 : 0;
    return extra + (biased_dist < BLZ_NEAR_LIMIT ? 2 : 4);
}

/* Estimates the ratio the parse would reach on up to 2^hash_log bytes at base by
 * counting output bytes without writing them. */
static double probe_ratio(const uint8_t *base, size_t n, const struct parse_tuning *t,
                          uint32_t *table)
{
    size_t limit = n < ((size_t)1 << t->hash_log) ? n : (size_t)1 << t->hash_log;
    if (limit <= 12)
        return 0.0;
    size_t scan_end = limit - 12, bound = limit - 1;
    size_t out = 5, pending = 4, i = 0;

    memset(table, 0, sizeof(uint32_t) << t->hash_log);
    while (i < scan_end) {
        size_t at = i;
        size_t cand = swap_candidate(table, t->hash_log, base, at);
        size_t dist = at - cand;
        if (dist != 0 && dist < BLZ_WINDOW && load32(base + cand) == load32(base + at)) {
            size_t end = match_end(base, at + 4, cand + 4, bound) - (size_t)t->shift;
            size_t len = end - at;
            if (len >= (size_t)t->min_len) {
                if (pending == 0)
                    out--;
                pending = 0;
                out += match_cost(len, dist - 1) + 1;
                table[hash_of(load32(base + end), t->hash_log)] = (uint32_t)end;
                i = end + 2;
                continue;
            }
        }
        out++;
        i = at + 1;
        if (++pending == BLZ_MAX_LITERALS) {
            pending = 0;
            out++;
        }
    }
    return (double)i / (double)out;
}

/* Output cursor with its capacity; every put checks room first. */
struct sink {
    uint8_t *p;
    size_t len, cap;
};

static int put_literals(struct sink *s, const uint8_t *src, size_t n)
{
    if (n + (n + BLZ_MAX_LITERALS - 1) / BLZ_MAX_LITERALS > s->cap - s->len)
        return -1;
    while (n > 0) {
        size_t piece = n < BLZ_MAX_LITERALS ? n : BLZ_MAX_LITERALS;
        s->p[s->len++] = (uint8_t)(piece - 1);
        memcpy(s->p + s->len, src, piece);
        s->len += piece;
        src += piece;
        n -= piece;
    }
    return 0;
}

/* len is the match length minus 2 (>= 1); biased_dist the distance minus 1. */
static int put_match(struct sink *s, size_t len, size_t biased_dist)
{
    if (match_cost(len, biased_dist) > s->cap - s->len)
        return -1;
    uint8_t *o = s->p + s->len;
    int far = biased_dist >= BLZ_NEAR_LIMIT;
    size_t far_dist = biased_dist - BLZ_NEAR_LIMIT;
    unsigned high = far ? 31u : (unsigned)(biased_dist >> 8);

    if (len < 7) {
        *o++ = (uint8_t)(len << 5 | high);
    } else {
        *o++ = (uint8_t)(7u << 5 | high);
        for (len -= 7; len >= 255; len -= 255)
            *o++ = 255;
        *o++ = (uint8_t)len;
    }
    if (far) {
        *o++ = 255;
        *o++ = (uint8_t)(far_dist >> 8);
        *o++ = (uint8_t)far_dist;
    } else {
        *o++ = (uint8_t)biased_dist;
    }
    s->len = (size_t)(o - s->p);
    return 0;
}

/* Greedy parse of the whole buffer. Returns the stream size or 0 if it does not fit. */
static int parse(const uint8_t *base, size_t n, uint8_t *dst, size_t cap,
                 const struct parse_tuning *t, uint32_t *table)
{
    struct sink s = { dst, 0, cap };
    size_t scan_end = n - 12, bound = n - 1;
    size_t lit_start = 0, i = 4;   /* the first four bytes always go out as literals */

    memset(table, 0, sizeof(uint32_t) << t->hash_log);
    while (i < scan_end) {
        size_t at = i;
        size_t cand = swap_candidate(table, t->hash_log, base, at);
        size_t dist = at - cand;
        i = at + 1;
        if (dist == 0 || dist >= BLZ_WINDOW || load32(base + cand) != load32(base + at))
            goto literal;
        size_t end = match_end(base, at + 4, cand + 4, bound) - (size_t)t->shift;
        size_t len = end - at;
        /* a far match costs 4 bytes: not worth it for short lengths */
        if (len < (size_t)t->min_len || (len <= 5 && dist - 1 >= BLZ_NEAR_LIMIT))
            goto literal;
        if (put_literals(&s, base + lit_start, at - lit_start) < 0 ||
            put_match(&s, len, dist - 1) < 0)
            return 0;
        uint32_t v = load32(base + end);
        table[hash_of(v, t->hash_log)] = (uint32_t)end;
        if (t->hash_twice)
            table[hash_of(v >> 8, t->hash_log)] = (uint32_t)(end + 1);
        i = end + 2;
        lit_start = i;
        continue;
    literal:
        /* give up as soon as the pending literals alone cannot fit */
        if (i - lit_start + s.len + 2 > cap)
            return 0;
    }
    if (put_literals(&s, base + lit_start, n - lit_start) < 0)
        return 0;
    dst[0] |= BLZ_MARKER;
    return (int)s.len;
}

/* c-blosc 1.21 passes whether the block was split into per-byte streams: an unsplit
 * block is always parsed with the shorter pull-back. */
static int compress_block(int clevel, int split, const void *src, int srclen, void *dst,
                          int dstcap)
{
    /* least probe ratio worth the full parse, per clevel */
    static const double min_probe_ratio[10] = { 0, 2, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0 };
    static const int hash_log_of[10] = { 0, 12, 13, 14, 14, 14, 14, 14, 14, 14 };
    uint32_t table[1u << MAX_HASH_LOG];

    if (clevel < 1 || clevel > 9 || srclen < MIN_INPUT || dstcap < MIN_OUTPUT || !src || !dst)
        return 0;
    const uint8_t *base = src;
    size_t n = (size_t)srclen;

    struct parse_tuning probe = { PROBE_HASH_LOG, 3, 3, 0 };
    size_t probe_len = n / 4;
    double ratio = probe_ratio(base + (n - probe_len), probe_len, &probe, table);
    if (ratio < min_probe_ratio[clevel])
        return 0;

    int shift = split && ratio >= 4 ? 4 : 3;
    struct parse_tuning t = { hash_log_of[clevel], shift, shift, clevel == 9 };
    return parse(base, n, dst, (size_t)dstcap, &t, table);
}

int blosclz_compress(int clevel, const void *src, int srclen, void *dst, int dstcap)
{
    return compress_block(clevel, 1, src, srclen, dst, dstcap);
}

int blosclz_compress_unsplit(int clevel, const void *src, int srclen, void *dst, int dstcap)
{
    return compress_block(clevel, 0, src, srclen, dst, dstcap);
}
