/* Mount names -> backing names. Every backing access is relative to the O_PATH fd of
 * BACKING, the parent directory opened with openat2 beneath it without symlinks (or,
 * where openat2 is missing, walked one component at a time with O_NOFOLLOW), so nothing
 * outside BACKING is reachable: a symlink is only ever shown (readlink), never followed
 * by b2fs.
 *
 * NAME shows, in this order of preference: NAME.b2frame, NAME.b2f (frames), NAME.blp
 * (Bloscpack), then NAME itself; an array frame STEM.b2nd shows as STEM.npy and comes
 * between NAME.b2f and NAME.blp for NAME = STEM.npy. So when NAME and NAME.b2frame both
 * exist the frame is shown and the plain NAME stays hidden (untouched in BACKING). A
 * regular file with one of these suffixes is only reachable under its shown name. */
#include "fs/paths.h"

#include <dirent.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/dirnames.h"
#include "fs/options.h"

/* shown: what replaces the suffix in the shown name ("": NAME.b2frame shows as NAME) */
static const struct {
    const char *suffix;
    int kind;
    const char *shown;
} suffixes[] = {
    {".b2frame", B2FS_FRAME, ""},
    {".b2f", B2FS_FRAME, ""},
    {".b2nd", B2FS_FRAME, ".npy"},
    {".blp", B2FS_BLP, ""},
};
#define NSUFFIX (sizeof suffixes / sizeof suffixes[0])
#define ARRAY_SUFFIX 2   /* the index of ".b2nd" above: array frames */


char *loc_backing_path(const char *path, const b2fs_loc *loc, const char *name)
{
    char *out = NULL;
    const char *slash = path ? strrchr(path, '/') : NULL;
    int plen = slash ? (int)(slash - path) : 0;
    if (asprintf(&out, "%s%.*s/%s", b2fs_cfg.backing, plen, path ? path : "",
                 name ? name : loc->name) < 0)
        return NULL;
    return out;
}

static int suffix_index(const char *name, size_t *stem_len)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < NSUFFIX; i++) {
        size_t sl = strlen(suffixes[i].suffix);
        if (len > sl && !strcmp(name + len - sl, suffixes[i].suffix)) {
            if (stem_len)
                *stem_len = len - sl;
            return (int)i;
        }
    }
    return -1;
}

/* The backing name that suffix i gives the shown name mname; -ENOENT when mname cannot
 * come from that suffix (an array's name must end in .npy). */
static int candidate(char *out, size_t cap, const char *mname, size_t i)
{
    size_t len = strlen(mname), sl = strlen(suffixes[i].shown);
    if (len <= sl || strcmp(mname + len - sl, suffixes[i].shown))
        return -ENOENT;
    size_t stem = len - sl, add = strlen(suffixes[i].suffix);
    if (stem + add > 255 || stem + add + 1 > cap)
        return -ENAMETOOLONG;
    memcpy(out, mname, stem);
    memcpy(out + stem, suffixes[i].suffix, add + 1);
    return 0;
}

int name_kind(const char *name, char *shown, size_t cap)
{
    size_t stem;
    int i = suffix_index(name, &stem);
    const char *tail = i < 0 ? "" : suffixes[i].shown;
    if (i < 0)
        stem = strlen(name);
    if (shown && cap && snprintf(shown, cap, "%.*s%s", (int)stem, name, tail) < 0)
        shown[0] = 0;
    return i < 0 ? B2FS_PLAIN : suffixes[i].kind;
}

int name_with_suffix(char *out, size_t cap, const char *mname, const char *suffix)
{
    size_t a = strlen(mname), b = strlen(suffix);
    if (a + b > 255 || a + b + 1 > cap)
        return -ENAMETOOLONG;
    memcpy(out, mname, a);
    memcpy(out + a, suffix, b + 1);
    return 0;
}

int name_new_frame(char *out, size_t cap, const char *mname)
{
    int r = candidate(out, cap, mname, ARRAY_SUFFIX);
    return r == -ENOENT ? name_with_suffix(out, cap, mname, ".b2frame") : r;
}

int name_is_array(const char *backing_name)
{
    return suffix_index(backing_name, NULL) == (int)ARRAY_SUFFIX;
}

int name_backing(char *out, size_t cap, const char *mname, const char *like)
{
    int i = like ? suffix_index(like, NULL) : -1;
    if (i < 0) {
        if (strlen(mname) + 1 > cap)
            return -ENAMETOOLONG;
        strcpy(out, mname);
        return 0;
    }
    int r = candidate(out, cap, mname, (size_t)i);
    return r == -ENOENT ? -EXDEV : r;
}

