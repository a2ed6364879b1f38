/* Helpers shared by the Check test programs. */
#ifndef B2FS_TESTUTIL_H
#define B2FS_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <check.h>

/* Path of a file under tests/data (from $top_srcdir, else the source tree at build time).
 * Returns a static buffer. */
const char *tu_data_path(const char *name);
/* Reads a whole file; *len gets its size. NULL on failure (errno set). Caller frees. */
uint8_t *tu_read_file(const char *path, size_t *len);
/* Lowercase hex sha256 of buf into out[65]. */
void tu_sha256_hex(const void *buf, size_t len, char out[65]);

/* One row of a fixtures MANIFEST.tsv: the columns by header name. */
typedef struct tu_manifest {
    int nrows, ncols;
    char **cols;       /* ncols header names */
    char ***rows;      /* nrows x ncols fields */
} tu_manifest;
/* Loads tests/data/<dir>/MANIFEST.tsv. NULL on failure. */
tu_manifest *tu_manifest_load(const char *dir);
/* Field of row r in the named column, or NULL. */
const char *tu_manifest_get(const tu_manifest *m, int r, const char *col);
void tu_manifest_free(tu_manifest *m);

/* Deterministic test data: xorshift bytes, a smooth float32 series, text-like bytes. */
void tu_fill_random(uint8_t *buf, size_t len, uint64_t seed);
void tu_fill_float_series(uint8_t *buf, size_t len, uint64_t seed);
void tu_fill_text(uint8_t *buf, size_t len, uint64_t seed);

/* Runs the suite with Check's normal output, whose closing line CI reads; returns the
 * process exit status (EXIT_SUCCESS only when every test passed). */
int tu_run_suite(Suite *s);

#endif
