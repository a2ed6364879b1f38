/* b2frame: inspect, decode, write, check and compact Blosc2 frames without a mount. */
#include <stdio.h>
#include <string.h>

#include "contrib/b2frame.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static const char usage[] =
    "Usage: b2frame COMMAND [OPTIONS] ARGS...\n"
    "\n"
    "Works on Blosc2 contiguous frames (and reads Bloscpack files and single Blosc chunks)\n"
    "without a mount.\n"
    "\n"
    "Commands:\n"
    "  info [--json] FILE...      parameters, sizes, ratio, chunks, metalayers\n"
    "  cat FILE...                decompressed contents to stdout (frame, Bloscpack, chunk)\n"
    "  pack [OPTIONS] IN OUT      compress IN (- for stdin) into the frame OUT\n"
    "  unpack IN OUT              decompress IN into the plain file OUT\n"
    "  verify FILE...             decode every chunk; exit status 0 only when sound\n"
    "  compact FILE...            rewrite a frame without dead space\n"
    "  seal FILE...               give every chunk checksums, the frame a fingerprint\n"
    "  scrub DIR...               verify every frame (and checksummed plain file) under\n"
    "                             DIR; exit status 1 on damage\n"
    "  meta FILE [NAME [VALUE]]   list, show or set metalayers and vlmetalayers\n"
    "\n"
    "`b2frame COMMAND --help` describes a command. Codecs: blosclz, lz4, lz4hc, zlib, zstd.\n"
    "Filters: none, shuffle, bitshuffle, delta, trunc:BITS, int_trunc:BITS, bytedelta,\n"
    "joined by ',' (delta,shuffle; shuffle,bytedelta).\n"
    "Sizes accept K, M, G suffixes (powers of 1024).\n";

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"info", bt_cmd_info},       {"cat", bt_cmd_cat},         {"pack", bt_cmd_pack},
    {"unpack", bt_cmd_unpack},   {"verify", bt_cmd_verify},   {"compact", bt_cmd_compact},
    {"meta", bt_cmd_meta},       {"seal", bt_cmd_seal},       {"scrub", bt_cmd_scrub},
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        bt_error(NULL, "no command given");
        return bt_usage(usage, BT_USAGE);
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return bt_usage(usage, BT_OK);
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        char libs[200];
        b2f_lib_versions(libs, sizeof libs);
        printf("b2frame (b2fs) %s\n%s\n", PACKAGE_VERSION, libs);
        return BT_OK;
    }
    b2f_malloc_policy();
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    bt_error(NULL, "unknown command '%s'", argv[1]);
    return bt_usage(usage, BT_USAGE);
}