int name_aliases(const char *mname, char (*out)[300], int cap)
{
    int n = 0;
    for (size_t i = 0; i < NSUFFIX && n < cap; i++)
        if (!candidate(out[n], sizeof out[n], mname, i))
            n++;
    if (n < cap && strlen(mname) < sizeof out[n])
        strcpy(out[n++], mname);
    return n;
}

/* Read-preferring (the default): a call that resolves two paths (a rename) holds it
 * twice, and the writer only ever tries it. */
static pthread_rwlock_t names_lock = PTHREAD_RWLOCK_INITIALIZER;

void loc_done(b2fs_loc *loc)
{
    if (loc->dirfd >= 0)
        close(loc->dirfd);
    loc->dirfd = -1;
    if (loc->held)
        pthread_rwlock_unlock(&names_lock);
    loc->held = 0;
}

int loc_try_hold_all(void)
{
    return pthread_rwlock_trywrlock(&names_lock) == 0 ? 0 : -EBUSY;
}

void loc_release_all(void)
{
    pthread_rwlock_unlock(&names_lock);
}

/* Opens the directory rel (components checked, joined by '/') under BACKING in one call:
 * the kernel refuses symlinks and anything outside BACKING on the way, as the walk
 * below does one component at a time. -ENOSYS where openat2 is missing or refused. */
