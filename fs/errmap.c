/* Results as FUSE callbacks return them (errmap.h). */
#include "fs/errmap.h"

#include <errno.h>

#include "frame/frame.h"

int b2fs_fuse_result(int code)
{
    if (code >= 0)
        return code;
    switch (code) {
    case B2E_NOMEM:
        return -ENOMEM;
    case B2F_ERDONLY:
        return -EROFS;
    case B2F_ETOOBIG:
        return -EFBIG;
    case B2F_ERANGE:
        return -EINVAL;
    case B2F_ENOTFOUND:
        return -ENODATA;
    default:
        return b2_is_errno(code) ? code : -EIO;
    }
}
