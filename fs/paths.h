/* fs/paths: mount names to backing names.
 *
 * Owns: the naming rules (which suffix shows as what, the one format of temporary
 * names) and every lookup of a mount path in BACKING: all access is relative to
 * b2fs_cfg.rootfd, one component at a time with O_NOFOLLOW, so nothing outside BACKING
 * is reachable. Temporary names are never shown (fs/backing). Shared state: names_lock,
 * a rwlock that each resolved path holds for reading until loc_done, so that what it
 * names stays so while a call works on it; fs/convert's swap of a plain file for its
 * frame takes it for writing (loc_try_hold_all). Calls:
 * fs/backing (temporary names), fs/dirnames (which names a directory lacks, so they are
 * not searched for), fs/options (rootfd), libc. */
#ifndef B2FS_PATHS_H
#define B2FS_PATHS_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

enum b2fs_kind { B2FS_NONE = 0, B2FS_PLAIN, B2FS_FRAME, B2FS_BLP };

/* Where a mount path lives in BACKING. dirfd is an O_PATH fd of the parent directory
 * (owned: loc_done closes it); name is the backing entry name in it. */
typedef struct b2fs_loc {
    int dirfd;
    int kind;               /* B2FS_NONE when nothing visible has that name */
    char name[300];
    char mname[256];        /* the last component as the mount shows it */
    struct stat st;         /* backing stat (valid unless kind == B2FS_NONE) */
    int held;               /* names_lock held for reading (loc_done lets it go) */
} b2fs_loc;

/* Resolves path ("/a/b"). Returns 0 (also when the last component does not exist:
 * kind NONE, dirfd valid) or -errno (parent missing, not a directory, a symlink on the
 * way, name too long). */
int loc_resolve(const char *path, b2fs_loc *loc);
void loc_done(b2fs_loc *loc);
/* Takes names_lock for writing when no resolved path holds it (0), else -EBUSY: while
 * it is held, no call through the mount is between resolving a path and loc_done. */
int loc_try_hold_all(void);
void loc_release_all(void);
/* The backing path of loc for logs ("BACKING/dir/name"), malloc'ed, or NULL. */
char *loc_backing_path(const char *path, const b2fs_loc *loc, const char *name);
/* Kind of a backing name by suffix, and the name the mount shows it by (into shown, cap
 * bytes; shown may be NULL). */
int name_kind(const char *name, char *shown, size_t cap);
/* Builds backing name mname + suffix. */
int name_with_suffix(char *out, size_t cap, const char *mname, const char *suffix);
/* The backing name of a frame created as mname: NAME.b2frame, or STEM.b2nd for STEM.npy
 * (a .npy file written there becomes the array frame it holds). */
int name_new_frame(char *out, size_t cap, const char *mname);
/* Whether a backing name is one of an array frame, shown as a .npy file (STEM.b2nd). */
int name_is_array(const char *backing_name);
/* The backing name for the shown name mname of a file stored like the backing name like
 * (its suffix; NULL or a plain name: mname itself). -EXDEV when no such name shows as
 * mname (an array frame shows only under a name ending in .npy). */
int name_backing(char *out, size_t cap, const char *mname, const char *like);
/* Every backing name that the mount would show as mname (the suffixed ones, then mname
 * itself), into out; returns how many (at most cap). */
int name_aliases(const char *mname, char (*out)[300], int cap);
/* Opens a backing dir for reading entries (O_RDONLY, never through a symlink). */
int loc_open_dir(const char *path);
/* Lists the names the mount shows in the directory open as dfd (consumes dfd). Calls fill
 * for each with the backing entry's name, inode number and d_type (DT_*; DT_REG for a
 * regular file the listing gave no type for); a fill that returns non-zero ends the
 * listing, and a negative one is returned. Returns 0 or -errno. */
typedef int (*dir_fill)(void *ctx, const char *name, const char *backing, ino_t ino,
                        unsigned char type);
int dir_list(int dfd, dir_fill fill, void *ctx);

#endif
