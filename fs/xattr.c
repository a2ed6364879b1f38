/* The xattr callbacks (xattr.h). */
#include "fs/xattr.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fs/commit.h"
#include "fs/errmap.h"
#include "fs/options.h"
#include "fs/backing.h"
#include "fs/paths.h"
#include "fs/write.h"

#define PREFIX "user.blosc2."

static const char *const param_names[] = {"codec", "clevel", "filters", "typesize", "chunksize"};
static const char *const ro_names[] = {"nbytes", "cbytes", "cratio", "nchunks", "blocksize",
                                       "splitmode", "decoded", "integrity", "chunkfilters"};
#define NPARAM 5
#define NRO 9

static int is_param(const char *n)
{
    for (int i = 0; i < NPARAM; i++)
        if (!strcmp(n, param_names[i]))
            return 1;
    return 0;
}

static int is_hidden(int fd, const char *name, void *arg)
{
    (void)fd;
    (void)arg;
    return backing_is_own_attr(name);
}

/* Whether the mount shows the backing file's attribute name: user.*, not b2fs's own. */
static int is_shown(const char *name)
{
    return !strncmp(name, "user.", 5) && !backing_is_own_attr(name);
}

/* Applies the directory defaults stored on the backing directory fd to p. */
static void apply_dir_defaults(int fd, b2f_params *p)
{
    /* one call for the names: most directories have no defaults of their own (a listing
     * that fails: each one is looked up) */
    if (backing_each_xattr(fd, is_hidden, NULL) == 0)
        return;
    for (int i = 0; i < NPARAM; i++) {
        char key[64], val[128];
        snprintf(key, sizeof key, B2FS_OWN_PREFIX "%s", param_names[i]);
        ssize_t len = fgetxattr(fd, key, val, sizeof val - 1);
        if (len <= 0)
            continue;
        val[len] = 0;
        const char *why;
        b2fs_param_set(p, param_names[i], val, ',', &why);
    }
}

/* Mount defaults with the defaults of every directory from the root down along path
 * applied (the last component too unless skip_last: a new file's own name). */
