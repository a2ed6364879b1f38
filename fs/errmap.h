/* fs/errmap: the one place where a result becomes the errno a FUSE callback returns.
 *
 * Below the FUSE callbacks (fs/ops.c, fs/xattr.c) every function returns 0 or a count,
 * or a negative code: either -errno (a failed system call, or a refusal fs/ chose), or a
 * codec or frame code (B2E_*, B2F_E*), which live in their own space below -4095 and
 * never collide with an errno. The callbacks pass each result through b2fs_fuse_result
 * as they return it, and nowhere else is a code turned into an errno. Calls: nothing. */
#ifndef B2FS_ERRMAP_H
#define B2FS_ERRMAP_H

/* code >= 0 and -errno come back as they are; B2E_NOMEM gives -ENOMEM, B2F_ERDONLY
 * -EROFS, B2F_ETOOBIG -EFBIG, B2F_ERANGE -EINVAL, B2F_ENOTFOUND -ENODATA, and every
 * other codec or frame code (damaged or unreadable data) -EIO. */
int b2fs_fuse_result(int code);

#endif
