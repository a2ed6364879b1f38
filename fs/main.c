/* b2fs [options] BACKING MOUNTPOINT */
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/ll.h"
#include "fs/loop.h"
#include "fs/options.h"
#include "fs/push.h"

/* A process with threads grows its table of file descriptors with an RCU grace period each
 * time the table doubles, some milliseconds with the caller stopped: a cp -r of 763
 * headers waited 9 and 11 ms in two of its creates, as many nodes came to hold their
 * files open (fs/node, fs/idle). The table is made large enough at start: 32 KiB for
 * 4,096 descriptors, or the limit if that is lower. */
#define DESCRIPTOR_TABLE_START 4096
static void grow_descriptor_table(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 2)
        return;
    int top = rl.rlim_cur < DESCRIPTOR_TABLE_START ? (int)rl.rlim_cur - 1
                                                   : DESCRIPTOR_TABLE_START - 1;
    int fd = fcntl(b2fs_cfg.rootfd, F_DUPFD_CLOEXEC, top);
    if (fd >= 0)
        close(fd);
}

/* Mounts, serves requests until unmounted or signalled, unmounts. 0 or 1. */
static int serve(struct fuse_args *args)
{
    struct fuse_cmdline_opts o;
    if (fuse_parse_cmdline(args, &o) != 0)
        return 1;
    int r = 1;
    struct fuse_session *se = fuse_session_new(args, &b2fs_ll_ops, sizeof b2fs_ll_ops, NULL);
    if (!se)
        goto out;
    ll_bind(se);
    if (fuse_set_signal_handlers(se) != 0)
        goto destroy;
    if (fuse_session_mount(se, o.mountpoint) != 0)
        goto handlers;
    fuse_daemonize(o.foreground);
    grow_descriptor_table();   /* (after daemonizing: a fork copies only the part in use) */
    if (push_start(se) != 0)   /* (after daemonizing: its thread would not survive the fork) */
        b2fs_cfg.push_blocks = 0;
    if (o.singlethread)
        r = fuse_session_loop(se);
    else
        r = loop_serve(se, o.max_threads, B2FS_IO_SIZE);
    r = r != 0;
    push_stop();
    fuse_session_unmount(se);
handlers:
    fuse_remove_signal_handlers(se);
destroy:
    fuse_session_destroy(se);
out:
    free(o.mountpoint);
    return r;
}

/* Where nothing can be written (a read-only or full file system, no permission), writes
 * fail later as they would have: the lock check has nothing to say. A switch, not a chain
 * of e != -EROFS && ...: gcc 12.2 -O2 turns such a chain after e < 0 into a bit test that
 * is wrong for e == 0. */
static int nothing_writable(int e)
{
    switch (e) {
    case -EROFS:
    case -EACCES:
    case -EPERM:
    case -ENOSPC:
    case -EDQUOT:
        return 1;
    default:
        return 0;
    }
}

/* Each open node holds its frame and its directory open, and some hundreds of nodes stay
 * open while idle or queued for compression (fs/node, fs/idle), beside the files programs
 * hold open through the mount: the soft limit of 1,024 a login shell gives can run out in
 * a cp -r of a big tree, which then fails with EMFILE. The hard limit is the daemon's to
 * take. */
#define FEW_OPEN_FILES 4096
static void raise_open_files_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < FEW_OPEN_FILES)
        fprintf(stderr, "b2fs: warning: at most %llu open files (ulimit -n): copying a tree "
                "of thousands of files in may fail with \"Too many open files\"\n",
                (unsigned long long)rl.rlim_cur);
}

int main(int argc, char *argv[])
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    int r = b2fs_options_parse(&args, &b2fs_cfg);
    if (r) {
        fuse_opt_free_args(&args);
        return r > 0 ? 0 : 1;
    }
    if (!b2fs_cfg.ro) {
        /* Commits take an OFD lock on the frame: where the backing file system does not
         * enforce them, mounts sharing it (on this host or others) could overwrite each
         * other's commits. */
        int e = backing_check_locks(b2fs_cfg.rootfd);
        if (e < 0 && !nothing_writable(e)) {
            fprintf(stderr,
                    "b2fs: %s: its file system does not enforce OFD locks (fcntl F_OFD_SETLK: "
                    "%s), which b2fs needs to commit safely; mount it read-only (-o ro)\n",
                    b2fs_cfg.backing, strerror(-e));
            fuse_opt_free_args(&args);
            return 1;
        }
        backing_probe_unnamed(b2fs_cfg.rootfd);
    }
    b2f_malloc_policy();
    raise_open_files_limit();
    /* the modes FUSE passes have the caller's umask applied already */
    umask(0);
    fuse_opt_add_arg(&args, "-osubtype=b2fs");
    if (!strchr(b2fs_cfg.backing, ',') && strlen(b2fs_cfg.backing) < 4000) {
        char opt[4100];
        snprintf(opt, sizeof opt, "-ofsname=%s", b2fs_cfg.backing);
        fuse_opt_add_arg(&args, opt);
    }
    r = serve(&args);
    fuse_opt_free_args(&args);
    return r;
}
