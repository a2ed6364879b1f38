/* The b2nd metalayer parser: the layouts C-Blosc2 writes (7 fields with a dtype, the older
 * 5 without), 0 to 8 dimensions, and refusal of what does not add up (more than 8
 * dimensions, negative sizes, blocks larger than chunks, products that overflow, short
 * or malformed input) without reading past the value. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "frame/frame.h"

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

int main(void)
{
    Suite *s = suite_create("b2nd metalayer");
    TCase *tc = tcase_create("b2nd");
    tcase_add_test(tc, layouts);
    tcase_add_test(tc, refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
