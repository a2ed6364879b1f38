/* The b2nd metalayer parser: the layouts C-Blosc2 writes (7 fields with a dtype, the older
 * 5 without), 0 to 8 dimensions, and refusal of what does not add up (more than 8
 * dimensions, negative sizes, blocks larger than chunks, products that overflow, short
 * or malformed input) without reading past the value. The metalayer b2fs writes is
 * C-Blosc2's byte for byte; new arrays get python-blosc2's chunk and block shapes; the
 * map of items to chunks, and the last item of each block and chunk, agree with a walk
 * of the chunk layout; .npy headers are NumPy's and parse back. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "frame/frame.h"
#include "tests/lib/testutil.h"

/* A metalayer value as C-Blosc2's b2nd_serialize_meta writes it. */
static size_t build(uint8_t *out, int fields, int ndim, const int64_t *shape, const int32_t *chunk,
                    const int32_t *block, const char *dtype)
{
    size_t n = 0;
    out[n++] = (uint8_t)(0x90 | fields);
    out[n++] = 0;                 /* version */
    out[n++] = (uint8_t)ndim;
    out[n++] = (uint8_t)(0x90 | ndim);
    for (int i = 0; i < ndim; i++) {
        out[n++] = 0xd3;
        for (int b = 7; b >= 0; b--)
            out[n++] = (uint8_t)((uint64_t)shape[i] >> (8 * b));
    }
    for (int k = 0; k < 2; k++) {
        const int32_t *d = k ? block : chunk;
        out[n++] = (uint8_t)(0x90 | ndim);
        for (int i = 0; i < ndim; i++) {
            out[n++] = 0xd2;
            for (int b = 3; b >= 0; b--)
                out[n++] = (uint8_t)((uint32_t)d[i] >> (8 * b));
        }
    }
    if (fields == 7) {
        out[n++] = 0;             /* dtype format: NumPy */
        size_t l = strlen(dtype);
        out[n++] = 0xdb;
        for (int b = 3; b >= 0; b--)
            out[n++] = (uint8_t)(l >> (8 * b));
        memcpy(out + n, dtype, l);
        n += l;
    }
    return n;
}

START_TEST(layouts)
{
    uint8_t m[512];
    b2f_ndinfo nd;
    char text[64];
    int64_t shape[3] = {1000, 700, 3};
    int32_t chunk[3] = {300, 256, 3}, block[3] = {60, 64, 1};
    size_t n = build(m, 7, 2, shape, chunk, block, "<i4");
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, NULL, 0), 0);
    ck_assert_int_eq(nd.ndim, 2);
    ck_assert_uint_eq(nd.items, 700000);
    ck_assert_str_eq(nd.dtype, "<i4");
    ck_assert_int_eq(b2f_nd_format(&nd, B2F_ND_SHAPE, text, sizeof text), 0);
    ck_assert_str_eq(text, "1000,700");
    ck_assert_int_eq(b2f_nd_format(&nd, B2F_ND_BLOCKSHAPE, text, sizeof text), 0);
    ck_assert_str_eq(text, "60,64");
    ck_assert_int_eq(b2f_nd_format(&nd, B2F_ND_SHAPE, text, 5), B2F_ERANGE);
    /* the older layout: no dtype */
    n = build(m, 5, 3, shape, chunk, block, NULL);
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, NULL, 0), 0);
    ck_assert_int_eq(nd.dtype_format, -1);
    ck_assert_str_eq(nd.dtype, "");
    /* 0 dimensions: one item */
    n = build(m, 7, 0, shape, chunk, block, "<U6");
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, NULL, 0), 0);
    ck_assert_uint_eq(nd.items, 1);
    /* an empty dimension */
    int64_t empty[2] = {0, 5};
    n = build(m, 7, 2, empty, chunk, block, "<f8");
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, NULL, 0), 0);
    ck_assert_uint_eq(nd.items, 0);
}
END_TEST