static void params_along(const char *path, int skip_last, b2f_params *p)
{
    *p = b2fs_cfg.params;
    int fd = openat(b2fs_cfg.rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const char *s = path;
    while (fd >= 0) {
        apply_dir_defaults(fd, p);
        while (*s == '/')
            s++;
        if (!*s)
            break;
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        const char *rest = s + len;
        while (*rest == '/')
            rest++;
        if ((skip_last && !*rest) || len > 255)
            break;
        char comp[256];
        memcpy(comp, s, len);
        comp[len] = 0;
        int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
        s = rest;
    }
    if (fd >= 0)
        close(fd);
}

/* Seconds the defaults found for one directory serve the next new files in it (a change
 * made by another mount or in BACKING itself is seen after that). */
#define DIR_PARAMS_TTL 1

/* The defaults of the directory the last new file went into: `cp -r` makes its files one
 * directory after another, and walking every ancestor's attributes took three system calls
 * a level for each file. Guarded by its lock. */
static struct {
    pthread_mutex_t lock;
    int valid;
    unsigned gen;          /* dir_params_gen when found */
    struct timespec at;    /* CLOCK_MONOTONIC_COARSE when found */
    char dir[4096];        /* the directory's mount path */
    size_t len;            /* its length */
    b2f_params p;
} last_dir = {.lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned dir_params_gen;   /* atomic: moved by every change that may alter them */

void b2fs_params_moved(void)
{
    __atomic_add_fetch(&dir_params_gen, 1, __ATOMIC_RELEASE);
}

/* Whether the entry still holds for dir; with last_dir.lock held. */
static int last_dir_holds(const char *dir, size_t len, unsigned gen)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    return last_dir.valid && last_dir.gen == gen &&
           now.tv_sec - last_dir.at.tv_sec < DIR_PARAMS_TTL && last_dir.len == len &&
           !memcmp(last_dir.dir, dir, len);
}

/* Mount defaults with those of every directory down to path's parent applied. */
static void params_of_parent(const char *path, b2f_params *p)
{
    const char *slash = strrchr(path, '/');
    size_t len = slash ? (size_t)(slash - path) : 0;
    unsigned gen = __atomic_load_n(&dir_params_gen, __ATOMIC_ACQUIRE);
    pthread_mutex_lock(&last_dir.lock);
    int hit = last_dir_holds(path, len, gen);
    if (hit)
        *p = last_dir.p;
    pthread_mutex_unlock(&last_dir.lock);
    if (hit)
        return;
    params_along(path, 1, p);
    if (len >= sizeof last_dir.dir)
        return;
    pthread_mutex_lock(&last_dir.lock);
    last_dir.valid = 1;
    last_dir.gen = gen;   /* (a change since then makes the entry stale at once) */
    clock_gettime(CLOCK_MONOTONIC_COARSE, &last_dir.at);
    memcpy(last_dir.dir, path, len);
    last_dir.len = len;
    last_dir.p = *p;
    pthread_mutex_unlock(&last_dir.lock);
}

/* The automatic block size of a new file, fixed. */
static void fix_blocksize(b2f_params *p)
{
    /* Programs read files on a mount at random: an automatic blocksize is fixed at
     * creation to the small variant (in the header, so C-Blosc2 appends alike). Split
     * blocks of 64 KiB instead of C-Blosc2's 128 KiB (zstd level 1, typesize 4): random
     * 4 KiB reads 0.60x passthrough_ll's instead of 0.42x, cold reads 1.01x instead of
     * 1.02x; 32 KiB gave 0.73x and 0.87x (docs/BENCHMARKS.md, block size). */
    if (p->cp.blocksize == 0)
        p->cp.blocksize = b2_small_blocksize(&p->cp, p->chunksize);
}

void b2fs_params_for_new(const char *path, b2f_params *p)
{
    params_of_parent(path, p);
    fix_blocksize(p);
}

void b2fs_params_for_new_plain(const char *path, int fd, b2f_params *p)
{
    params_of_parent(path, p);
    apply_dir_defaults(fd, p);
    fix_blocksize(p);
}

static int put_text(char *value, size_t size, const char *text, size_t len)
{
    if (size == 0)
        return (int)len;
    if (len > size)
        return -ERANGE;
    memcpy(value, text, len);
    return (int)len;
}

static void frame_params(b2fs_node *n, b2f_params *p)
{
    b2f_stat fs;
    b2f_stat_get(n->frame, &fs);
    b2f_params_default(p);
    p->cp.codec = fs.codec;
    p->cp.clevel = fs.clevel;
    p->cp.typesize = fs.typesize;
    memcpy(p->cp.filters, fs.filters, sizeof fs.filters);
    memcpy(p->cp.filters_meta, fs.filters_meta, sizeof fs.filters_meta);
    p->cp.blocksize = fs.blocksize;
    p->chunksize = fs.chunksize;
    p->cp.choose = fs.choose;
    p->cp.choose_typesize = fs.choose_typesize;
}

static const char *split_name(int s)
{
    switch (s) {
    case B2_SPLIT_ALWAYS:
        return "always";
    case B2_SPLIT_NEVER:
        return "never";
    case B2_SPLIT_AUTO:
        return "auto";
    default:
        return "forward_compat";
    }
}

static const char *const nd_props[] = {"b2nd.shape", "b2nd.chunkshape", "b2nd.blockshape",
                                       "b2nd.dtype"};

/* The b2nd metalayer as JSON text (getfattr would show its msgpack as base64). */
static int nd_json(const b2f_ndinfo *nd, char *out, size_t cap)
{
    char dims[3][200];
    for (int k = 0; k < 3; k++)
        if (b2f_nd_format(nd, k, dims[k], sizeof dims[k]) < 0)
            return -ERANGE;
    char dtype[2 * sizeof nd->dtype];
    size_t d = 0;
    for (const char *c = nd->dtype; *c; c++) {
        if (*c == '"' || *c == '\\')
            dtype[d++] = '\\';
        dtype[d++] = (unsigned char)*c < 0x20 ? '?' : *c;
    }
    dtype[d] = 0;
    int len = snprintf(out, cap,
                       "{\"version\": %d, \"ndim\": %d, \"shape\": [%s], \"chunkshape\": [%s], "
                       "\"blockshape\": [%s], \"dtype_format\": %d, \"dtype\": \"%s\"}",
                       nd->version, nd->ndim, dims[0], dims[1], dims[2], nd->dtype_format, dtype);
    return len < 0 || (size_t)len >= cap ? -ERANGE : len;
}

/* user.blosc2.b2nd.* and meta.b2nd (meta.caterva) of an array frame: the length of the
 * value, -ENODATA when key is none of them or the frame has no readable b2nd metalayer. */
static int nd_get(b2fs_node *n, const char *key, char *value, size_t size)
{
    int which = -1;
    for (int k = 0; k < 4; k++)
        if (!strcmp(key, nd_props[k]))
            which = k;
    int meta = !strcmp(key, "meta.b2nd") || !strcmp(key, "meta.caterva");
    b2f_ndinfo nd;
    char text[1200];
    if ((which < 0 && !meta) || b2f_nd_of(n->frame, &nd, NULL, 0) < 0)
        return -ENODATA;
    int len = which >= 0 ? (b2f_nd_format(&nd, which, text, sizeof text) < 0 ? -ERANGE
                                                                            : (int)strlen(text))
                         : nd_json(&nd, text, sizeof text);
    return len < 0 ? len : put_text(value, size, text, (size_t)len);
}

enum {
    K_NONE, K_SHUFFLE, K_BITSHUFFLE, K_BYTEDELTA, K_OTHER, K_STORED, K_SPECIAL, K_UNREADABLE,
    NKIND
};

/* A chunk's kind for chunk_filters: stored, one of the pipelines auto chooses, or other. */
static int filter_kind(const b2_chunk_info *ci)
{
    if (ci->memcpyed)
        return K_STORED;
    int kind = K_NONE;
    for (int i = 0; i < B2_MAX_FILTERS; i++) {
        uint8_t f = ci->filters[i];
        if (f == B2_NOFILTER)
            continue;
        if (kind == K_SHUFFLE && f == B2_BYTEDELTA)
            kind = K_BYTEDELTA;
        else if (kind != K_NONE)
            return K_OTHER;
        else
            kind = f == B2_SHUFFLE ? K_SHUFFLE : f == B2_BITSHUFFLE ? K_BITSHUFFLE : K_OTHER;
    }
    return kind;
}

/* How many chunks of each kind the file has (filters=auto chooses them chunk by chunk):
 * "none=3 shuffle=12 stored=1 special=2", kinds without chunks left out. Reads each chunk's
 * header (the layouts the frame caches). */
static void chunk_filters(b2fs_node *n, char *text, size_t cap)
{
    static const char *const names[NKIND] = {"none", "shuffle", "bitshuffle",
                                             "shuffle,bytedelta", "other", "stored",
                                             "special", "unreadable"};
    int64_t count[NKIND] = {0};
    b2f_stat fs;
    b2f_stat_get(n->frame, &fs);
    for (int64_t c = 0; c < fs.nchunks; c++) {
        const b2_chunk_layout *lay;
        int sp = b2f_chunk_special(n->frame, c);
        if (sp > 0)
            count[K_SPECIAL]++;
        else if (sp < 0 || b2f_chunk_layout(n->frame, c, &lay) < 0)
            count[K_UNREADABLE]++;
        else
            count[filter_kind(&lay->info)]++;
    }
    size_t used = 0;
    text[0] = 0;
    for (int k = 0; k < NKIND && used < cap; k++)
        if (count[k])
            used += (size_t)snprintf(text + used, cap - used, "%s%s=%lld", used ? " " : "",
                                     names[k], (long long)count[k]);
}

static int frame_get(b2fs_node *n, const char *key, char *value, size_t size)
{
    char text[128];
    b2f_stat fs;
    if (!n->frame)
        return -EIO;
    b2f_stat_get(n->frame, &fs);
    int nr = nd_get(n, key, value, size);
    if (nr != -ENODATA)
        return nr;
    if (!strncmp(key, "meta.", 5)) {
        const uint8_t *v;
        size_t len;
        int r = b2f_meta_get(n->frame, key + 5, &v, &len);
        return r < 0 ? -ENODATA : put_text(value, size, (const char *)v, len);
    }
    if (!strncmp(key, "vlmeta.", 7)) {
        uint8_t *v;
        size_t len;
        int r = b2f_vlmeta_get(n->frame, key + 7, &v, &len);
        if (r < 0)
            return r;
        r = put_text(value, size, (const char *)v, len);
        free(v);
        return r;
    }
    if (is_param(key)) {
        b2f_params p;
        frame_params(n, &p);
        b2fs_param_text(&p, key, text, sizeof text);
    } else if (!strcmp(key, "nbytes")) {
        snprintf(text, sizeof text, "%llu", (unsigned long long)n->size);
    } else if (!strcmp(key, "cbytes")) {
        snprintf(text, sizeof text, "%lld", (long long)fs.cbytes);
    } else if (!strcmp(key, "cratio")) {
        snprintf(text, sizeof text, "%.2f", fs.cbytes > 0 ? (double)n->size / (double)fs.cbytes : 0.0);
    } else if (!strcmp(key, "nchunks")) {
        snprintf(text, sizeof text, "%lld", (long long)fs.nchunks);
    } else if (!strcmp(key, "blocksize")) {
        snprintf(text, sizeof text, "%ld", (long)fs.blocksize);
    } else if (!strcmp(key, "splitmode")) {
        snprintf(text, sizeof text, "%s", split_name(fs.splitmode));
    } else if (!strcmp(key, "decoded")) {
        snprintf(text, sizeof text, "blocks=%llu chunks=%llu",
                 (unsigned long long)__atomic_load_n(&n->decoded_blocks, __ATOMIC_RELAXED),
                 (unsigned long long)__atomic_load_n(&n->decoded_chunks, __ATOMIC_RELAXED));
    } else if (!strcmp(key, "chunkfilters")) {
        chunk_filters(n, text, sizeof text);
    } else if (!strcmp(key, "integrity")) {
        b2f_integrity in;
        b2f_integrity_get(n->frame, &in);
        snprintf(text, sizeof text, "checked=%s sealed=%s chunks=%lld summed=%lld damaged=%llu%s",
                 in.verify ? "yes" : "no", in.sealed ? "yes" : "no",
                 (long long)in.chunks_stored, (long long)in.chunks_summed,
                 (unsigned long long)__atomic_load_n(&n->damaged_reads, __ATOMIC_RELAXED),
                 in.meta_changed ? " metalayers=changed" : "");
    } else {
        return -ENODATA;
    }
    return put_text(value, size, text, strlen(text));
}

static int frame_set(b2fs_node *n, const char *key, const char *value, size_t size)
{
    if (!n->frame)
        return -EIO;
    if (!n->writable)
        return -EROFS;
    if (!strncmp(key, "vlmeta.", 7)) {
        if (!key[7])
            return -EINVAL;
        int r = b2f_vlmeta_set(n->frame, key + 7, value, size);
        if (r < 0)
            return r;
        n->changed = 1;
        n->meta_changed = 1;
        return commit_node(n, 0);
    }
    if (!is_param(key))
        return -EPERM; /* the read-only ones */
    char text[128];
    if (size >= sizeof text)
        return -EINVAL;
    memcpy(text, value, size);
    text[size] = 0;
    int r = write_flush(n);
    if (r < 0)
        return r;
    b2f_stat fs;
    b2f_stat_get(n->frame, &fs);
    int empty = n->size == 0 && fs.nchunks == 0;
    if (!empty && (!strcmp(key, "typesize") || !strcmp(key, "chunksize")))
        return -EBUSY; /* fixed once the file has data */
    b2f_params p;
    frame_params(n, &p);
    const char *why;
    if (b2fs_param_set(&p, key, text, ',', &why) && b2fs_param_set(&p, key, text, '+', &why))
        return -EINVAL;
    r = b2f_set_params(n->frame, &p);
    if (r < 0)
        return r;
    if (!strcmp(key, "filters") || !strcmp(key, "typesize"))
        backing_mark_choose(n->fd, p.cp.choose, p.cp.choose_typesize);
    write_params_changed(n);
    b2f_stat_get(n->frame, &fs);
    n->chunksize = fs.chunksize;
    n->changed = 1;
    return commit_node(n, 0);
}

/* The names of n's user.blosc2.* attributes; n NULL: the codec parameters (of a
 * directory, or of a new file still plain: fs/convert), with file set also those every
 * frame has (of a new file that a read of one makes a frame at once). */
static int frame_list(b2fs_node *n, int file, char *out, size_t cap, size_t *used)
{
    char name[400];
#define ADD(...)                                                                  \
    do {                                                                          \
        int l_ = snprintf(name, sizeof name, __VA_ARGS__);                        \
        if (l_ > 0 && (size_t)l_ < sizeof name) {                                 \
            if (cap && *used + (size_t)l_ + 1 > cap)                              \
                return -ERANGE;                                                   \
            if (cap)                                                              \
                memcpy(out + *used, name, (size_t)l_ + 1);                        \
            *used += (size_t)l_ + 1;                                              \
        }                                                                         \
    } while (0)
    for (int i = 0; i < NPARAM; i++)
        ADD(PREFIX "%s", param_names[i]);
    if (!n && !file)
        return 0;
    for (int i = 0; i < NRO; i++)
        ADD(PREFIX "%s", ro_names[i]);
    if (!n || !n->frame)
        return 0;
    b2f_ndinfo nd;
    if (b2f_nd_of(n->frame, &nd, NULL, 0) == 0)
        for (int i = 0; i < 4; i++)
            ADD(PREFIX "%s", nd_props[i]);
    for (int i = 0; i < b2f_meta_count(n->frame); i++)
        ADD(PREFIX "meta.%s", b2f_meta_name(n->frame, i));
    for (int i = 0; i < b2f_vlmeta_count(n->frame); i++)
        ADD(PREFIX "vlmeta.%s", b2f_vlmeta_name(n->frame, i));
#undef ADD
    return 0;
}

/* What an xattr call works on. */
typedef struct target {
    b2fs_loc loc;
    b2fs_node *node;   /* frames (their fd is used under the node's lock: target_fd) */
    int fd;            /* plain files and directories: backing fd, or -1 */
    int isdir;
} target;

static int target_open(const char *path, target *t)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    if (!path)
        return -ENOENT;
    int r = loc_resolve(path, &t->loc);
    if (r)
        return r;
    if (t->loc.kind == B2FS_NONE) {
        loc_done(&t->loc);
        return -ENOENT;
    }
    if (t->loc.kind != B2FS_PLAIN) {
        r = node_get(path, &t->loc, &t->node);
        if (r)
            loc_done(&t->loc);
        return r;
    }
    t->isdir = S_ISDIR(t->loc.st.st_mode);
    if (S_ISREG(t->loc.st.st_mode) || t->isdir)
        t->fd = openat(t->loc.dirfd, t->loc.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (t->fd < 0 && errno == EWOULDBLOCK && S_ISREG(t->loc.st.st_mode))   /* a lease (fs/convert) */
        t->fd = openat(t->loc.dirfd, t->loc.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    return 0;
}

static void target_close(target *t)
{
    if (t->node)
        node_put(t->node);
    else if (t->fd >= 0)
        close(t->fd);
    loc_done(&t->loc);
}

/* Whether t is a new file still plain, to be made a frame (fs/convert; not one with other
 * links, which stays plain): the codec parameters set on it are kept hidden for that, as
 * a directory's defaults are. A read of one of its user.blosc2.* attributes makes the
 * frame first where it can (fs/ll), so one of data up to B2FS_CONVERT_NOW_MAX lists what
 * its frame will have, another only its parameters, which it answers. */
static int pending_plain(const target *t)
{
    return !t->node && !t->isdir && t->fd >= 0 && t->loc.st.st_nlink == 1 &&
           backing_stored_marked(t->fd);
}

/* The backing fd for pass-through attributes; a frame's under its node's read lock (held
 * until target_fd_done: compaction replaces the fd under the write lock). */
static int target_fd(target *t)
{
    if (!t->node)
        return t->fd;
    pthread_rwlock_rdlock(&t->node->lock);
    return t->node->fd;
}

static void target_fd_done(target *t)
{
    if (t->node)
        pthread_rwlock_unlock(&t->node->lock);
}

/* target_open for calls that change an attribute. */
static int target_open_change(const char *path, const char *name, target *t)
{
    if (backing_is_own_attr(name))
        return -EPERM;
    if (b2fs_cfg.ro)
        return -EROFS;
    return target_open(path, t);
}

/* A pass-through attribute call on the target's backing file: fn(fd, arg). */
static int on_backing(target *t, int (*fn)(int fd, void *arg), void *arg)
{
    int fd = target_fd(t);
    int r = fd < 0 ? -ENODATA : fn(fd, arg);
    target_fd_done(t);
    return r;
}

struct xattr_io {
    const char *name;
    void *value;
    size_t size;
    int flags;
};

static int get_backing(int fd, void *arg)
{
    struct xattr_io *io = arg;
    ssize_t len = fgetxattr(fd, io->name, io->value, io->size);
    return len < 0 ? -errno : (int)len;
}

static int set_backing(int fd, void *arg)
{
    struct xattr_io *io = arg;
    return fsetxattr(fd, io->name, io->value, io->size, io->flags) < 0 ? -errno : 0;
}

static int remove_backing(int fd, void *arg)
{
    struct xattr_io *io = arg;
    return fremovexattr(fd, io->name) < 0 ? -errno : 0;
}

static int list_backing(int fd, void *arg)
{
    struct xattr_io *io = arg;
    ssize_t len = flistxattr(fd, io->value, io->size);
    return len < 0 ? -errno : (int)len;
}

static int getxattr_of(const char *path, const char *name, char *value, size_t size)
{
    /* answered without looking the file up (the kernel asks for security.capability
     * before a write). Only user.* attributes are kept, so other namespaces (security
     * labels, POSIX ACLs) are not supported, as setxattr says: ls -l then stops asking
     * for them after the first file of the mount. */
    if (strncmp(name, "user.", 5))
        return -ENOTSUP;
    if (!is_shown(name))
        return -ENODATA;
    target t;
    int r = target_open(path, &t);
    if (r)
        return r;
    const char *key = name + sizeof PREFIX - 1;
    if (!strncmp(name, PREFIX, sizeof PREFIX - 1)) {
        if (t.node) {
            pthread_rwlock_wrlock(&t.node->lock);
            if (t.node->writable)
                write_flush(t.node);
            r = frame_get(t.node, key, value, size);
            pthread_rwlock_unlock(&t.node->lock);
        } else if ((t.isdir || pending_plain(&t)) && is_param(key)) {
            b2f_params p;
            char text[64];
            if (t.isdir)
                params_along(path, 0, &p);
            else
                b2fs_params_for_new_plain(path, t.fd, &p);
            b2fs_param_text(&p, key, text, sizeof text);
            r = put_text(value, size, text, strlen(text));
        } else {
            r = -ENODATA;
        }
    } else {
        struct xattr_io io = {name, value, size, 0};
        r = on_backing(&t, get_backing, &io);
    }
    target_close(&t);
    return r;
}

/* Sets the default of parameter key for new files below the directory open as fd. */
static int set_dir_default(int fd, const char *key, const char *value, size_t size)
{
    char text[128], canon[128], hidden[64];
    b2f_params p = b2fs_cfg.params;
    const char *why;
    if (size >= sizeof text)
        return -EINVAL;
    memcpy(text, value, size);
    text[size] = 0;
    if (b2fs_param_set(&p, key, text, ',', &why) && b2fs_param_set(&p, key, text, '+', &why))
        return -EINVAL;
    b2fs_param_text(&p, key, canon, sizeof canon);
    snprintf(hidden, sizeof hidden, B2FS_OWN_PREFIX "%s", key);
    int r = fsetxattr(fd, hidden, canon, strlen(canon), 0) < 0 ? -errno : 0;
    b2fs_params_moved();
    return r;
}

static int setxattr_of(const char *path, const char *name, const char *value, size_t size,
                       int flags)
{
    target t;
    int r = target_open_change(path, name, &t);
    if (r)
        return r;
    const char *key = name + sizeof PREFIX - 1;
    if (!strncmp(name, PREFIX, sizeof PREFIX - 1)) {
        if (t.node) {
            pthread_rwlock_wrlock(&t.node->lock);
            r = frame_set(t.node, key, value, size);
            pthread_rwlock_unlock(&t.node->lock);
        } else if ((t.isdir || pending_plain(&t)) && is_param(key) && t.fd >= 0) {
            r = set_dir_default(t.fd, key, value, size);
        } else {
            r = t.isdir || t.node ? -EPERM : -ENOTSUP;
        }
    } else if (strncmp(name, "user.", 5) || (!t.node && t.fd < 0)) {
        r = -ENOTSUP; /* (no backing fd: a symlink, FIFO or device) */
    } else {
        struct xattr_io io = {name, (void *)value, size, flags};
        r = on_backing(&t, set_backing, &io);
    }
    target_close(&t);
    return r;
}

static int listxattr_of(const char *path, char *list, size_t size)
{
    target t;
    int r = target_open(path, &t);
    if (r)
        return r;
    size_t used = 0;
    if (t.node) {
        pthread_rwlock_rdlock(&t.node->lock);
        r = frame_list(t.node, 1, list, size, &used);
        pthread_rwlock_unlock(&t.node->lock);
    } else if (t.isdir || pending_plain(&t)) {
        /* (one a read makes a frame at once: what its frame will have; else the
         * parameters, which it answers) */
        off_t sz = t.loc.st.st_size;
        r = frame_list(NULL, !t.isdir && sz > 0 && sz <= B2FS_CONVERT_NOW_MAX, list, size, &used);
    }
    char buf[65536];
    struct xattr_io io = {NULL, buf, sizeof buf, 0};
    int len = r == 0 ? on_backing(&t, list_backing, &io) : 0;
    for (int i = 0; len > 0 && i < len; i += (int)strlen(buf + i) + 1) {
        const char *nm = buf + i;
        if (!is_shown(nm))
            continue;
        size_t l = strlen(nm) + 1;
        if (size && used + l > size) {
            r = -ERANGE;
            break;
        }
        if (size)
            memcpy(list + used, nm, l);
        used += l;
    }
    target_close(&t);
    return r < 0 ? r : (int)used;
}

static int removexattr_of(const char *path, const char *name)
{
    target t;
    int r = target_open_change(path, name, &t);
    if (r)
        return r;
    const char *key = name + sizeof PREFIX - 1;
    if (!strncmp(name, PREFIX, sizeof PREFIX - 1)) {
        if (t.node && !strncmp(key, "vlmeta.", 7)) {
            pthread_rwlock_wrlock(&t.node->lock);
            r = t.node->frame ? b2f_vlmeta_delete(t.node->frame, key + 7) : -EIO;
            if (r >= 0) {
                t.node->changed = 1;
                t.node->meta_changed = 1;
                r = commit_node(t.node, 0);
            }
            pthread_rwlock_unlock(&t.node->lock);
        } else if ((t.isdir || pending_plain(&t)) && is_param(key) && t.fd >= 0) {
            char hidden[64];
            snprintf(hidden, sizeof hidden, B2FS_OWN_PREFIX "%s", key);
            r = fremovexattr(t.fd, hidden) < 0 ? -errno : 0;
            b2fs_params_moved();
        } else {
            r = -EPERM;
        }
    } else if (strncmp(name, "user.", 5) || (!t.node && t.fd < 0)) {
        r = -ENOTSUP;
    } else {
        struct xattr_io io = {name, NULL, 0, 0};
        r = on_backing(&t, remove_backing, &io);
    }
    target_close(&t);
    return r;
}

int b2fs_xattr_of_frame(const char *name)
{
    return !strncmp(name, PREFIX, sizeof PREFIX - 1);
}

int b2fs_getxattr(const char *path, const char *name, char *value, size_t size)
{
    return b2fs_fuse_result(getxattr_of(path, name, value, size));
}

int b2fs_setxattr(const char *path, const char *name, const char *value, size_t size, int flags)
{
    return b2fs_fuse_result(setxattr_of(path, name, value, size, flags));
}

int b2fs_listxattr(const char *path, char *list, size_t size)
{
    return b2fs_fuse_result(listxattr_of(path, list, size));
}

int b2fs_removexattr(const char *path, const char *name)
{
    return b2fs_fuse_result(removexattr_of(path, name));
}
