/* b2frame unpack of an array frame into a .npy file, and pack --npy of a .npy file into
 * an array frame. */
#include "contrib/b2frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct scatter {
    int out;
    const uint8_t *chunk;
    uint64_t data;          /* where the items start in the output */
    int itemsize;
} scatter;

static int put_run(void *ctx, uint64_t item, uint32_t offset, uint64_t n)
{
    scatter *s = ctx;
    size_t len = (size_t)n * (size_t)s->itemsize;
    off_t at = (off_t)(s->data + item * (uint64_t)s->itemsize);
    return b2f_pwrite_all(s->out, s->chunk + offset, len, (uint64_t)at);
}

int bt_is_array(const bt_input *in)
{
    b2f_ndinfo nd;
    b2f_ndmap m;
    char header[1024];
    return in->frame && b2f_nd_view(in->frame, &nd, &m, header, sizeof header) > 0;
}

int bt_unpack_npy(const bt_input *in, int out, const char *outname)
{
    b2f_ndinfo nd;
    b2f_ndmap m;
    char header[1024];
    int h = b2f_nd_view(in->frame, &nd, &m, header, sizeof header);
    if (h < 0) {
        bt_error(in->path, "not an array b2frame can write as .npy: %s", b2f_strerror(h));
        return BT_FAIL;
    }
    int rc = bt_write_all(out, header, (size_t)h);
    if (rc < 0) {
        bt_error(outname, "write failed: %s", strerror(-rc));
        return BT_FAIL;
    }
    uint8_t *buf = malloc(m.chunk_bytes ? (size_t)m.chunk_bytes : 1);
    b2_dctx *d = b2_dctx_new();
    scatter s = {out, buf, (uint64_t)h, m.itemsize};
    int status = buf && d ? BT_OK : BT_FAIL;
    if (status != BT_OK)
        bt_error(in->path, "out of memory");
    bt_progress pr;
    bt_progress_begin(&pr, "unpack", m.nchunks * (int64_t)m.chunk_bytes);
    for (int64_t c = 0; status == BT_OK && c < m.nchunks; c++) {
        if ((rc = b2f_read_chunk(in->frame, d, c, buf, (size_t)m.chunk_bytes)) < 0) {
            bt_error(in->path, "chunk %lld: %s", (long long)c, b2f_strerror(rc));
            status = BT_FAIL;
        } else if ((rc = b2f_ndmap_chunk_runs(&m, c, put_run, &s)) < 0) {
            bt_error(outname, "write failed: %s", b2f_strerror(rc));
            status = BT_FAIL;
        }
        bt_progress_update(&pr, (c + 1) * (int64_t)m.chunk_bytes);
    }
    bt_progress_end(&pr);
    b2_dctx_free(d);
    free(buf);
    return status;
}

typedef struct npy_file {
    int fd;
    uint64_t data;
    int64_t got;            /* bytes of items read so far, for the progress line */
    bt_progress *prog;
} npy_file;

static int read_items(void *ctx, void *buf, size_t len, uint64_t off)
{
    npy_file *f = ctx;
    for (size_t done = 0; done < len;) {
        ssize_t r = pread(f->fd, (uint8_t *)buf + done, len - done,
                          (off_t)(f->data + off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : B2F_ERANGE;
        done += (size_t)r;
    }
    f->got += (int64_t)len;
    if (f->prog)
        bt_progress_update(f->prog, f->got);
    return 0;
}

int bt_pack_npy(const b2f_params *p, const char *inname, int in, int out, const char *outname)
{
    struct stat st;
    if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
        bt_error(inname, "--npy needs a regular file");
        return BT_FAIL;
    }
    size_t cap = B2F_NPY_MAX_HEADER + 12;
    size_t hl = (uint64_t)st.st_size < cap ? (size_t)st.st_size : cap;
    uint8_t *head = malloc(hl ? hl : 1);
    npy_file src = {in, 0, 0, NULL};
    int rc = head ? read_items(&src, head, hl, 0) : B2E_NOMEM;
    b2f_npyinfo npy;
    b2f_ndinfo nd;
    int itemsize;
    char err[512] = "";
    if (rc == 0)
        rc = b2f_npy_check(head, hl, (uint64_t)st.st_size, &npy, &nd, &itemsize, err, sizeof err);
    free(head);
    if (rc < 0) {
        bt_error(inname, "not a .npy file b2frame stores as an array: %s", bt_reason(rc, err));
        return BT_FAIL;
    }
    bt_progress prog;
    bt_progress_begin(&prog, "pack", st.st_size - (int64_t)npy.header_len);
    src.data = npy.header_len;
    src.got = 0;
    src.prog = &prog;
    rc = b2f_array_write(out, p, &nd, itemsize, read_items, &src, NULL, err, sizeof err);
    bt_progress_end(&prog);
    if (rc < 0) {
        bt_error(outname, "%s", bt_reason(rc, err));
        return BT_FAIL;
    }
    return BT_OK;
}