START_TEST(refused)
{
    uint8_t m[512];
    b2f_ndinfo nd;
    char err[128];
    int64_t shape[9] = {4, 4, 4, 4, 4, 4, 4, 4, 4};
    int32_t chunk[9] = {2, 2, 2, 2, 2, 2, 2, 2, 2}, block[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    size_t n = build(m, 7, 9, shape, chunk, block, "<i4");
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, err, sizeof err), B2F_EMETA);
    ck_assert(strstr(err, "ndim") != NULL);
    int64_t neg[2] = {-1, 4};
    n = build(m, 7, 2, neg, chunk, block, "<i4");
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, err, sizeof err), B2F_EMETA);
    int32_t big_block[2] = {3, 1};
    n = build(m, 7, 2, shape, chunk, big_block, "<i4");
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, err, sizeof err), B2F_EMETA);
    int32_t zero_chunk[2] = {0, 2};
    n = build(m, 7, 2, shape, zero_chunk, block, "<i4");
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, err, sizeof err), B2F_EMETA);
    int64_t huge[3] = {INT64_MAX, INT64_MAX, 2};
    n = build(m, 7, 3, huge, chunk, block, "<i4");
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, err, sizeof err), B2F_EMETA);
    int32_t huge_chunk[3] = {INT32_MAX, INT32_MAX, 2};
    int64_t hs[3] = {INT32_MAX, INT32_MAX, 2};
    n = build(m, 7, 3, hs, huge_chunk, block, "<i4");
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, err, sizeof err), B2F_EMETA);
    /* every truncation of a good value is refused, never read past */
    n = build(m, 7, 2, shape, chunk, block, "<i4");
    for (size_t cut = 0; cut < n; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, m, cut);
        ck_assert_int_eq(b2f_nd_parse(copy, cut, &nd, NULL, 0), B2F_EMETA);
        free(copy);
    }
    /* a dtype length past the end */
    m[n - 4] = 0x7f;
    ck_assert_int_eq(b2f_nd_parse(m, n, &nd, NULL, 0), B2F_EMETA);
}
END_TEST

START_TEST(serialize)
{
    b2f_ndinfo nd = {.ndim = 2, .shape = {20, 30}, .chunkshape = {8, 8}, .blockshape = {4, 4},
                     .dtype = "|S4"};
    uint8_t want[256], got[256];
    size_t n = build(want, 7, 2, nd.shape, nd.chunkshape, nd.blockshape, nd.dtype);
    ck_assert_int_eq(b2f_nd_serialize(&nd, got, sizeof got), (int)n);
    ck_assert_mem_eq(got, want, n);
    ck_assert_int_eq(b2f_nd_serialize(&nd, got, 10), B2F_ERANGE);
    b2f_ndinfo scalar = {.ndim = 0, .dtype = "<f8"};
    static const uint8_t s0[] = {0x97, 0, 0, 0x90, 0x90, 0x90, 0, 0xdb, 0, 0, 0, 3, '<', 'f', '8'};
    ck_assert_int_eq(b2f_nd_serialize(&scalar, got, sizeof got), (int)sizeof s0);
    ck_assert_mem_eq(got, s0, sizeof s0);
}
END_TEST

/* python-blosc2's defaults (its compute_chunks_blocks with the cache sizes it assumes
 * when it cannot read the machine's), traced by hand through its code */
START_TEST(chosen_shapes)
{
    static const struct {
        int ndim, itemsize;
        int64_t shape[3];
        int32_t chunk[3], block[3];
    } t[] = {
        {2, 4, {1000, 700}, {1000, 700}, {20, 700}},
        {2, 8, {300, 200}, {300, 200}, {30, 200}},
        {2, 8, {10000, 10000}, {50, 10000}, {1, 5000}},
        {1, 8, {1000000}, {504000}, {8000}},
        {3, 1, {3000, 3000, 3}, {378, 3000, 3}, {6, 3000, 3}},
        {1, 4, {1000}, {1000}, {1000}},
        {3, 8, {17, 13, 11}, {17, 13, 11}, {17, 13, 11}},
        {2, 4, {0, 5}, {0, 5}, {0, 5}},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        b2f_ndinfo nd = {.ndim = t[i].ndim};
        memcpy(nd.shape, t[i].shape, sizeof t[i].shape);
        b2f_nd_choose_shapes(&nd, t[i].itemsize);
        for (int d = 0; d < t[i].ndim; d++) {
            ck_assert_msg(nd.chunkshape[d] == t[i].chunk[d] && nd.blockshape[d] == t[i].block[d],
                          "case %zu dim %d: chunk %d block %d, want %d %d", i, d,
                          nd.chunkshape[d], nd.blockshape[d], t[i].chunk[d], t[i].block[d]);
        }
    }
}
END_TEST

