/* b2frame: private declarations shared by the command files. */
#ifndef B2FS_B2FRAME_H
#define B2FS_B2FRAME_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "codec/chunk.h"
#include "frame/frame.h"

/* Exit statuses: 0 ok, 1 the file is bad or an operation failed, 2 usage error. */
enum { BT_OK = 0, BT_FAIL = 1, BT_USAGE = 2 };

/* "b2frame: FILE: reason" on stderr (file may be NULL). */
void bt_error(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* With on, bt_error prints nothing until called again with 0 (b2frame is one thread). */
void bt_errors_muted(int on);
/* Takes an OFD lock of type (F_RDLCK, F_WRLCK) on the whole file fd, as b2fs takes its
 * commit lock: with wait, after the holder lets go (retried on EINTR). 0 or -errno. */
int bt_lock_frame(int fd, short type, int wait);
/* The reason for a library error: the specific text in err if any, else the code's. */
const char *bt_reason(int code, const char *err);

/* A size with an optional K, M or G suffix (powers of 1024) into *out, at most max. */
int bt_parse_size(const char *text, int64_t max, int64_t *out);
/* A decimal integer in [min, max]. */
int bt_parse_int(const char *text, long min, long max, long *out);

/* What an input file holds, told apart by content. */
typedef struct bt_input {
    const char *path;
    int fd;
    b2_frame *frame;        /* a frame or Bloscpack file, or NULL: */
    uint8_t *chunk;         /* a single Blosc1/Blosc2 chunk held in memory */
    b2_chunk_info info;     /* of the chunk */
} bt_input;

/* Opens path as a frame (mode enum b2f_mode), a Bloscpack file or (read only, if
 * allow_chunk) a single chunk. Prints the reason on failure. */
int bt_open_input(bt_input *in, const char *path, int mode, int allow_chunk);
void bt_close_input(bt_input *in);

/* write(2) until done; -errno on failure. */
int bt_write_all(int fd, const void *buf, size_t len);

/* A temporary file next to path (same directory, so rename is atomic), mode 0666 less
 * the umask. */
int bt_temp_next_to(const char *path, char *tmp, size_t tmplen);
/* fsync tmp's fd, rename tmp to path, fsync the directory. Prints the reason on failure
 * and removes tmp. */
int bt_commit_temp(int fd, const char *tmp, const char *path);
/* Closes and removes an unfinished temporary file. */
void bt_drop_temp(int fd, const char *tmp);

/* A progress line on stderr (done of total, rate, time left), redrawn at most four times a
 * second, when stderr is a terminal, -q was not given (bt_progress_quiet) and the work has
 * taken over a second (B2FRAME_PROGRESS_AFTER seconds). */
extern int bt_progress_quiet;
typedef struct bt_progress {
    const char *what;
    int64_t total;          /* 0: unknown (a pipe) */
    int active;
    double start, last, after;
} bt_progress;
void bt_progress_begin(bt_progress *p, const char *what, int64_t total);
void bt_progress_update(bt_progress *p, int64_t done);
void bt_progress_end(bt_progress *p);

/* The commands: argv[0] is the command name. Return an exit status. */
/* Arrays (b2frame_npy.c): whether in is an array frame with a .npy form; its .npy file
 * written to out; a .npy file (in, a regular file) packed as an array frame into out
 * with p's codec, level and filters. BT_OK or BT_FAIL (the reason printed). */
int bt_is_array(const bt_input *in);
int bt_unpack_npy(const bt_input *in, int out, const char *outname);
int bt_pack_npy(const b2f_params *p, const char *inname, int in, int out, const char *outname);

int bt_cmd_info(int argc, char **argv);
int bt_cmd_cat(int argc, char **argv);
int bt_cmd_unpack(int argc, char **argv);
int bt_cmd_pack(int argc, char **argv);
int bt_cmd_verify(int argc, char **argv);
/* verify of one file: each problem on stderr, 'FILE: ok ...' on stdout unless quiet. A
 * check that fails is made again under a shared lock on the file, which waits for a b2fs
 * commit in progress, and only that one's problems are shown. */
int bt_verify_file(const char *path, int quiet);
int bt_cmd_seal(int argc, char **argv);
int bt_cmd_scrub(int argc, char **argv);
int bt_cmd_compact(int argc, char **argv);
int bt_cmd_meta(int argc, char **argv);

/* Prints a command's usage: to stdout for --help (status BT_OK), else to stderr after
 * the problem. Returns status. */
int bt_usage(const char *usage, int status);
/* For a command whose only option is --help and that takes min..max arguments (max < 0:
 * any number): returns -1 with *status set when it should stop (help shown, a bad
 * option or argument count), else 0 with optind at the first argument. */
int bt_no_options(int argc, char **argv, const char *usage, int min, int max, int *status);
/* The same, also taking -q/--quiet: no progress display (bt_progress_quiet). */
int bt_progress_options(int argc, char **argv, const char *usage, int min, int max, int *status);
/* The same for a command whose options are -q/--quiet and --help and that takes one or more
 * arguments (what: their name, for the message when there are none); -q also turns off the
 * progress display. */
int bt_quiet_option(int argc, char **argv, const char *usage, const char *what, int *quiet,
                    int *status);

/* Calls show(name, value, len, vl, index) for every metalayer (vl 0) or every
 * vlmetalayer (vl 1) of a frame; stops with the error (printed) if one cannot be read. */
typedef void bt_meta_fn(const char *name, const uint8_t *value, size_t len, int vl, int index);
int bt_each_meta(const bt_input *in, int vl, bt_meta_fn *show);
/* One line per metalayer and vlmetalayer: meta.NAME: N bytes, text ... / hex ... */
int bt_list_meta(const bt_input *in);

#endif
