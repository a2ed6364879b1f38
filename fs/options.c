/* b2fs command line: BACKING, the b2fs -o options, --help, --version. FUSE's own
 * options stay in args for fuse_main, which refuses the ones it does not know. */
#include "fs/options.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

b2fs_config b2fs_cfg;

enum { KEY_HELP, KEY_VERSION, KEY_FOREGROUND, KEY_RO, KEY_B2 };

static const struct fuse_opt b2fs_opts[] = {
    FUSE_OPT_KEY("--help", KEY_HELP),
    FUSE_OPT_KEY("-h", KEY_HELP),
    FUSE_OPT_KEY("--version", KEY_VERSION),
    FUSE_OPT_KEY("-V", KEY_VERSION),
    FUSE_OPT_KEY("-f", KEY_FOREGROUND),
    FUSE_OPT_KEY("-d", KEY_FOREGROUND),
    FUSE_OPT_KEY("debug", KEY_FOREGROUND),
    FUSE_OPT_KEY("ro", KEY_RO),
    FUSE_OPT_KEY("codec=", KEY_B2),
    FUSE_OPT_KEY("clevel=", KEY_B2),
    FUSE_OPT_KEY("filters=", KEY_B2),
    FUSE_OPT_KEY("typesize=", KEY_B2),
    FUSE_OPT_KEY("chunksize=", KEY_B2),
    FUSE_OPT_KEY("blocksize=", KEY_B2),
    FUSE_OPT_KEY("nthreads=", KEY_B2),
    FUSE_OPT_KEY("compress_idle=", KEY_B2),
    FUSE_OPT_KEY("idle_clevel=", KEY_B2),
    FUSE_OPT_KEY("cache_size=", KEY_B2),
    FUSE_OPT_KEY("dirty_size=", KEY_B2),
    FUSE_OPT_KEY("checksums=", KEY_B2),
    FUSE_OPT_KEY("push_blocks=", KEY_B2),
    FUSE_OPT_KEY("plain_small=", KEY_B2),
    FUSE_OPT_KEY("new_plain=", KEY_B2),
    FUSE_OPT_KEY("name_cache=", KEY_B2),
    FUSE_OPT_KEY("prefetch=", KEY_B2),
    FUSE_OPT_END,
};