/* Where item x of the array is in its chunk, walked the way C-Blosc2 lays chunks out. */
static void slow_locate(const b2f_ndinfo *nd, int itemsize, uint64_t item, int64_t *chunk,
                        uint64_t *off)
{
    int64_t x[B2F_ND_MAX];
    uint64_t rest = item;
    for (int i = nd->ndim - 1; i >= 0; i--) {
        x[i] = (int64_t)(rest % (uint64_t)nd->shape[i]);
        rest /= (uint64_t)nd->shape[i];
    }
    int64_t c = 0, b = 0, in = 0, bitems = 1;
    for (int i = 0; i < nd->ndim; i++) {
        int64_t nch = (nd->shape[i] + nd->chunkshape[i] - 1) / nd->chunkshape[i];
        int64_t nbl = (nd->chunkshape[i] + nd->blockshape[i] - 1) / nd->blockshape[i];
        int64_t w = x[i] % nd->chunkshape[i];
        c = c * nch + x[i] / nd->chunkshape[i];
        b = b * nbl + w / nd->blockshape[i];
        in = in * nd->blockshape[i] + w % nd->blockshape[i];
        bitems *= nd->blockshape[i];
    }
    *chunk = c;
    *off = (uint64_t)((b * bitems + in) * itemsize);
}

static int count_run(void *ctx, uint64_t item, uint32_t offset, uint64_t n)
{
    uint64_t *seen = ctx;
    (void)item;
    (void)offset;
    *seen += n;
    return 0;
}

START_TEST(item_map)
{
    static const struct {
        int ndim;
        int64_t shape[4];
        int32_t chunk[4], block[4];
    } t[] = {
        {2, {1000, 70}, {300, 25}, {64, 10}},
        {3, {17, 13, 11}, {8, 6, 5}, {3, 4, 2}},
        {2, {10, 10}, {16, 16}, {8, 8}},
        {2, {12, 10}, {6, 10}, {2, 10}},      /* whole rows in a block: long runs */
        {4, {3, 4, 5, 6}, {2, 4, 5, 6}, {1, 4, 5, 6}},
        {1, {1000}, {300}, {64}},
        {0, {0}, {0}, {0}},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        b2f_ndinfo nd = {.ndim = t[i].ndim};
        memcpy(nd.shape, t[i].shape, sizeof t[i].shape);
        memcpy(nd.chunkshape, t[i].chunk, sizeof t[i].chunk);
        memcpy(nd.blockshape, t[i].block, sizeof t[i].block);
        nd.items = 1;
        for (int d = 0; d < nd.ndim; d++)
            nd.items *= (uint64_t)nd.shape[d];
        b2f_ndmap m;
        ck_assert_int_eq(b2f_ndmap_init(&m, &nd, 2), 0);
        for (uint64_t item = 0; item < nd.items; item++) {
            int64_t c, want_c;
            uint32_t off;
            uint64_t run, want_off;
            b2f_ndmap_locate(&m, item, &c, &off, &run);
            slow_locate(&nd, 2, item, &want_c, &want_off);
            ck_assert_msg(c == want_c && off == want_off, "case %zu item %llu", i,
                          (unsigned long long)item);
            /* every item of the run follows in the same chunk */
            ck_assert_uint_ge(run, 1);
            for (uint64_t k = 1; k < run; k++) {
                slow_locate(&nd, 2, item + k, &want_c, &want_off);
                ck_assert(want_c == c && want_off == off + 2 * k);
            }
        }
        uint64_t seen = 0;
        for (int64_t c = 0; c < m.nchunks; c++)
            ck_assert_int_eq(b2f_ndmap_chunk_runs(&m, c, count_run, &seen), 0);
        ck_assert_uint_eq(seen, nd.items);
        /* the last item of each block, and of each chunk, is the largest one the walk puts
         * there */
        int64_t nblocks = (int64_t)(m.chunk_bytes / 2 / m.block_items);
        for (int64_t c = 0; c < m.nchunks; c++) {
            int64_t chunk_last = -1;
            for (int32_t b = 0; b < nblocks; b++) {
                int64_t last = -1;
                for (uint64_t item = 0; item < nd.items; item++) {
                    int64_t wc;
                    uint64_t wo;
                    slow_locate(&nd, 2, item, &wc, &wo);
                    if (wc == c && (int64_t)(wo / 2 / m.block_items) == b)
                        last = (int64_t)item;
                }
                uint64_t got;
                int r = b2f_ndmap_block_last(&m, c, b, &got);
                ck_assert_msg(last < 0 ? r < 0 : r == 0 && got == (uint64_t)last,
                              "case %zu chunk %lld block %d", i, (long long)c, b);
                if (last > chunk_last)
                    chunk_last = last;
            }
            uint64_t got;
            ck_assert_int_eq(b2f_ndmap_block_last(&m, c, -1, &got), 0);
            ck_assert_uint_eq(got, (uint64_t)chunk_last);
        }
    }
}
END_TEST

