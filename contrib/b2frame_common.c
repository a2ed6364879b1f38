/* b2frame: messages, number parsing, opening inputs, temporary files, progress. */
#include "contrib/b2frame.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int errors_muted;

void bt_errors_muted(int on)
{
    errors_muted = on;
}

void bt_error(const char *file, const char *fmt, ...)
{
    if (errors_muted)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("b2frame: ", stderr);
    if (file)
        fprintf(stderr, "%s: ", file);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int bt_lock_frame(int fd, short type, int wait)
{
    struct flock lk = {.l_type = type, .l_whence = SEEK_SET};
    while (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lk) < 0)
        if (errno != EINTR)
            return -errno;
    return 0;
}

const char *bt_reason(int code, const char *err)
{
    return err && err[0] ? err : b2f_strerror(code);
}

int bt_usage(const char *usage, int status)
{
    fputs(usage, status == BT_OK ? stdout : stderr);
    return status;
}

int bt_progress_quiet;

/* --help, and -q/--quiet when quiet_ok; then min..max arguments. */
static int simple_options(int argc, char **argv, const char *usage, int quiet_ok, int min,
                          int max, int *status)
{
    static const struct option longopts[] = {{"quiet", no_argument, NULL, 'q'},
                                              {"help", no_argument, NULL, 'h'},
                                              {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, quiet_ok ? "qh" : "h", longopts + !quiet_ok, NULL)) !=
           -1) {
        if (c == 'q') {
            bt_progress_quiet = 1;
            continue;
        }
        *status = bt_usage(usage, c == 'h' ? BT_OK : BT_USAGE);
        return -1;
    }
    int n = argc - optind;
    if (n < min || (max >= 0 && n > max)) {
        bt_error(NULL, "%s: %s", argv[0], n < min ? "missing arguments" : "too many arguments");
        *status = bt_usage(usage, BT_USAGE);
        return -1;
    }
    return 0;
}

int bt_no_options(int argc, char **argv, const char *usage, int min, int max, int *status)
{
    return simple_options(argc, argv, usage, 0, min, max, status);
}

int bt_progress_options(int argc, char **argv, const char *usage, int min, int max, int *status)
{
    return simple_options(argc, argv, usage, 1, min, max, status);
}

int bt_quiet_option(int argc, char **argv, const char *usage, const char *what, int *quiet,
                    int *status)
{
    static const struct option longopts[] = {{"quiet", no_argument, NULL, 'q'},
                                              {"help", no_argument, NULL, 'h'},
                                              {NULL, 0, NULL, 0}};
    int c;
    *quiet = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        if (c != 'q') {
            *status = bt_usage(usage, c == 'h' ? BT_OK : BT_USAGE);
            return -1;
        }
        *quiet = 1;
        bt_progress_quiet = 1;
    }
    if (optind >= argc) {
        bt_error(NULL, "%s: no %s given", argv[0], what);
        *status = bt_usage(usage, BT_USAGE);
        return -1;
    }
    return 0;
}

int bt_parse_int(const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int bt_parse_size(const char *text, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    if (text[0] == '-')
        return -1;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text)
        return -1;
    int shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    }
    if (*end || v > (unsigned long long)max >> shift)
        return -1;
    *out = (int64_t)(v << shift);
    return 0;
}

int bt_write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* The whole file as one chunk: its header must say exactly the file's size. */
static int load_chunk(bt_input *in, char *why, size_t whylen)
{
    struct stat st;
    uint8_t head[B2_HEADER_LEN];
    if (fstat(in->fd, &st) < 0 || st.st_size < B2_HEADER_LEN_V1)
        return -1;
    size_t want = st.st_size < B2_HEADER_LEN ? (size_t)st.st_size : B2_HEADER_LEN;
    if (pread(in->fd, head, want, 0) != (ssize_t)want)
        return -1;
    int rc = b2_chunk_parse_header(head, want, &in->info);
    if (rc < 0) {
        /* cbytes (bytes 12..15) equal to the file size: a chunk this reader cannot take. */
        uint32_t cbytes = (uint32_t)head[12] | (uint32_t)head[13] << 8 | (uint32_t)head[14] << 16 |
                          (uint32_t)head[15] << 24;
        if (cbytes == (uint64_t)st.st_size)
            snprintf(why, whylen, "a Blosc chunk that cannot be read: %s", b2_strerror(rc));
        return -1;
    }
    if (in->info.cbytes != st.st_size) {
        snprintf(why, whylen, "a Blosc chunk header says %d bytes but the file has %lld",
                 (int)in->info.cbytes, (long long)st.st_size);
        return -1;
    }
    in->chunk = malloc((size_t)st.st_size);
    if (!in->chunk || pread(in->fd, in->chunk, (size_t)st.st_size, 0) != st.st_size) {
        snprintf(why, whylen, "cannot read the chunk: %s", strerror(in->chunk ? errno : ENOMEM));
        return -1;
    }
    return 0;
}

