/* The request loop: one reading thread, more only while requests are slow (loop.h). */
#include "fs/loop.h"

#include <errno.h>
#include <linux/fuse.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* With no request taken for this long, the watcher sleeps until one is. */
#define WATCH_IDLE_NS 1000000000LL
/* and wakes this often anyway, to see a session a signal ended on another thread. */
#define WATCH_ASLEEP_NS 1000000000LL
#define MAX_LANES 4096
#define SLOW_NS ((int64_t)LOOP_SLOW_US * 1000)
#define SPIN_NS ((int64_t)LOOP_SPIN_US * 1000)
/* hits and writes are shares of HIT_ONE; each request moves them an eighth of the way to
 * 0 or HIT_ONE */
#define HIT_ONE 1024

static struct {
    struct fuse_session *se;
    pthread_mutex_t lock;
    pthread_cond_t more;     /* a waiting thread is wanted for reading, or stop */
    sem_t tick;              /* wakes the watcher: a request after a sleep, or the end */
    /* set before the first thread starts, then read only: */
    unsigned spread;         /* threads reading while no program writes */
    size_t request_max;      /* the largest request: a WRITE of max_write bytes */
    size_t page;
    /* under lock: */
    unsigned max, nthreads;  /* threads allowed, made (each in lanes[]) */
    pthread_t *lanes;
    unsigned reading;        /* threads reading the device */
    unsigned serving;        /* threads serving a request */
    unsigned waiting;        /* threads waiting on more */
    unsigned called;         /* of those, how many the watcher has sent to reading */
    int64_t last_take;       /* when a request was last taken (ns, CLOCK_MONOTONIC) */
    int hits;                /* how many of the last requests came within SPIN_NS of a
                              * thread ready to read them (moving share of HIT_ONE) */
    int writes;              /* how many of the last requests made or wrote a file
                              * (CREATE, WRITE; moving share of HIT_ONE) */
    int large;               /* how many were WRITEs of more than a page (moving share) */
    int64_t served_avg;      /* how long a request takes to serve (ns, moving average) */
    int asleep;              /* the watcher sleeps until a request is taken */
    int stop;
    int error;               /* a failed read of the device: -errno */
} L = {.lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER};

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* (L.lock held) */
static void end_locked(int error)
{
    if (error && !L.error)
        L.error = error;
    if (!L.stop) {
        L.stop = 1;
        pthread_cond_broadcast(&L.more);
        sem_post(&L.tick);
    }
}

/* A lane's two ways to take a request. libfuse's splices each into a pipe and reads it
 * back (two system calls), leaving a large WRITE's data in the pipe to be read once,
 * straight into the chunk; the lane's own read(2)s each into its buffer (one call). */
struct takers {
    struct fuse_buf spliced;   /* libfuse's: its mem made by libfuse */
    struct fuse_buf own;       /* mem of L.request_max bytes, or NULL: splice them all */
};

static void free_takers(void *arg)
{
    struct takers *t = arg;
    free(t->spliced.mem);
    free(t->own.mem);
}

/* Reads one request into b, as fuse_session_receive_buf without splicing: its size, 0
 * when the session has ended, or -errno. */
static int read_request(struct fuse_buf *b)
{
    for (;;) {
        ssize_t n = read(fuse_session_fd(L.se), b->mem, L.request_max);
        if (n >= (ssize_t)sizeof(struct fuse_in_header)) {
            b->size = (size_t)n;
            b->flags = 0;
            return (int)n;
        }
        if (n >= 0)
            return -EIO;
        if (errno == ENOENT)
            continue;   /* the request was interrupted before it was read */
        if (errno == ENODEV) {   /* unmounted */
            fuse_session_exit(L.se);
            return 0;
        }
        return -errno;
    }
}

/* The opcode of the request in buf: FUSE_WRITE for one in a pipe (libfuse leaves only a
 * large WRITE there), 0 for one too short to have a header. */
static uint32_t opcode_of(const struct fuse_buf *buf)
{
    if (buf->flags & FUSE_BUF_IS_FD)
        return FUSE_WRITE;
    if (buf->size < sizeof(struct fuse_in_header))
        return 0;
    return ((const struct fuse_in_header *)buf->mem)->opcode;
}

/* Whether the request in buf creates or writes a file. */
static int is_write(const struct fuse_buf *buf)
{
    uint32_t op = opcode_of(buf);
    return op == FUSE_CREATE || op == FUSE_WRITE;
}

/* Whether the request in buf is a WRITE that libfuse would leave in a pipe (more than a
 * page of data). */
static int is_large_write(const struct fuse_buf *buf)
{
    return opcode_of(buf) == FUSE_WRITE &&
           ((buf->flags & FUSE_BUF_IS_FD) ||
            buf->size >= sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in) + L.page);
}

/* Whether a program writes files: a CREATE or WRITE among the last few requests.
 * (L.lock held) */
static int writing_locked(void)
{
    return L.writes * 8 >= HIT_ONE;
}

/* How many threads should read the device now. (L.lock held) */
static unsigned readers_wanted_locked(void)
{
    return writing_locked() ? 1 : L.spread;
}

/* Polls the device until a request waits, for at most SPIN_NS, giving the processor to
 * any other thread that wants it between polls. */
static void spin(void)
{
    struct pollfd p = {.fd = fuse_session_fd(L.se), .events = POLLIN};
    int64_t until = now_ns() + SPIN_NS;
    while (poll(&p, 1, 0) == 0 && now_ns() < until)
        sched_yield();
}

static int add_lane_locked(void);

