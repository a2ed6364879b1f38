/* Helpers for the fs/ unit tests (fsunit.h). */
#include "tests/fs/fsunit.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/bcache.h"
#include "fs/commit.h"
#include "fs/file.h"
#include "fs/options.h"
#include "fs/paths.h"
#include "fs/wpool.h"

char fsu_dir[64];

void fsu_setup(size_t dirty_limit, int nthreads, size_t cache_size)
{
    strcpy(fsu_dir, "/tmp/b2fs-unit.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(fsu_dir));
    memset(&b2fs_cfg, 0, sizeof b2fs_cfg);
    b2fs_cfg.backing = fsu_dir;
    b2fs_cfg.rootfd = open(fsu_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(b2fs_cfg.rootfd, 0);
    b2f_params_default(&b2fs_cfg.params);
    b2fs_cfg.nthreads = nthreads;
    b2fs_cfg.cache_size = cache_size;
    b2fs_cfg.dirty_limit = dirty_limit;
    b2fs_cfg.foreground = 1;
    node_table_init(commit_retire, NULL);
    bcache_init(cache_size);
    wpool_init(nthreads);
}

void fsu_teardown(void)
{
    commit_all();
    wpool_shutdown();
    bcache_shutdown();
    close(b2fs_cfg.rootfd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fsu_dir);
    ck_assert_int_eq(system(cmd), 0);
}

b2fs_node *fsu_create(const char *name, int32_t chunksize, int typesize)
{
    char path[300];
    snprintf(path, sizeof path, "/%s", name);
    b2fs_loc loc;
    ck_assert_int_eq(loc_resolve(path, &loc), 0);
    ck_assert_int_eq(loc.kind, B2FS_NONE);
    b2f_params p = b2fs_cfg.params;
    p.chunksize = chunksize;
    p.cp.typesize = typesize;
    b2fs_node *n = NULL;
    ck_assert_int_eq(file_create(&loc, path, &p, 0644, (uid_t)-1, (gid_t)-1, &n), 0);
    loc_done(&loc);
    return n;
}

b2fs_node *fsu_node(const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "/%s", name);
    b2fs_loc loc;
    ck_assert_int_eq(loc_resolve(path, &loc), 0);
    ck_assert_int_eq(loc.kind, B2FS_FRAME);
    b2fs_node *n = NULL;
    ck_assert_int_eq(node_get(path, &loc, &n), 0);
    loc_done(&loc);
    return n;
}

const char *fsu_backing(const char *name)
{
    static char path[300];
    snprintf(path, sizeof path, "%s/%s.b2frame", fsu_dir, name);
    return path;
}

uint8_t *fsu_frame_contents(const char *name, size_t *len)
{
    int fd = open(fsu_backing(name), O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    b2_frame *f;
    char err[200] = "";
    ck_assert_msg(b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err) == 0, "%s", err);
    b2f_stat st;
    b2f_stat_get(f, &st);
    uint8_t *out = malloc((size_t)st.nbytes + 1);
    ck_assert_ptr_nonnull(out);
    b2_dctx *d = b2_dctx_new();
    uint64_t pos = 0;
    for (int64_t c = 0; c < st.nchunks; c++) {
        int r = b2f_read_chunk(f, d, c, out + pos, (size_t)st.nbytes - pos);
        ck_assert_msg(r >= 0, "chunk %lld: %s", (long long)c, b2f_strerror(r));
        pos += (uint64_t)r;
    }
    ck_assert_uint_eq(pos, (uint64_t)st.nbytes);
    b2_dctx_free(d);
    b2f_close(f);
    close(fd);
    *len = (size_t)st.nbytes;
    return out;
}

int fsu_fill_copy(void *ctx, void *dst, size_t len)
{
    const char **p = ctx;
    memcpy(dst, *p, len);
    *p += len;
    return 0;
}