int bt_open_input(bt_input *in, const char *path, int mode, int allow_chunk)
{
    memset(in, 0, sizeof *in);
    in->path = path;
    in->fd = open(path, mode == B2F_RDWR ? O_RDWR : O_RDONLY);
    if (in->fd < 0) {
        bt_error(path, "%s", strerror(errno));
        return BT_FAIL;
    }
    char err[512] = "";
    int rc = b2f_open(&in->frame, in->fd, mode, NULL, err, sizeof err);
    if (rc == 0)
        return BT_OK;
    if (rc == B2F_EFORMAT && allow_chunk) {
        char why[256] = "";
        if (load_chunk(in, why, sizeof why) == 0)
            return BT_OK;
        if (why[0])
            bt_error(path, "%s", why);
        else
            bt_error(path, "not a Blosc2 frame, Bloscpack file or Blosc chunk");
    } else if (rc == B2F_EFORMAT) {
        bt_error(path, "not a Blosc2 frame or Bloscpack file (%s)", bt_reason(rc, err));
    } else {
        bt_error(path, "%s", bt_reason(rc, err));
    }
    bt_close_input(in);
    return BT_FAIL;
}

void bt_close_input(bt_input *in)
{
    b2f_close(in->frame);
    free(in->chunk);
    if (in->fd >= 0)
        close(in->fd);
    memset(in, 0, sizeof *in);
    in->fd = -1;
}

static void split_path(const char *path, char *dir, size_t dirlen, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, dirlen, ".");
        *base = path;
    } else {
        snprintf(dir, dirlen, "%.*s", slash == path ? 1 : (int)(slash - path), path);
        *base = slash + 1;
    }
}

/* The temporary file being written, removed if a signal ends the program first. */
static char pending_tmp[4096];

static void remove_pending(int sig)
{
    if (pending_tmp[0])
        unlink(pending_tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void track_temp(const char *tmp)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    snprintf(pending_tmp, sizeof pending_tmp, "%s", tmp ? tmp : "");
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], tmp ? remove_pending : SIG_DFL);
}

void bt_drop_temp(int fd, const char *tmp)
{
    close(fd);
    unlink(tmp);
    track_temp(NULL);
}

int bt_temp_next_to(const char *path, char *tmp, size_t tmplen)
{
    char dir[PATH_MAX];
    const char *base;
    split_path(path, dir, sizeof dir, &base);
    (void)base;
    char name[64];
    b2f_temp_name(name, sizeof name);
    if ((size_t)snprintf(tmp, tmplen, "%s/%s", dir, name) >= tmplen) {
        bt_error(path, "path too long");
        return -1;
    }
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        bt_error(path, "cannot create a temporary file in %s: %s", dir, strerror(errno));
        return -1;
    }
    track_temp(tmp);
    return fd;
}

int bt_commit_temp(int fd, const char *tmp, const char *path)
{
    char dir[PATH_MAX];
    const char *base;
    split_path(path, dir, sizeof dir, &base);
    const char *step = "fsync";
    if (fsync(fd) < 0)
        goto bad;
    step = "rename";
    if (rename(tmp, path) < 0)
        goto bad;
    track_temp(NULL);
    close(fd);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
bad:
    bt_error(path, "%s of %s failed: %s", step, tmp, strerror(errno));
    bt_drop_temp(fd, tmp);
    return -1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds of work before the line first shows: B2FRAME_PROGRESS_AFTER, else 1. */
static double progress_after(void)
{
    const char *s = getenv("B2FRAME_PROGRESS_AFTER");
    char *end;
    double v = s && *s ? strtod(s, &end) : 1.0;
    return s && *s && (*end || v < 0) ? 1.0 : v;
}

void bt_progress_begin(bt_progress *p, const char *what, int64_t total)
{
    p->what = what;
    p->total = total;
    p->active = 0;
    p->start = !bt_progress_quiet && isatty(STDERR_FILENO) ? now() : -1;
    p->after = p->start < 0 ? 0 : progress_after();
    p->last = 0;
}

/* "1.5 GiB", "730 MiB", "12 KiB", "812 B" */
static void human(char *out, size_t cap, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    snprintf(out, cap, u > 0 && bytes < 10 ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

static void clock_text(char *out, size_t cap, double secs)
{
    long s = secs > 359999 ? 359999 : (long)(secs + 0.5);
    if (s >= 3600)
        snprintf(out, cap, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, cap, "%ld:%02ld", s / 60, s % 60);
}

void bt_progress_update(bt_progress *p, int64_t done)
{
    if (p->start < 0)
        return;
    double t = now();
    if (t - p->start < p->after || t - p->last < 0.25)
        return;
    p->last = t;
    p->active = 1;
    double rate = t > p->start ? (double)done / (t - p->start) : 0;
    char d[32], r[32], all[32], left[32];
    human(d, sizeof d, (double)done);
    human(r, sizeof r, rate);
    if (p->total > 0 && done <= p->total) {
        human(all, sizeof all, (double)p->total);
        if (rate > 0)
            clock_text(left, sizeof left, (double)(p->total - done) / rate);
        else
            snprintf(left, sizeof left, "?");
        fprintf(stderr, "\rb2frame %s: %3d%%  %s of %s  %s/s  %s left\033[K", p->what,
                (int)(100.0 * (double)done / (double)p->total), d, all, r, left);
    } else {
        fprintf(stderr, "\rb2frame %s: %s  %s/s\033[K", p->what, d, r);
    }
    fflush(stderr);
}

void bt_progress_end(bt_progress *p)
{
    if (p->active)
        fputs("\r\033[K", stderr);
    p->active = 0;
}
