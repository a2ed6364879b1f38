/* frame/: I/O through the b2f_io table, error texts, byte order helpers.
 * Calls: codec/ only (every other frame/ file may call this one). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame/frame_int.h"

int b2f_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *b2f_strerror(int code)
{
    switch (code) {
    case B2F_EFORMAT: return "not a Blosc2 frame or Bloscpack file";
    case B2F_EHEADER: return "frame header field out of bounds or inconsistent";
    case B2F_EINDEX: return "chunk index does not decode or points outside the data";
    case B2F_ETRAILER: return "frame trailer or vlmetalayers out of bounds";
    case B2F_EMETA: return "metalayer count, name or length out of bounds";
    case B2F_ECHECKSUM: return "Bloscpack checksum mismatch";
    case B2F_ERDONLY: return "container is read only";
    case B2F_ERANGE: return "chunk number, offset or size out of range";
    case B2F_ENOTFOUND: return "no metalayer of that name";
    case B2F_ETOOBIG: return "declared sizes beyond what b2fs accepts";
    case B2F_EDAMAGED: return "checksum mismatch: stored bytes changed since b2fs wrote them";
    default: return b2_strerror(code);
    }
}

int b2f_sys_error(void)
{
    /* errno 0 (a replaced I/O call that did not set it) must not read as success */
    return errno > 0 && errno <= B2_ERRNO_MAX ? -errno : B2E_IO;
}

static ssize_t sys_pread(int fd, void *buf, size_t len, off_t off) { return pread(fd, buf, len, off); }
static ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off) { return pwrite(fd, buf, len, off); }

void b2f_io_init(b2f_io *dst, const b2f_io *src)
{
    memset(dst, 0, sizeof *dst);
    if (src)
        *dst = *src;
    if (!dst->pread)
        dst->pread = sys_pread;
    if (!dst->pwrite)
        dst->pwrite = sys_pwrite;
    if (!dst->fdatasync)
        dst->fdatasync = fdatasync;
    if (!dst->ftruncate)
        dst->ftruncate = ftruncate;
}

int b2f_io_pread(const b2f_io *io, int fd, void *buf, size_t len, uint64_t off)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t r = io->pread(fd, p, len, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return b2f_sys_error();
        }
        if (r == 0)
            return B2E_TRUNCATED;   /* the file ended early: someone truncated it */
        p += r;
        len -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

int b2f_file_read(const b2_frame *f, void *buf, size_t len, uint64_t off)
{
    if (f->win && off <= f->win_len && len <= f->win_len - off) {
        memcpy(buf, f->win + off, len);
        return 0;
    }
    return b2f_io_pread(&f->io, f->fd, buf, len, off);
}

/* All windows together, bytes (atomic): a daemon with many small frames open keeps this
 * much of them at most. */
#define WINDOWS_MAX ((size_t)32 << 20)
static size_t windows_bytes;

void b2f_window_fill(b2_frame *f)
{
    b2f_window_drop(f);
    if (f->file_size <= 0 || (size_t)f->file_size > B2F_WINDOW_MAX)
        return;
    size_t len = (size_t)f->file_size;
    if (__atomic_add_fetch(&windows_bytes, len, __ATOMIC_RELAXED) > WINDOWS_MAX) {
        __atomic_sub_fetch(&windows_bytes, len, __ATOMIC_RELAXED);
        return;
    }
    uint8_t *w = malloc(len);
    if (!w || b2f_io_pread(&f->io, f->fd, w, len, 0) < 0) {
        free(w);   /* (the reads that follow say what is wrong) */
        __atomic_sub_fetch(&windows_bytes, len, __ATOMIC_RELAXED);
        return;
    }
    f->win = w;
    f->win_len = len;
}

void b2f_window_drop(b2_frame *f)
{
    if (!f->win)
        return;
    free(f->win);
    __atomic_sub_fetch(&windows_bytes, f->win_len, __ATOMIC_RELAXED);
    f->win = NULL;
    f->win_len = 0;
}

int b2f_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    const b2f_io sys = {.pwrite = sys_pwrite};
    return b2f_io_pwrite(&sys, fd, buf, len, off);
}

int b2f_io_pwrite(const b2f_io *io, int fd, const void *buf, size_t len, uint64_t off)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t r = io->pwrite(fd, p, len, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return b2f_sys_error();
        }
        if (r == 0)
            return B2E_IO;
        p += r;
        len -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

uint64_t b2f_be_get(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

void b2f_be_put(uint8_t *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

uint64_t b2f_le_get(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void b2f_le_put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}
