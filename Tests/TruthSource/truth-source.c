/* The device rig's truth source (Tests/IntegrationTests/DeviceRig.swift): a microphone and a
 * screen whose every event is known on the monotonic clock.
 *
 *   truth-source FIFO DISPLAY SECONDS RATE [FIFO2]
 *
 * Writes signed 32-bit mono samples into FIFO (a module-pipe-source's pipe) at RATE samples per
 * second of the monotonic clock, in 5 ms chunks without ever blocking, each written once its last sample is "captured":
 * sample n belongs to t0 + n / RATE. Every period P (t0 + k P, k >= 1; P = 1.0206 s) a 100 ms 1 kHz beep starts
 * and the whole X screen turns white for 100 ms, so a recording that keeps sync has every beep
 * onset at its flash. RATE other than the source's labelled rate models a crystal that is off.
 * The samples are written by a thread of their own, so no draw (which waits for Xvfb) delays them.
 * Prints "start T0 WALL" (µs on the monotonic and the wall clock), "flash K LATE D0 … D8" for
 * every flash (k >= 1; how late in µs the write holding its beep onset was, and when each of the
 * flash's 9 draws was done, µs after the flash instant: the test reads a frame's grab time from
 * them, and leaves out a flash whose beep was written late) and, at the end, "late MAX" (the worst lateness of any write or draw) and "dropped N" (samples nobody read).
 * With FIFO2 (a second microphone) it writes there, in the same chunks, a second beep train: 2500 Hz at
 * half the amplitude, each beep BEEP2_OFFSET_NS (250 ms) after its flash, so a mix of the two
 * keeps them apart in time and in pitch; and prints "beep2 K LATE" per flash (how late the write
 * holding that beep's onset was, µs) and "dropped2 N". */
#include <X11/Xlib.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define CHUNK_NS 5000000LL
#define BEEP_NS 100000000LL
/* A beep and flash every 1 s + 0.618 frame at 30 fps: each flash falls a golden-ratio step further
 * into a frame than the one before, so any run of flashes spreads evenly over the phases of the
 * screen grab (which shows a flash up to a frame late). */
#define PERIOD_NS 1020601133LL
/* A flash starts white and steps down by RAMP_LEVEL every 1/RAMP_STEPS of a 30 fps frame, then
 * stays at the last level: the first frame that shows it tells, by its brightness, how long after
 * the flash instant it was grabbed (to 1/8 of a frame), so the test measures beep - flash instant
 * and not the phase of the screen grab. */
#define FRAME_NS 33333333LL
#define RAMP_STEPS 8
#define RAMP_LEVEL 16
#define BEEP_HZ 1000.0
/* The second microphone's train: another pitch, half the amplitude (-12 dBFS against -6), a
 * quarter period after each flash (never overlapping the first train's 100 ms beeps). */
#define BEEP2_HZ 2500.0
#define BEEP2_OFFSET_NS 250000000LL
/* 32-bit samples: module-pipe-source reads its pipe 4096 bytes at a time, 43 ms of 16-bit mono
 * (no microphone delivers such blocks) but 21 ms of 32-bit mono, a microphone's period. */
#define AMPLITUDE 16000.0
#define AMPLITUDE2 8000.0
/* More than this many bytes (0.5 s) waiting in the pipe means nobody is reading it: the chunk is
 * dropped, as a microphone's samples are when nobody records, so the pipe never fills and a write
 * never blocks. A daemon that is merely slow (a loaded machine) catches up from its backlog. */
#define BACKLOG_BYTES 96000

static volatile sig_atomic_t stopping;
static void on_signal(int sig) { (void)sig; stopping = 1; }

/* The pipe, opened without blocking; -1 while no reader has it open (the daemon is away). A new
 * daemon makes a new pipe at the same path, so it is opened again by name. */
static int open_pipe(const char *path) { return open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC); }