static int open_beneath(const char *rel)
{
    static int unavailable;   /* atomic */
    if (__atomic_load_n(&unavailable, __ATOMIC_RELAXED))
        return -ENOSYS;
    struct open_how how = {
        .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    for (int tries = 0; tries < 4; tries++) {
        long fd = syscall(SYS_openat2, b2fs_cfg.rootfd, rel, &how, sizeof how);
        if (fd >= 0)
            return (int)fd;
        if (errno == EAGAIN)
            continue;   /* a rename raced the lookup */
        if (errno == ENOSYS || errno == EPERM || errno == E2BIG) {
            __atomic_store_n(&unavailable, 1, __ATOMIC_RELAXED);
            return -ENOSYS;
        }
        return errno == ELOOP ? -ENOTDIR : -errno;
    }
    return -ENOSYS;   /* (the walk then) */
}

/* Walks the directories of path up to (not including) its last component. */
static int walk_parent(const char *path, int *dirfd, const char **last)
{
    if (path[0] != '/')
        return -EINVAL;
    /* the components checked first, then one openat2 */
    char rel[4096];
    size_t rl = 0;
    const char *q = path + 1, *sep;
    for (; (sep = strchr(q, '/')); q = sep + 1) {
        size_t len = (size_t)(sep - q);
        if (len == 0)
            continue;
        if (len > 255)
            return -ENAMETOOLONG;
        if ((len == 1 && q[0] == '.') || (len == 2 && q[0] == '.' && q[1] == '.'))
            return -ENOENT;
        char comp[256];
        memcpy(comp, q, len);
        comp[len] = 0;
        if (name_is_temp(comp))
            return -ENOENT;
        if (rl + len + 2 > sizeof rel)
            return -ENAMETOOLONG;
        if (rl)
            rel[rl++] = '/';
        memcpy(rel + rl, q, len);
        rl += len;
    }
    rel[rl] = 0;
    *last = q;
    int fd = rl ? open_beneath(rel) : -ENOSYS;
    if (fd != -ENOSYS) {
        if (fd < 0)
            return fd;
        *dirfd = fd;
        return 0;
    }
    /* (no openat2: the checked components one at a time) */
    fd = dup(b2fs_cfg.rootfd);
    if (fd < 0)
        return -errno;
    for (char *comp = rel, *end; rl && comp; comp = end) {
        if ((end = strchr(comp, '/')))
            *end++ = 0;
        int next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(fd);
        if (next < 0)
            return e == ELOOP ? -ENOTDIR : -e;
        fd = next;
    }
    *dirfd = fd;
    return 0;
}

int loc_resolve(const char *path, b2fs_loc *loc)
{
    memset(loc, 0, sizeof *loc);
    loc->dirfd = -1;
    pthread_rwlock_rdlock(&names_lock);
    loc->held = 1;
    const char *last = NULL;
    int r = walk_parent(path, &loc->dirfd, &last);
    if (r) {
        loc_done(loc);
        return r;
    }
    if (*last == 0) { /* the root */
        strcpy(loc->name, ".");
        strcpy(loc->mname, ".");
        loc->kind = B2FS_PLAIN;
        if (fstatat(loc->dirfd, "", &loc->st, AT_EMPTY_PATH) < 0) {
            r = -errno;
            loc_done(loc);
            return r;
        }
        return 0;
    }
    if (strlen(last) > 255) {
        loc_done(loc);
        return -ENAMETOOLONG;
    }
    strcpy(loc->mname, last);
    if (!strcmp(last, "..") || !strcmp(last, ".") || name_is_temp(last))
        return 0;
    /* the names last may have, in order of preference, then last itself */
    char names[NSUFFIX + 1][300];
    const char *probe[NSUFFIX + 1];
    int n = name_aliases(last, names, NSUFFIX + 1);
    for (int i = 0; i < n; i++)
        probe[i] = names[i];
    unsigned absent = 0;
    if (dirnames_absent(loc->dirfd, probe, n, &absent) < 0)
        absent = 0;
    for (int i = 0; i < n - 1; i++) {
        if (absent & (1u << i))
            continue;
        if (fstatat(loc->dirfd, probe[i], &loc->st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(loc->st.st_mode)) {
            strcpy(loc->name, probe[i]);
            loc->kind = name_kind(probe[i], NULL, 0);
            return 0;
        }
    }
    if (!(absent & (1u << (n - 1))) &&
        fstatat(loc->dirfd, last, &loc->st, AT_SYMLINK_NOFOLLOW) == 0 &&
        !(S_ISREG(loc->st.st_mode) && suffix_index(last, NULL) >= 0)) {
        strcpy(loc->name, last);
        loc->kind = B2FS_PLAIN;
    }
    return 0;
}

int loc_open_dir(const char *path)
{
    b2fs_loc loc;
    int r = loc_resolve(path, &loc);
    if (r)
        return r;
    if (loc.kind != B2FS_PLAIN || !S_ISDIR(loc.st.st_mode)) {
        r = loc.kind == B2FS_NONE ? -ENOENT : -ENOTDIR;
        loc_done(&loc);
        return r;
    }
    int fd = openat(loc.dirfd, loc.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    r = fd < 0 ? -errno : fd;
    loc_done(&loc);
    return r;
}

struct entry {
    char *name;
    int reg;
    ino_t ino;
    unsigned char type;
};

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static int is_regular_in(struct entry *e, size_t n, const char *name)
{
    struct entry key = {.name = (char *)name};
    struct entry *hit = bsearch(&key, e, n, sizeof *e, entry_cmp);
    return hit && hit->reg;
}

int dir_list(int dfd, dir_fill fill, void *ctx)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        return -e;
    }
    struct entry *e = NULL;
    size_t n = 0, cap = 0;
    int r = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (name_is_temp(de->d_name))
            backing_remove_stale_temp(dirfd(d), de->d_name);
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || name_is_temp(de->d_name))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct entry *ne = realloc(e, cap * sizeof *e);
            if (!ne) {
                r = -ENOMEM;
                goto out;
            }
            e = ne;
        }
        int reg = de->d_type == DT_REG;
        if (de->d_type == DT_UNKNOWN) {
            struct stat st;
            reg = fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
        }
        e[n].name = strdup(de->d_name);
        e[n].reg = reg;
        e[n].ino = de->d_ino;
        e[n].type = de->d_type;
        if (!e[n].name) {
            r = -ENOMEM;
            goto out;
        }
        n++;
    }
    if (n > 0)   /* (an empty directory has no array: qsort takes none) */
        qsort(e, n, sizeof *e, entry_cmp);
    for (size_t i = 0; i < n && !r; i++) {
        int si = e[i].reg ? suffix_index(e[i].name, NULL) : -1;
        char shown[300];
        if (si < 0)
            snprintf(shown, sizeof shown, "%s", e[i].name);
        else
            name_kind(e[i].name, shown, sizeof shown);
        /* hidden by a backing name that the same shown name prefers */
        int hidden = 0;
        size_t upto = si < 0 ? NSUFFIX : (size_t)si;
        for (size_t j = 0; j < upto && !hidden; j++) {
            char cand[300];
            hidden = !candidate(cand, sizeof cand, shown, j) && is_regular_in(e, n, cand);
        }
        /* (an entry whose type the listing did not give is passed as what fstatat found
         * when it is a regular file) */
        int fr = hidden ? 0 : fill(ctx, shown, e[i].name, e[i].ino, e[i].reg ? DT_REG : e[i].type);
        if (fr)
            r = fr < 0 ? fr : -ENOBUFS;
    }
out:
    for (size_t i = 0; i < n; i++)
        free(e[i].name);
    free(e);
    closedir(d);
    return r == -ENOBUFS ? 0 : r;
}
