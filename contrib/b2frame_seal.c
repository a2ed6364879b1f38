/* b2frame seal and scrub: checksums added to frames that lack them, and a tree checked. */
#include "contrib/b2frame.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char seal_usage[] =
    "Usage: b2frame seal FILE...\n"
    "Gives every chunk of each frame checksums and the frame a fingerprint of its header,\n"
    "index and trailer, as b2fs writes them, for the chunks' bytes as they are now: chunks\n"
    "another program wrote, and every chunk of a frame another program changed since b2fs\n"
    "wrote it (C-Blosc2 drops the fingerprint: b2fs can no longer tell a chunk it rewrote in\n"
    "place from a damaged one). The new index, trailer and header are committed as b2fs\n"
    "commits (a crash leaves the old frame or the new one). A frame whose fingerprint still\n"
    "holds keeps its checksums, and is not sealed when a chunk no longer matches them.\n";

static const char scrub_usage[] =
    "Usage: b2frame scrub [-q] DIR...\n"
    "Verifies every Blosc2 frame and Bloscpack file under each DIR (as `b2frame verify`\n"
    "does: fingerprint, checksums of every block, every chunk decoded), and every plain\n"
    "file b2fs kept with a checksum (user.b2fs.xxh3); other files are left alone.\n"
    "Prints each problem on stderr (file, chunk and block) and, on stdout, 'damaged:\n"
    "FILE' for each damaged file and a count at the end (not the count with -q).\n"
    "Exit status: 0 when every frame is sound, 1 when any is damaged, 2 when a\n"
    "DIR cannot be walked. For a cron job: `b2frame scrub -q /data || mail ...`.\n";

/* Opens path for sealing: checked first, so that a frame whose fingerprint holds keeps
 * (and is held to) its checksums; one whose fingerprint no longer holds is taken as it is. */
static int open_for_seal(bt_input *in, const char *path)
{
    b2_frame *f;
    char err[256] = "";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc = fd < 0 ? -errno : b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err);
    if (rc == 0)
        b2f_close(f);
    if (fd >= 0)
        close(fd);
    if (rc == B2F_EDAMAGED) {
        printf("%s: %s; taking it as it is\n", path, err);
        b2f_checksums_default(1, 0);
    }
    rc = bt_open_input(in, path, B2F_RDWR, 0);
    b2f_checksums_default(1, 1);
    return rc;
}

static int seal_one(const char *path)
{
    bt_input in;
    int status = BT_FAIL;
    if (open_for_seal(&in, path) != BT_OK)
        return BT_FAIL;
    b2f_stat st;
    b2f_stat_get(in.frame, &st);
    int r = bt_lock_frame(in.fd, F_WRLCK, 0);
    if (r < 0) {
        bt_error(path, "in use by another writer (locked): %s", strerror(-r));
        goto out;
    }
    if (st.nbytes == 0) {
        printf("%s: empty, nothing to seal\n", path);
        status = BT_OK;
        goto out;
    }
    for (int64_t n = 0; n < st.nchunks; n++) {
        int32_t bad;
        int rc = b2f_chunk_verify(in.frame, n, &bad);
        if (rc < 0) {
            bt_error(path, "chunk %lld does not match its checksums (%s): not sealed",
                     (long long)n, b2f_strerror(rc));
            goto out;
        }
    }
    int64_t summed;
    char err[512] = "";
    int rc = b2f_seal(in.frame, &summed);
    if (rc == 0)
        rc = b2f_commit(in.frame, 1, err, sizeof err);
    if (rc < 0) {
        bt_error(path, "cannot seal it: %s", bt_reason(rc, err));
        goto out;
    }
    printf("%s: sealed (%lld chunks given checksums)\n", path, (long long)summed);
    status = BT_OK;
out:
    bt_close_input(&in);
    return status;
}

int bt_cmd_seal(int argc, char **argv)
{
    int status = BT_OK;
    if (bt_no_options(argc, argv, seal_usage, 1, -1, &status) < 0)
        return status;
    for (int i = optind; i < argc; i++)
        if (seal_one(argv[i]) != BT_OK)
            status = BT_FAIL;
    return status;
}

/* The walk's state (nftw takes no context). */
static struct {
    int quiet;
    long frames, plains, damaged, others;
} scrub;

/* Opens path to read without touching its access time where the caller may. */
static int open_quietly(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
    return fd < 0 ? open(path, O_RDONLY | O_CLOEXEC) : fd;
}

static int scrub_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (type != FTW_F || !S_ISREG(st->st_mode) || b2f_is_temp_name(base))
        return 0;
    int fd = open_quietly(path);   /* (if it cannot be opened or read, verify reports why) */
    if (fd >= 0 && b2f_probe(fd) == 0) {
        /* a small file b2fs keeps as a plain file: its checksum, if it has one */
        int rc = b2f_plain_check(fd);
        close(fd);
        if (rc == 0 || (rc < 0 && rc != B2F_EDAMAGED)) {
            scrub.others++;
            return 0;
        }
        scrub.plains++;
        if (rc == B2F_EDAMAGED) {
            scrub.damaged++;
            bt_error(path, "its contents do not match their checksum (%s)", B2F_PLAIN_SUM_XATTR);
            printf("damaged: %s\n", path);
            fflush(stdout);
        }
        return 0;
    }
    if (fd >= 0)
        close(fd);
    scrub.frames++;
    if (bt_verify_file(path, 1) != BT_OK) {
        scrub.damaged++;
        printf("damaged: %s\n", path);
        fflush(stdout);
    }
    return 0;
}

int bt_cmd_scrub(int argc, char **argv)
{
    int status = BT_OK;
    memset(&scrub, 0, sizeof scrub);
    if (bt_quiet_option(argc, argv, scrub_usage, "DIR", &scrub.quiet, &status) < 0)
        return status;
    int walk_failed = 0;
    for (int i = optind; i < argc; i++) {
        if (nftw(argv[i], scrub_entry, 32, FTW_PHYS) != 0) {
            bt_error(argv[i], "cannot walk it: %s", strerror(errno));
            walk_failed = 1;
        }
    }
    if (!scrub.quiet)
        printf("scrub: %ld frames checked, %ld plain files checked against their checksum, "
               "%ld damaged, %ld other files left alone\n",
               scrub.frames, scrub.plains, scrub.damaged, scrub.others);
    return scrub.damaged ? BT_FAIL : walk_failed ? BT_USAGE : BT_OK;
}