/* Writes one chunk, or drops it when nobody reads the pipe; returns the fd to use next. */
static int write_chunk(int fd, const char *path, const int32_t *samples, int count, long *dropped) {
    if (fd < 0 && (fd = open_pipe(path)) < 0) { *dropped += count; return -1; }
    int queued = 0;
    if (ioctl(fd, FIONREAD, &queued) == 0 && queued > BACKLOG_BYTES) { *dropped += count; return fd; }
    ssize_t w = write(fd, samples, (size_t)count * 4);
    if (w < 0 && (errno == EPIPE || errno == EBADF)) { close(fd); *dropped += count; return -1; }
    if (w < (ssize_t)count * 4) *dropped += count - (w > 0 ? (int)(w / 4) : 0);
    return fd;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(int64_t t) {
    struct timespec ts = { (time_t)(t / 1000000000LL), (long)(t % 1000000000LL) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stopping) {}
}

static unsigned long gray(int level) { return (unsigned long)level << 16 | (unsigned long)level << 8 | (unsigned long)level; }

static void fill(Display *d, unsigned long pixel) {
    int s = DefaultScreen(d);
    GC gc = DefaultGC(d, s);
    XSetForeground(d, gc, pixel);
    XFillRectangle(d, RootWindow(d, s), gc, 0, 0, DisplayWidth(d, s), DisplayHeight(d, s));
    XSync(d, False);
}

#define MAX_FLASHES 4096
/* Per flash, when each step's draw was done (ns after the flash instant): Xvfb draws in request
 * order and answers XSync right after, so this is when the screen changed, however late. */
static int64_t drawn[MAX_FLASHES][RAMP_STEPS + 1];

/* The microphone, on a thread of its own so that no draw (which waits for Xvfb) delays a write. */
/* One microphone's beep train: where it goes, its pitch, level and delay after each flash. */
struct train {
    const char *path;
    double hz, amplitude, offset;  /* offset: seconds after the flash instant */
    int fd;
    long dropped;
    /* Per flash, how late the write of the chunk holding its beep's onset was (ns). */
    int64_t beep_late[MAX_FLASHES];
};

struct audio {
    double rate;
    int64_t t0, end, late;
    struct train trains[2];
    int train_count;
};

/* Fills `count` samples from sample `first` on with train t's beeps; notes the lateness `late`
 * of the chunk that holds a beep's onset. */
static void beep(struct train *t, double rate, int64_t first, int count, int64_t late, int32_t *buffer) {
    double period = PERIOD_NS / 1e9;
    for (int i = 0; i < count; i++) {
        double at = (double)(first + i) / rate - t->offset;   /* seconds since t0, less the offset */
        double into = at - period * floor(at / period);      /* seconds into this period */
        int beeping = at >= period && into < BEEP_NS / 1e9;
        if (beeping && into * rate < 1) {
            int k = (int)floor(at / period) - 1;
            if (k >= 0 && k < MAX_FLASHES) t->beep_late[k] = late;
        }
        buffer[i] = beeping ? (int32_t)(t->amplitude * 65536 * sin(2 * M_PI * t->hz * into)) : 0;
    }
}

static void *write_audio(void *context) {
    struct audio *a = context;
    int64_t written = 0, next_chunk = a->t0 + CHUNK_NS;
    int32_t buffer[4096];
    while (!stopping && next_chunk <= a->end) {
        sleep_until(next_chunk);
        int64_t l = now_ns() - next_chunk;
        if (l > a->late) a->late = l;
        /* Every sample up to this chunk's end: floor(rate * elapsed), so no rate drifts. */
        int64_t total = (int64_t)floor((double)(next_chunk - a->t0) * a->rate / 1e9);
        int count = (int)(total - written);
        if (count > 4096) count = 4096;
        for (int t = 0; t < a->train_count; t++) {
            struct train *train = &a->trains[t];
            beep(train, a->rate, written, count, l, buffer);
            train->fd = write_chunk(train->fd, train->path, buffer, count, &train->dropped);
        }
        written += count;
        next_chunk += CHUNK_NS;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: truth-source FIFO DISPLAY SECONDS RATE [FIFO2]\n");
        return 64;
    }
    double seconds = atof(argv[3]), rate = atof(argv[4]);
    struct sigaction action = { .sa_handler = on_signal };  /* no SA_RESTART: a signal ends a sleep */
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Real-time priority where allowed (root): the truth must keep its times on a loaded machine.
     * It wakes every 5 ms for microseconds, so it takes nothing from anyone. */
    struct sched_param priority = { .sched_priority = 10 };
    sched_setscheduler(0, SCHED_FIFO, &priority);
    Display *display = XOpenDisplay(argv[2]);
    if (!display) { fprintf(stderr, "truth-source: cannot open display %s\n", argv[2]); return 1; }
    int s = DefaultScreen(display);
    fill(display, BlackPixel(display, s));
    struct audio a = { .rate = rate, .train_count = argc - 4 };
    a.trains[0] = (struct train){ .path = argv[1], .hz = BEEP_HZ, .amplitude = AMPLITUDE };
    if (argc == 6) a.trains[1] = (struct train){ .path = argv[5], .hz = BEEP2_HZ, .amplitude = AMPLITUDE2, .offset = BEEP2_OFFSET_NS / 1e9 };
    for (int t = 0; t < a.train_count; t++) {
        a.trains[t].fd = open_pipe(a.trains[t].path);
        if (a.trains[t].fd < 0) { fprintf(stderr, "truth-source: open %s: %s\n", a.trains[t].path, strerror(errno)); return 1; }
    }

    int64_t t0 = now_ns();
    a.t0 = t0;
    a.end = t0 + (int64_t)(seconds * 1e9);
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    int64_t wall = (int64_t)real.tv_sec * 1000000LL + real.tv_nsec / 1000 - (now_ns() - t0) / 1000;
    printf("start %lld %lld\n", (long long)(t0 / 1000), (long long)wall);
    fflush(stdout);
    pthread_t writer;
    pthread_create(&writer, NULL, write_audio, &a);

    int64_t flash_on = t0 + PERIOD_NS, late = 0;
    int flash_index = 0;
    while (!stopping && flash_on + BEEP_NS <= a.end && flash_index < MAX_FLASHES) {
        for (int step = 0; step <= RAMP_STEPS && !stopping; step++) {
            int64_t due = flash_on + FRAME_NS * step / RAMP_STEPS;
            sleep_until(due);
            fill(display, gray(255 - RAMP_LEVEL * step));
            drawn[flash_index][step] = now_ns() - flash_on;
            if (now_ns() - due > late) late = now_ns() - due;
        }
        sleep_until(flash_on + BEEP_NS);
        fill(display, BlackPixel(display, s));
        flash_index++;
        flash_on += PERIOD_NS;
    }
    stopping = 1;
    pthread_join(writer, NULL);
    for (int k = 0; k < flash_index; k++) {
        printf("flash %d %lld", k + 1, (long long)(a.trains[0].beep_late[k] / 1000));
        for (int step = 0; step <= RAMP_STEPS; step++) printf(" %lld", (long long)(drawn[k][step] / 1000));
        printf("\n");
        if (a.train_count > 1) printf("beep2 %d %lld\n", k + 1, (long long)(a.trains[1].beep_late[k] / 1000));
    }
    if (a.late > late) late = a.late;
    printf("late %lld\ndropped %ld\n", (long long)(late / 1000), a.trains[0].dropped);
    if (a.train_count > 1) printf("dropped2 %ld\n", a.trains[1].dropped);
    for (int t = 0; t < a.train_count; t++) if (a.trains[t].fd >= 0) close(a.trains[t].fd);
    XCloseDisplay(display);
    return 0;
}