static const char usage_text[] =
    "usage: b2fs [options] BACKING MOUNTPOINT\n"
    "\n"
    "Mounts the directory BACKING on MOUNTPOINT. Blosc2 frames (NAME.b2frame, NAME.b2f)\n"
    "show as NAME with their decompressed contents, read and write; array frames\n"
    "(STEM.b2nd) show as STEM.npy, the NumPy file of the array; Bloscpack files\n"
    "(NAME.blp) show as NAME, read only; other files are passed through. Files created\n"
    "through the mount are stored as NAME.b2frame (a small one that does not compress:\n"
    "as NAME, see plain_small); a .npy file written as STEM.npy is stored as the array\n"
    "frame STEM.b2nd when it is closed.\n"
    "\n"
    "b2fs options (-o name=value,...):\n"
    "    codec=NAME         codec of new chunks: blosclz, lz4, lz4hc, zlib, zstd (zstd)\n"
    "    clevel=N           compression level 0..9 (1)\n"
    "    filters=LIST       filter pipeline joined by '+': shuffle, bitshuffle, delta,\n"
    "                       trunc:BITS, int_trunc:BITS, bytedelta, e.g. delta+shuffle,\n"
    "                       shuffle+bytedelta, none, or auto: each chunk's filters (none,\n"
    "                       shuffle, bitshuffle, shuffle+bytedelta) chosen from its\n"
    "                       content (auto)\n"
    "    typesize=N         item size in bytes 1..255. Not given, filters=auto chooses\n"
    "                       it from a new file's first chunk: 1 for text, 2, 4, 8 or 16\n"
    "                       where a shuffle pays, else 8 (8)\n"
    "    chunksize=SIZE     bytes per chunk of new files (1M)\n"
    "    blocksize=SIZE     bytes per block of new files; 0 = automatic: C-Blosc2's choice,\n"
    "                       except that blocks split into streams (a shuffle with a fast\n"
    "                       codec) keep the unsplit size, at least 64K, where C-Blosc2 makes\n"
    "                       them typesize times bigger: small random reads decode less (0)\n"
    "    nthreads=N         worker threads for compression and read-ahead, and threads\n"
    "                       rewriting a frame of variable-size chunks or variable-length\n"
    "                       blocks before its first write (2)\n"
    "    cache_size=SIZE    decoded block cache shared by all files (64M)\n"
    "    dirty_size=SIZE    data written and not yet committed, all files together (64M,\n"
    "                       at least 1M); past half of it, a writer with an eighth of it\n"
    "                       staged has its file committed behind it while it goes on;\n"
    "                       a new file stored as written, once a 32nd of it (and a\n"
    "                       quarter of the file) is staged\n"
    "    checksums=on|off   on: every chunk written gets checksums (per block) and the\n"
    "                       frame a fingerprint of its header, index and trailer; every\n"
    "                       read checks what it reads, and damage gives EIO, never wrong\n"
    "                       bytes. off: neither written nor checked (on)\n"
    "    push_blocks=on|off on: a block decoded for a random read goes whole into the\n"
    "                       kernel's page cache, so reads of its other pages need no\n"
    "                       request and no decoding (as squashfs does); off: only the pages\n"
    "                       asked for (on)\n"
    "    plain_small=on|off on: a new file of at most one chunk that its frame does not\n"
    "                       make smaller (an icon, a small .gz) is stored as the plain\n"
    "                       file NAME when closed, its checksum in the hidden attribute\n"
    "                       user.b2fs.xxh3 (checked when it is opened for reading, dropped\n"
    "                       by its first change); off: every new file is a frame (on)\n"
    "    new_plain=on|off   on: a file created through the mount (but a .npy file) is\n"
    "                       written as the plain file NAME, as a pass-through writes it,\n"
    "                       and made the frame NAME.b2frame once it has had no change\n"
    "                       for compress_idle seconds and nothing has it open (or at\n"
    "                       unmount; after a daemon that died, once opened), keeping its\n"
    "                       mode, owner, xattrs and times: copying many small files in\n"
    "                       costs what it costs on BACKING itself. A read of one of its\n"
    "                       user.blosc2.* attributes makes it the frame at once (but\n"
    "                       while it is open elsewhere or past 16 MiB: the codec\n"
    "                       parameters are answered); off: a new file is a frame from\n"
    "                       its create (on; off where compress_idle is 0, which\n"
    "                       new_plain=on refuses)\n"
    "    name_cache=on|off  on: the names of recently used directories of BACKING are\n"
    "                       kept in memory, current by inotify, so a lookup of a name\n"
    "                       that does not exist searches the directory not at all, where\n"
    "                       it searched it four times (NAME.b2frame, NAME.b2f, NAME.blp,\n"
    "                       NAME); only where BACKING is ext4, xfs (in a build with\n"
    "                       xfslibs-dev), btrfs, tmpfs or f2fs, whose changes inotify sees\n"
    "                       all of, and not in case-insensitive or encrypted directories\n"
    "                       (on)\n"
    "    prefetch=on|off    on: when the names a program looks up or opens in a\n"
    "                       directory follow the order of its last listing (find, tar,\n"
    "                       grep -r, cp -r), the regular files among the next 32 entries\n"
    "                       are read ahead from BACKING (a small one whole, a larger\n"
    "                       one's ends), and a listing with attributes reads ahead the\n"
    "                       frames it opens; off: no file is read before it is asked\n"
    "                       for (on; off where BACKING is on a network or FUSE file\n"
    "                       system, where reading ahead moves bytes a cluster's other\n"
    "                       hosts may change)\n"
    "    compress_idle=SECS a new file's chunks (or a file's truncated to 0) are stored as\n"
    "                       written, at the cost of a copy, and compressed with the file's\n"
    "                       parameters once it has had no write for SECS seconds, and at\n"
    "                       unmount, also a new file of one chunk found to compress well\n"
    "                       (others of one chunk: when closed; one left stored by a\n"
    "                       daemon that died: once opened after the next mount); 0:\n"
    "                       each chunk is compressed as it is written\n"
    "                       (2; 0 where BACKING is on a network or FUSE file system,\n"
    "                       where moving bytes costs more than compressing them)\n"
    "    idle_clevel=N      level of that compression (and of a new file of one chunk\n"
    "                       compressed at its close): the higher of this and clevel; a\n"
    "                       file's clevel 0 (no compression) stays 0 (4: zstd's level 7)\n"
    "    ro                 read only\n"
    "SIZE takes a K, M or G suffix. Directories carry their own defaults for new files in\n"
    "the extended attributes user.blosc2.{codec,clevel,filters,typesize,chunksize}.\n"
    "\n"
    "FUSE options:\n"
    "    -f                 stay in the foreground (logs on stderr; else syslog)\n"
    "    -d, -o debug       foreground with FUSE debug output\n"
    "    -s                 single-threaded\n"
    "    -o max_threads=N   threads serving requests, at most (10): one serves a\n"
    "                       writing program's quick requests, two a processor wait for\n"
    "                       other requests; one taking over 2 ms brings another\n"
    "    -o allow_other     let other users in\n"
    "    -o default_permissions  let the kernel check permissions\n"
    "    -h, --help         this text\n"
    "    -V, --version      version\n";