static void *lane(void *arg)
{
    (void)arg;
    /* a thread starts cancellable: one cancelled in pthread_cond_wait below would end
     * holding L.lock, and every other lane and loop_serve's join would wait for it */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_setname_np(pthread_self(), LOOP_THREAD_NAME);
    struct takers takers = {.own.mem = malloc(L.request_max)};
    pthread_cleanup_push(free_takers, &takers);
    pthread_mutex_lock(&L.lock);
    for (;;) {
        while (!L.stop && L.reading >= readers_wanted_locked() && L.called == 0) {
            L.waiting++;
            pthread_cond_wait(&L.more, &L.lock);
            L.waiting--;
        }
        if (L.called > 0)
            L.called--;
        if (L.stop)
            break;
        int spinning = L.reading == 0 && writing_locked() && L.hits * 2 >= HIT_ONE &&
                       L.served_avg < SPIN_NS;
        struct fuse_buf *buf = L.large * 8 >= HIT_ONE || !takers.own.mem ? &takers.spliced
                                                                          : &takers.own;
        L.reading++;
        pthread_mutex_unlock(&L.lock);
        int64_t ready = now_ns();
        if (spinning)
            spin();
        /* cancelled only here, blocked in the device's read, at the end (loop_serve) */
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
        int r = buf == &takers.own ? read_request(buf) : fuse_session_receive_buf(L.se, buf);
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
        pthread_mutex_lock(&L.lock);
        L.reading--;
        if (fuse_session_exited(L.se) || (r <= 0 && r != -EINTR)) {
            end_locked(r < 0 && r != -EINTR ? r : 0);
            break;
        }
        if (r == -EINTR)
            continue;
        int64_t took = L.last_take = now_ns();
        L.hits += ((took - ready <= SPIN_NS ? HIT_ONE : 0) - L.hits) / 8;
        L.writes += ((is_write(buf) ? HIT_ONE : 0) - L.writes) / 8;
        L.large += ((is_large_write(buf) ? HIT_ONE : 0) - L.large) / 8;
        L.serving++;
        /* the threads serving read again when done: one more only when too few are */
        if (L.reading + L.serving < readers_wanted_locked())
            (void)add_lane_locked();   /* (a thread not made: one reader fewer) */
        if (L.asleep) {
            L.asleep = 0;
            sem_post(&L.tick);
        }
        pthread_mutex_unlock(&L.lock);
        fuse_session_process_buf(L.se, buf);
        int64_t served = now_ns() - took;
        pthread_mutex_lock(&L.lock);
        L.served_avg += (served - L.served_avg) / 8;
        L.serving--;
    }
    pthread_mutex_unlock(&L.lock);
    pthread_cleanup_pop(1);
    return NULL;
}

/* One more thread to reading: a waiting one, else a new one. (L.lock held) 0 or -errno. */
static int add_lane_locked(void)
{
    if (L.waiting > L.called) {
        L.called++;
        pthread_cond_signal(&L.more);
        return 0;
    }
    if (L.nthreads >= L.max)
        return 0;
    /* lanes take no signals: they come to the watcher, whose sleep they end */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int r = pthread_create(&L.lanes[L.nthreads], NULL, lane, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r)
        return -r;
    L.nthreads++;
    return 0;
}

static struct timespec deadline(int64_t ns)
{
    int64_t t = now_ns() + ns;
    struct timespec d;
    d.tv_sec = (time_t)(t / 1000000000LL);
    d.tv_nsec = (long)(t % 1000000000LL);
    return d;
}

int loop_serve(struct fuse_session *se, unsigned max_threads, size_t max_write)
{
    L.se = se;
    L.page = (size_t)sysconf(_SC_PAGESIZE);
    L.request_max = max_write + L.page < FUSE_MIN_READ_BUFFER ? FUSE_MIN_READ_BUFFER
                                                               : max_write + L.page;
    L.max = max_threads < 1 ? 1 : max_threads > MAX_LANES ? MAX_LANES : max_threads;
    cpu_set_t cpus;
    unsigned ncpu = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? (unsigned)CPU_COUNT(&cpus) : 1;
    L.spread = ncpu * LOOP_READERS_PER_CPU < L.max ? ncpu * LOOP_READERS_PER_CPU : L.max;
    L.lanes = calloc(L.max, sizeof *L.lanes);
    if (!L.lanes || sem_init(&L.tick, 0, 0) != 0) {
        free(L.lanes);
        return -ENOMEM;
    }
    pthread_mutex_lock(&L.lock);
    L.last_take = now_ns();
    int r = add_lane_locked();
    while (r == 0 && !L.stop && !fuse_session_exited(se)) {
        int64_t t = now_ns();
        L.asleep = L.serving == 0 && t - L.last_take > WATCH_IDLE_NS;
        int64_t wait = L.asleep ? WATCH_ASLEEP_NS : SLOW_NS;
        pthread_mutex_unlock(&L.lock);
        struct timespec until = deadline(wait);
        sem_clockwait(&L.tick, CLOCK_MONOTONIC, &until);   /* a post, a signal or the time */
        pthread_mutex_lock(&L.lock);
        if (!L.stop && L.reading == 0 && L.serving > 0 && now_ns() - L.last_take >= SLOW_NS)
            r = add_lane_locked();
    }
    end_locked(0);
    for (unsigned i = 0; i < L.nthreads; i++)
        pthread_cancel(L.lanes[i]);   /* takes effect only in a read of the device */
    unsigned n = L.nthreads;
    pthread_mutex_unlock(&L.lock);
    for (unsigned i = 0; i < n; i++)
        pthread_join(L.lanes[i], NULL);
    free(L.lanes);
    sem_destroy(&L.tick);
    fuse_session_reset(se);
    return r < 0 ? r : L.error;
}
