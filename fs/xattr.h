/* fs/xattr: the extended-attribute calls, by mount path (fs/ll makes them).
 * user.blosc2.* describe a frame (read only: nbytes, cbytes, cratio, nchunks, blocksize,
 * splitmode, meta.NAME (meta.b2nd as JSON), b2nd.shape/chunkshape/blockshape/dtype of an
 * array frame; read/write: codec, clevel, filters, typesize, chunksize,
 * vlmeta.NAME). On a directory the five codec
 * parameters are the defaults for new files below it, kept in user.b2fs.* attributes of
 * the backing directory (hidden in the mount); so are they on a new file still plain, to
 * be made a frame (fs/convert), which lists them and answers them (or the defaults it
 * will get) until then, where fs/ll's read of one has not made the frame first. Other
 * user.* attributes are passed to the
 * backing file; other namespaces are not supported (ENOTSUP).
 *
 * Owns: the directory defaults found for the last new file's directory (guarded by their
 * mutex, a leaf lock; kept for a second, dropped by b2fs_params_moved). Part of the FUSE
 * boundary: the four calls map their results to errno
 * (fs/errmap). Takes n->lock itself (read to list or pass through on a frame's fd,
 * write to read or change user.blosc2.*). Calls: fs/commit, fs/write, fs/node, fs/paths,
 * fs/options, fs/errmap, frame/. */
#ifndef B2FS_XATTR_H
#define B2FS_XATTR_H

#include <stddef.h>

#include "frame/frame.h"

int b2fs_getxattr(const char *path, const char *name, char *value, size_t size);
int b2fs_setxattr(const char *path, const char *name, const char *value, size_t size,
                  int flags);
int b2fs_listxattr(const char *path, char *list, size_t size);
int b2fs_removexattr(const char *path, const char *name);
/* Whether name is a user.blosc2.* attribute, which describes a frame. */
int b2fs_xattr_of_frame(const char *name);
/* Parameters for a new file created at path (mount defaults with the directory defaults
 * of every ancestor applied, and the automatic block size fixed). */
void b2fs_params_for_new(const char *path, b2f_params *p);
/* The same for a new file still plain at path, open as fd, with the parameters set on it
 * (kept hidden on it, as a directory's: fs/convert) applied last. */
void b2fs_params_for_new_plain(const char *path, int fd, b2f_params *p);
/* A directory's defaults changed, or a name moved (rename, rmdir): the defaults found for
 * a directory are looked up again. */
void b2fs_params_moved(void);

#endif
