/* One short text per B2E_* code; strerror's for -errno. */
#include <string.h>

#include "codec/chunk.h"

const char *b2_strerror(int code)
{
    switch (code) {
    case B2E_OK: return "success";
    case B2E_NOMEM: return "out of memory";
    case B2E_PARAM: return "invalid argument";
    case B2E_TRUNCATED: return "chunk truncated: shorter than its header or cbytes says";
    case B2E_HEADER: return "chunk header field out of range";
    case B2E_VERSION: return "unsupported chunk format version or feature";
    case B2E_CODEC: return "codec not supported (snappy, lizard or a user-defined codec)";
    case B2E_FILTER: return "unknown filter or bad filter parameter";
    case B2E_BSTARTS: return "block start points outside the chunk";
    case B2E_STREAM: return "stream size points outside the chunk or block";
    case B2E_CORRUPT: return "compressed stream is corrupt";
    case B2E_DST_SMALL: return "output buffer too small";
    case B2E_IO: return "reading the chunk failed";
    case B2E_DICT: return "dictionary section out of bounds or unusable";
    case B2E_BLOSCLZ_MISSING: return "blosclz codec not available in this build";
    default: break;
    }
    return b2_is_errno(code) ? strerror(-code) : "unknown error";
}