int64_t b2fs_parse_size(const char *text)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || v < 0)
        return -1;
    int shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10;
    else if (*end == 'm' || *end == 'M')
        shift = 20;
    else if (*end == 'g' || *end == 'G')
        shift = 30;
    if (shift) {
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (*end == 'B')
            end++;
    }
    if (*end)
        return -1;
    if (v > (INT64_MAX >> shift))
        return -1;
    return (int64_t)v << shift;
}

static int parse_int(const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int b2fs_param_set(b2f_params *p, const char *name, const char *value, char sep,
                   const char **why)
{
    long v;
    if (!strcmp(name, "codec")) {
        int c = b2_codec_from_name(value);
        if (c < 0) {
            *why = "not one of blosclz, lz4, lz4hc, zlib, zstd";
            return -1;
        }
        p->cp.codec = c;
    } else if (!strcmp(name, "clevel")) {
        if (parse_int(value, 0, 9, &v)) {
            *why = "not an integer 0..9";
            return -1;
        }
        p->cp.clevel = (int)v;
    } else if (!strcmp(name, "filters") && !strcmp(value, "auto")) {
        p->cp.choose = 1;   /* the filters stay the frame's defaults */
    } else if (!strcmp(name, "filters")) {
        uint8_t f[B2_MAX_FILTERS], m[B2_MAX_FILTERS];
        if (b2_filters_parse(value, sep, f, m)) {
            *why = sep == '+' ? "not a filter pipeline like shuffle, delta+shuffle, trunc:20+shuffle"
                              : "not a filter pipeline like shuffle, delta,shuffle, trunc:20,shuffle";
            return -1;
        }
        memcpy(p->cp.filters, f, sizeof f);
        memcpy(p->cp.filters_meta, m, sizeof m);
        p->cp.choose = 0;
    } else if (!strcmp(name, "typesize")) {
        if (parse_int(value, 1, 255, &v)) {
            *why = "not an integer 1..255";
            return -1;
        }
        p->cp.typesize = (int)v;
        p->cp.choose_typesize = 0;   /* given: not chosen */
    } else if (!strcmp(name, "chunksize")) {
        int64_t s = b2fs_parse_size(value);
        if (s < B2FS_CHUNKSIZE_MIN || s > (1 << 30)) {
            *why = "not a size from 4K to 1G";
            return -1;
        }
        p->chunksize = (int32_t)s;
    } else if (!strcmp(name, "blocksize")) {
        int64_t s = b2fs_parse_size(value);
        if (s < 0 || s > (1 << 30) || (s > 0 && s < 16)) {
            *why = "not 0 (automatic) or a size from 16 to 1G";
            return -1;
        }
        p->cp.blocksize = (int32_t)s;
    } else {
        *why = "unknown parameter";
        return -1;
    }
    return 0;
}

static int bad_value(const char *name, const char *value, const char *why)
{
    fprintf(stderr, "b2fs: bad value for option %s: '%s' (%s)\n", name, value, why);
    return -1;
}

static int set_option(b2fs_config *cfg, const char *arg)
{
    char name[32];
    const char *eq = strchr(arg, '=');
    size_t nl = (size_t)(eq - arg);
    if (nl >= sizeof name)
        return bad_value(arg, "", "unknown");
    memcpy(name, arg, nl);
    name[nl] = 0;
    const char *value = eq + 1, *why = NULL;
    int *flag = !strcmp(name, "checksums") ? &cfg->checksums
              : !strcmp(name, "push_blocks") ? &cfg->push_blocks
              : !strcmp(name, "plain_small") ? &cfg->plain_small
              : !strcmp(name, "new_plain") ? &cfg->new_plain
              : !strcmp(name, "name_cache") ? &cfg->name_cache
              : !strcmp(name, "prefetch") ? &cfg->prefetch : NULL;
    if (flag) {
        if (strcmp(value, "on") && strcmp(value, "off"))
            return bad_value(name, value, "on or off");
        *flag = !strcmp(value, "on");
    } else if (!strcmp(name, "compress_idle")) {
        long v;
        if (parse_int(value, 0, 3600, &v))
            return bad_value(name, value, "not a number of seconds 0..3600");
        cfg->compress_idle = (int)v;
    } else if (!strcmp(name, "idle_clevel")) {
        long v;
        if (parse_int(value, 0, 9, &v))
            return bad_value(name, value, "not an integer 0..9");
        cfg->idle_clevel = (int)v;
    } else if (!strcmp(name, "nthreads")) {
        long v;
        if (parse_int(value, 1, 64, &v))
            return bad_value(name, value, "not an integer 1..64");
        cfg->nthreads = (int)v;
    } else if (!strcmp(name, "cache_size") || !strcmp(name, "dirty_size")) {
        int64_t s = b2fs_parse_size(value);
        if (s < 0 || s > ((int64_t)1 << 40))
            return bad_value(name, value, "not a size like 64M");
        if (name[0] == 'c')
            cfg->cache_size = (size_t)s;
        else
            cfg->dirty_limit = (size_t)(s < (1 << 20) ? (1 << 20) : s);
    } else if (b2fs_param_set(&cfg->params, name, value, '+', &why)) {
        return bad_value(name, value, why);
    }
    return 0;
}

struct parse_state {
    b2fs_config *cfg;
    const char *mountpoint;
    int error, exit_now, nonopts;
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
    struct parse_state *ps = data;
    switch (key) {
    case KEY_HELP:
        printf("%s", usage_text);
        ps->exit_now = 1;
        return 0;
    case KEY_VERSION: {
        char libs[200];
        b2f_lib_versions(libs, sizeof libs);
        printf("b2fs %s\nlibfuse %s, %s\n", PACKAGE_VERSION, fuse_pkgversion(), libs);
        ps->exit_now = 1;
        return 0;
    }
    case KEY_FOREGROUND:
        ps->cfg->foreground = 1;
        return 1;
    case KEY_RO:
        ps->cfg->ro = 1;
        return 1;
    case KEY_B2:
        if (set_option(ps->cfg, arg))
            ps->error = 1;
        return 0;
    case FUSE_OPT_KEY_NONOPT:
        if (ps->nonopts++ == 0) {
            ps->cfg->backing = arg;
            return 0;
        }
        ps->mountpoint = arg;
        return 1;
    default:
        return 1;
    }
}

/* Whether the directory fd is on a network or FUSE file system (a cluster's client):
 * there, storing a new file as written and rewriting it compressed later moves more
 * bytes over the network than compressing it as written. */
static int on_network(int fd)
{
    struct statfs st;
    if (fstatfs(fd, &st) < 0)
        return 0;
    switch ((unsigned long)st.f_type) {
    case FUSE_SUPER_MAGIC: case NFS_SUPER_MAGIC: case SMB_SUPER_MAGIC:
    case CIFS_SUPER_MAGIC: case SMB2_SUPER_MAGIC: case CEPH_SUPER_MAGIC:
    case AFS_SUPER_MAGIC: case AFS_FS_MAGIC: case V9FS_MAGIC: case OCFS2_SUPER_MAGIC:
    case 0x01161970:   /* GFS2 */
    case 0x0bd00bd0:   /* Lustre */
        return 1;
    default:
        return 0;
    }
}

int b2fs_options_parse(struct fuse_args *args, b2fs_config *cfg)
{
    b2f_params_default(&cfg->params);
    cfg->params.cp.choose = 1;   /* filters=auto */
    cfg->params.cp.choose_typesize = 1;   /* unless typesize= is given */
    cfg->nthreads = 2;
    cfg->cache_size = (size_t)64 << 20;
    cfg->dirty_limit = (size_t)64 << 20;
    cfg->rootfd = -1;
    cfg->checksums = 1;
    cfg->push_blocks = 1;
    cfg->plain_small = 1;
    cfg->new_plain = -1;   /* the default follows compress_idle, below */
    cfg->name_cache = 1;
    cfg->prefetch = -1;   /* the default is set once BACKING is known */
    cfg->compress_idle = -1;   /* not given: by BACKING's file system, below */
    cfg->idle_clevel = B2FS_IDLE_CLEVEL;
    struct parse_state ps = {.cfg = cfg};
    if (fuse_opt_parse(args, &ps, b2fs_opts, opt_proc) == -1)
        return -1;
    if (ps.exit_now)
        return 1;
    if (ps.error)
        return -1;
    if (ps.nonopts != 2) {
        fprintf(stderr, "b2fs: need BACKING and MOUNTPOINT (b2fs --help)\n");
        return -1;
    }
    b2f_checksums_default(cfg->checksums, cfg->checksums);
    /* Open BACKING now: after daemonising the working directory is /. */
    cfg->rootfd = open(cfg->backing, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cfg->rootfd < 0) {
        fprintf(stderr, "b2fs: backing directory %s: %s\n", cfg->backing, strerror(errno));
        return -1;
    }
    char *real = realpath(cfg->backing, NULL), *mreal = realpath(ps.mountpoint, NULL);
    if (real)
        cfg->backing = real; /* absolute, for the logs (kept for the life of the program) */
    size_t rl = strlen(cfg->backing);
    int inside = mreal && !strncmp(mreal, cfg->backing, rl) && (mreal[rl] == '/' || !mreal[rl]);
    free(mreal);
    if (inside) {
        fprintf(stderr, "b2fs: the mount point %s is inside the backing directory %s\n",
                ps.mountpoint, cfg->backing);
        return -1;
    }
    int network = on_network(cfg->rootfd);
    if (cfg->compress_idle < 0)
        cfg->compress_idle = network ? 0 : 2;
    if (cfg->new_plain < 0)
        cfg->new_plain = cfg->compress_idle > 0;
    if (cfg->new_plain && cfg->compress_idle == 0) {
        fprintf(stderr, "b2fs: new_plain=on needs compress_idle above 0%s\n",
                network ? " (0 is its default where BACKING is on a network or FUSE file system)"
                        : "");
        return -1;
    }
    if (cfg->prefetch < 0)
        cfg->prefetch = !network;
    b2_cctx *probe = b2_cctx_new(&cfg->params.cp);
    if (!probe) {
        fprintf(stderr, "b2fs: the codec parameters do not go together (typesize %d, blocksize %d)\n",
                cfg->params.cp.typesize, (int)cfg->params.cp.blocksize);
        return -1;
    }
    b2_cctx_free(probe);
    return 0;
}

void b2fs_param_text(const b2f_params *p, const char *name, char *out, size_t cap)
{
    if (!strcmp(name, "codec")) {
        const char *c = b2_codec_name(p->cp.codec);
        snprintf(out, cap, "%s", c ? c : "unknown");
    } else if (!strcmp(name, "clevel")) {
        snprintf(out, cap, "%d", p->cp.clevel);
    } else if (!strcmp(name, "filters") && p->cp.choose) {
        snprintf(out, cap, "auto");
    } else if (!strcmp(name, "filters")) {
        if (b2_filters_format(p->cp.filters, p->cp.filters_meta, ',', out, cap))
            snprintf(out, cap, "unknown");
    } else if (!strcmp(name, "typesize")) {
        snprintf(out, cap, "%d", p->cp.typesize);
    } else {
        snprintf(out, cap, "%ld", (long)p->chunksize);
    }
}
