/* The 6-slot filter pipeline on one block: forward when encoding (slot 0 first),
 * backward when decoding (slot 5 first). The kernels are in shuffle/. */
#include <string.h>

#include "codec/codec_private.h"
#include "shuffle/shuffle.h"

int b2_pipeline_check(const uint8_t filters[B2_MAX_FILTERS], const uint8_t meta[B2_MAX_FILTERS],
                      int typesize, int encode)
{
    int shuffled = 0, deltas = 0;
    for (int i = 0; i < B2_MAX_FILTERS; i++) {
        if (!b2_filter_known(filters[i]))
            return B2E_FILTER;
        shuffled |= filters[i] == B2_SHUFFLE || filters[i] == B2_BITSHUFFLE;
        /* C-Blosc2 2.x and 3.x undo a delta that follows a shuffle differently: write
         * only pipelines both read the same way (delta once, before any shuffle). */
        if (encode && filters[i] == B2_DELTA && (shuffled || deltas++ > 0))
            return B2E_FILTER;
        /* the truncations refuse what they cannot do: try one item */
        uint8_t item[8] = {0}, out[8];
        if (encode && filters[i] == B2_TRUNC_PREC &&
            b2_trunc_prec((int8_t)meta[i], (size_t)typesize, (size_t)typesize, item, out) < 0)
            return B2E_FILTER;
        if (encode && filters[i] == B2_INT_TRUNC &&
            b2_int_trunc((int8_t)meta[i], (size_t)typesize, (size_t)typesize, item, out) < 0)
            return B2E_FILTER;
    }
    return B2E_OK;
}

int b2_pipeline_uses_delta(const uint8_t filters[B2_MAX_FILTERS])
{
    return memchr(filters, B2_DELTA, B2_MAX_FILTERS) != NULL;
}

int b2_pipeline_backward(const b2_chunk_info *in, size_t offset, size_t len, uint8_t *buf,
                         uint8_t *spare, const uint8_t *dref, uint8_t *out)
{
    /* Delta and bytedelta work in place: the last (un)shuffle writes straight into out
     * and any of them after it run there, which saves a copy of the block (and a pass
     * through another buffer). `left` counts the (un)shuffles still to do. */
    int left = 0;
    for (int i = 0; i < B2_MAX_FILTERS; i++)
        left += in->filters[i] == B2_SHUFFLE || in->filters[i] == B2_BITSHUFFLE;
    uint8_t *cur = buf;
    for (int i = B2_MAX_FILTERS - 1; i >= 0; i--) {
        uint8_t f = in->filters[i];
        if (!b2_filter_undone(f))
            continue;
        if (f == B2_DELTA) {
            /* Block 0 is its own reference; the others use the decoded block 0. */
            b2_delta_decode(offset == 0 ? cur : dref, offset, len, in->typesize, cur);
            continue;
        }
        if (f == B2_BYTEDELTA) {
            uint8_t *dst = left == 0 ? out : cur;
            b2_bytedelta_decode(b2_filter_streams(in->filters_meta[i], in->typesize), len, cur,
                                dst);
            cur = dst;
            continue;
        }
        if (f == B2_SHUFFLE || f == B2_BITSHUFFLE)
            left--;
        uint8_t *dst = left == 0 ? out : (cur == buf ? spare : buf);
        /* the next filter to undo, if it is a delta, is folded into the unshuffle */
        int next = i - 1;
        while (next >= 0 && !b2_filter_undone(in->filters[next]))
            next--;
        if (f == B2_SHUFFLE && next >= 0 && in->filters[next] == B2_DELTA) {
            size_t group = b2_filter_streams(in->filters_meta[i], in->typesize);
            b2_unshuffle_delta(group, len, cur, dst, dref, offset, in->typesize);
            i = next;
        } else if (f == B2_SHUFFLE) {
            size_t group = b2_filter_streams(in->filters_meta[i], in->typesize);
            b2_unshuffle(group, len, cur, dst);
        } else if (f == B2_BITSHUFFLE) {
            b2_bitunshuffle(in->typesize, len, cur, dst, in->version <= 2);
        } else {
            return B2E_FILTER;
        }
        cur = dst;
    }
    if (cur != out)
        memcpy(out, cur, len);
    return B2E_OK;
}

const uint8_t *b2_pipeline_forward(const uint8_t filters[B2_MAX_FILTERS],
                                   const uint8_t meta[B2_MAX_FILTERS], int typesize,
                                   int blosc1_layout, const uint8_t *chunk, size_t offset,
                                   size_t len, const uint8_t *dref, uint8_t *s1, uint8_t *s2)
{
    const uint8_t *cur = chunk + offset;
    for (int i = 0; i < B2_MAX_FILTERS; i++) {
        uint8_t f = filters[i];
        if (f == B2_NOFILTER)
            continue;
        uint8_t *dst = cur == s1 ? s2 : s1;
        switch (f) {
        case B2_SHUFFLE:
            b2_shuffle(b2_filter_streams(meta[i], typesize), len, cur, dst);
            break;
        case B2_BITSHUFFLE:
            b2_bitshuffle((size_t)typesize, len, cur, dst, blosc1_layout);
            break;
        case B2_DELTA:
            /* Block 0 is coded against itself as it stands here. */
            b2_delta_encode(offset == 0 ? cur : dref, offset, len, (size_t)typesize, cur, dst);
            break;
        case B2_TRUNC_PREC:
            if (b2_trunc_prec((int8_t)meta[i], (size_t)typesize, len, cur, dst) < 0)
                return NULL;
            break;
        case B2_BYTEDELTA:
            b2_bytedelta_encode(b2_filter_streams(meta[i], typesize), len, cur, dst);
            break;
        case B2_INT_TRUNC:
            if (b2_int_trunc((int8_t)meta[i], (size_t)typesize, len, cur, dst) < 0)
                return NULL;
            break;
        default:
            return NULL;
        }
        cur = dst;
    }
    return cur;
}