START_TEST(npy_headers)
{
    b2f_ndinfo nd = {.ndim = 2, .shape = {1000, 700}, .dtype = "<i4"};
    char h[1024];
    int n = b2f_npy_header(&nd, 4, h, sizeof h);
    const char *want = "{'descr': '<i4', 'fortran_order': False, 'shape': (1000, 700), }";
    ck_assert_int_eq(n, 128);
    ck_assert_mem_eq(h, "\x93NUMPY\x01\x00\x76\x00", 10);
    ck_assert_mem_eq(h + 10, want, strlen(want));
    ck_assert_int_eq(h[127], '\n');
    b2f_npyinfo npy;
    ck_assert_int_eq(b2f_npy_parse((uint8_t *)h, (size_t)n, &npy, NULL, 0), 0);
    ck_assert_int_eq(npy.ndim, 2);
    ck_assert_int_eq(npy.shape[1], 700);
    ck_assert_str_eq(npy.dtype, "<i4");
    ck_assert_int_eq(npy.itemsize, 4);
    ck_assert_uint_eq(npy.header_len, 128);
    /* 1-d, 0-d, a structured dtype kept as its text, no dtype */
    b2f_ndinfo one = {.ndim = 1, .shape = {5}, .dtype = "[('a', '<i4'), ('b', 'S3')]"};
    memset(h, 0, sizeof h);
    n = b2f_npy_header(&one, 7, h, sizeof h);
    ck_assert_ptr_nonnull(strstr(h + 10, "'descr': [('a', '<i4'), ('b', 'S3')], 'fortran_order': False, 'shape': (5,), }"));
    ck_assert_int_eq(b2f_npy_parse((uint8_t *)h, (size_t)n, &npy, NULL, 0), 0);
    ck_assert_str_eq(npy.dtype, "[('a', '<i4'), ('b', 'S3')]");
    ck_assert_int_eq(npy.itemsize, 0);
    b2f_ndinfo zero = {.ndim = 0, .dtype = ""};
    memset(h, 0, sizeof h);
    n = b2f_npy_header(&zero, 6, h, sizeof h);
    ck_assert_ptr_nonnull(strstr(h + 10, "{'descr': '|V6', 'fortran_order': False, 'shape': (), }"));
    ck_assert_int_eq(n % 64, 0);
    /* a dtype smaller than the items (C-Blosc2's example_item_prices): raw items */
    b2f_ndinfo small = {.ndim = 1, .shape = {3}, .dtype = "|u1"};
    memset(h, 0, sizeof h);
    ck_assert_int_gt(b2f_npy_header(&small, 4, h, sizeof h), 0);
    ck_assert_ptr_nonnull(strstr(h + 10, "{'descr': '|V4',"));
    /* what is refused */
    b2f_ndinfo obj = {.ndim = 1, .shape = {3}, .dtype = "|O"};
    ck_assert_int_eq(b2f_npy_header(&obj, 8, h, sizeof h), B2F_EMETA);
    ck_assert_int_eq(b2f_npy_header(&nd, 4, h, 100), B2F_ERANGE);
    ck_assert_int_eq(b2f_npy_itemsize("<U5"), 20);
    ck_assert_int_eq(b2f_npy_itemsize("<M8[s]"), 8);
    ck_assert_int_eq(b2f_npy_itemsize("|b1"), 1);
    ck_assert_int_eq(b2f_npy_itemsize("|O"), B2F_EMETA);
    static const char *bad[] = {
        "{'descr': '<i4', 'fortran_order': False, }",
        "{'descr': '<i4', 'fortran_order': Maybe, 'shape': (3,), }",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (3,-1), }",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (1,2,3,4,5,6,7,8,9), }",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
        "{'descr': '<i4' 'fortran_order': False, 'shape': (3,), }",
    };
    /* version 2.0 has a 4-byte length: 10 bytes are short of it (found by fuzz_frame) */
    ck_assert_int_eq(b2f_npy_parse((const uint8_t *)"\x93NUMPY\x02\x00\x10\x00", 10, &npy, NULL, 0),
                     B2F_ERANGE);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t f[256] = "\x93NUMPY\x01\x00";
        size_t l = strlen(bad[i]);
        f[8] = (uint8_t)l;
        f[9] = 0;
        memcpy(f + 10, bad[i], l);
        ck_assert_msg(b2f_npy_parse(f, 10 + l, &npy, NULL, 0) < 0, "accepted: %s", bad[i]);
        ck_assert_int_eq(b2f_npy_parse(f, 10 + l - 1, &npy, NULL, 0), B2F_ERANGE);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("b2nd metalayer");
    TCase *tc = tcase_create("b2nd");
    tcase_add_test(tc, layouts);
    tcase_add_test(tc, refused);
    tcase_add_test(tc, serialize);
    tcase_add_test(tc, chosen_shapes);
    tcase_add_test(tc, item_map);
    tcase_add_test(tc, npy_headers);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
