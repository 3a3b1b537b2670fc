/* HTTP viewers by the thousand from one process (epoll): each opens URL, reads the stream and
 * counts the body bytes it receives over a common window. Built and run by scripts/bench (serve).
 *
 *   gcc -O2 -o loadgen scripts/loadgen.c
 *   loadgen [-n VIEWERS] [-w WINDOW_S] [-W WARMUP_S] [-c PENDING] [-b RCVBUF] [-0] [-i] [-o SAVE] URL
 *
 * URL is http://IPV4:PORT/PATH (localhost means 127.0.0.1). -n viewers (1), -w the measuring window
 * in seconds (10), -W seconds between the last viewer answered and the window (2), -c connections
 * at most in connect/request at once (64: a burst longer than the listen backlog only measures the
 * SYN retry timer), -b SO_RCVBUF bytes (the kernel's autotuning unless given), -0 HTTP/1.0 requests
 * (no chunked framing), -i idle connections that send no request (then "served" counts those
 * connected and "cut" those the server closed before the window ended), -o saves the first served viewer's body, de-chunked, for a decode check.
 * stdout: "window-start" and "window-end" as they happen (for sampling the server at the same
 * moments), then one JSON line; stderr: the same summary for people.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { HEAD_MAX = 8192, READ_SIZE = 65536, MAX_EVENTS = 256 };
enum state { IDLE, CONNECTING, REQUESTED, STREAMING, DONE };
enum outcome { NONE, SERVED, REFUSED, OTHER_STATUS, FAILED };
enum chunk_state { CHUNK_SIZE, CHUNK_EXT, CHUNK_DATA, CHUNK_CRLF, CHUNK_END };

struct viewer {
    int fd;
    enum state state;
    enum outcome outcome;
    int chunked, cut;            /* cut: the server closed it before the window ended */
    enum chunk_state cs;
    uint64_t chunk_left;
    uint64_t window_bytes, total_bytes;
    char *head;
    int head_len;
};

static struct viewer *viewers;
static int count = 1, pending_max = 64, rcvbuf = 0, http10 = 0, idle = 0;
static double window_s = 10, warmup_s = 2;
static struct sockaddr_in target;
static char host[256], path[1024];
static FILE *save;
static int saved = -1;
static int epfd;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(void) {
    fprintf(stderr, "usage: loadgen [-n VIEWERS] [-w WINDOW_S] [-W WARMUP_S] [-c PENDING] [-b RCVBUF] [-0] [-i] [-o SAVE] http://IPV4:PORT/PATH\n");
    exit(64);
}

static void parse_url(const char *url) {
    int port = 80;
    if (strncmp(url, "http://", 7) != 0) usage();
    const char *h = url + 7, *slash = strchr(h, '/'), *colon = strchr(h, ':');
    if (!slash) slash = h + strlen(h);
    size_t hlen = (colon && colon < slash ? colon : slash) - h;
    if (hlen == 0 || hlen >= sizeof host) usage();
    memcpy(host, h, hlen);
    host[hlen] = 0;
    if (colon && colon < slash) port = atoi(colon + 1);
    snprintf(path, sizeof path, "%s", *slash ? slash : "/");
    target.sin_family = AF_INET;
    target.sin_port = htons(port);
    if (inet_pton(AF_INET, strcmp(host, "localhost") == 0 ? "127.0.0.1" : host, &target.sin_addr) != 1) {
        fprintf(stderr, "error: %s is not an IPv4 address (give one, such as 127.0.0.1)\n", host);
        exit(64);
    }
}

static int pending, done;  /* viewers in connect or request; viewers finished */

static void finish(struct viewer *v, enum outcome o, int cut) {
    if (v->state == DONE) return;
    if (v->state == CONNECTING || v->state == REQUESTED) pending--;
    done++;
    v->outcome = o;
    v->cut = cut;
    v->state = DONE;
    close(v->fd);
    free(v->head);
    v->head = NULL;
}

static void start(struct viewer *v) {
    v->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (v->fd < 0) { v->state = DONE; v->outcome = FAILED; done++; return; }
    pending++;
    if (rcvbuf > 0) setsockopt(v->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    v->state = CONNECTING;
    int r = connect(v->fd, (struct sockaddr *)&target, sizeof target);
    if (r < 0 && errno != EINPROGRESS) { finish(v, FAILED, 0); return; }
    struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = v };
    epoll_ctl(epfd, EPOLL_CTL_ADD, v->fd, &ev);
}

static void send_request(struct viewer *v) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(v->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) { finish(v, FAILED, 0); return; }
    if (idle) {
        // Held open without a word, until the server gives up on it or the window ends.
        v->outcome = SERVED;
        v->state = STREAMING;
        pending--;
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = v };
        epoll_ctl(epfd, EPOLL_CTL_MOD, v->fd, &ev);
        return;
    }
    char req[1536];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.%d\r\nHost: %s:%d\r\nUser-Agent: livemux-loadgen\r\n\r\n",
                     path, http10 ? 0 : 1, host, ntohs(target.sin_port));
    if (send(v->fd, req, n, MSG_NOSIGNAL) != n) { finish(v, FAILED, 0); return; }
    v->state = REQUESTED;
    v->head = malloc(HEAD_MAX);
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = v };
    epoll_ctl(epfd, EPOLL_CTL_MOD, v->fd, &ev);
}

/* Counts (and saves) payload bytes: the body itself, or what its chunks carry. */
static void body(struct viewer *v, const char *p, size_t n, int in_window) {
    size_t payload = 0;
    while (n > 0) {
        if (!v->chunked) {
            payload += n;
            if (save && saved == v - viewers) fwrite(p, 1, n, save);
            break;
        }
        switch (v->cs) {
        case CHUNK_SIZE: {
            int d = *p >= '0' && *p <= '9' ? *p - '0' : (*p | 32) >= 'a' && (*p | 32) <= 'f' ? (*p | 32) - 'a' + 10 : -1;
            if (d >= 0) v->chunk_left = v->chunk_left * 16 + d;
            else v->cs = *p == '\n' ? (v->chunk_left ? CHUNK_DATA : CHUNK_END) : CHUNK_EXT;
            p++, n--;
            break;
        }
        case CHUNK_EXT:
            if (*p == '\n') v->cs = v->chunk_left ? CHUNK_DATA : CHUNK_END;
            p++, n--;
            break;
        case CHUNK_DATA: {
            size_t take = n < v->chunk_left ? n : v->chunk_left;
            if (save && saved == v - viewers) fwrite(p, 1, take, save);
            payload += take;
            v->chunk_left -= take;
            p += take, n -= take;
            if (v->chunk_left == 0) v->cs = CHUNK_CRLF;
            break;
        }
        case CHUNK_CRLF:
            if (*p == '\n') v->cs = CHUNK_SIZE;
            p++, n--;
            break;
        case CHUNK_END:
            n = 0;
            break;
        }
    }
    v->total_bytes += payload;
    if (in_window) v->window_bytes += payload;
}

/* The status line and headers; what follows them is body. */
static void head(struct viewer *v, const char *p, size_t n, int in_window) {
    size_t room = HEAD_MAX - 1 - v->head_len, take = n < room ? n : room;
    memcpy(v->head + v->head_len, p, take);
    v->head_len += take;
    v->head[v->head_len] = 0;
    char *end = strstr(v->head, "\r\n\r\n");
    if (!end) {
        if (v->head_len >= HEAD_MAX - 1) finish(v, FAILED, 0);
        return;
    }
    size_t head_len = end + 4 - v->head;
    int status = 0;
    if (sscanf(v->head, "HTTP/1.%*d %d", &status) != 1) { finish(v, FAILED, 0); return; }
    if (status == 503) { finish(v, REFUSED, 0); return; }
    if (status != 200) { finish(v, OTHER_STATUS, 0); return; }
    v->outcome = SERVED;
    v->state = STREAMING;
    pending--;
    *end = 0;  // header lines end at the blank line
    for (char *line = strstr(v->head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
        char *eol = strstr(line + 2, "\r\n");
        if (eol) *eol = 0;
        if (strncasecmp(line + 2, "Transfer-Encoding:", 18) == 0 && strcasestr(line + 18, "chunked")) v->chunked = 1;
        if (!eol) break;
        *eol = '\r';
    }
    if (save && saved < 0) saved = v - viewers;
    size_t rest = v->head_len - head_len;
    // Bytes past the head that arrived in the same read: those not copied are still in p.
    if (rest) body(v, v->head + head_len, rest, in_window);
    if (take < n) body(v, p + take, n - take, in_window);
    free(v->head);
    v->head = NULL;
}

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int opt;
    const char *save_path = NULL;
    while ((opt = getopt(argc, argv, "n:w:W:c:b:0io:h")) != -1) {
        switch (opt) {
        case 'n': count = atoi(optarg); break;
        case 'w': window_s = atof(optarg); break;
        case 'W': warmup_s = atof(optarg); break;
        case 'c': pending_max = atoi(optarg); break;
        case 'b': rcvbuf = atoi(optarg); break;
        case '0': http10 = 1; break;
        case 'i': idle = 1; break;
        case 'o': save_path = optarg; break;
        default: usage();
        }
    }
    if (optind != argc - 1 || count < 1 || pending_max < 1 || window_s <= 0) usage();
    parse_url(argv[optind]);
    if (save_path && !(save = fopen(save_path, "wb"))) { perror(save_path); return 1; }
    // One descriptor per viewer: take the hard limit.
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if ((rlim_t)count + 16 > rl.rlim_cur) {
        fprintf(stderr, "error: %d viewers need %d descriptors, the limit is %ld (raise ulimit -Hn)\n", count, count + 16, (long)rl.rlim_cur);
        return 64;
    }
    viewers = calloc(count, sizeof *viewers);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    static char buf[READ_SIZE];
    struct epoll_event events[MAX_EVENTS];
    int next = 0, started = 0, announced = 0;
    double window_start = 0, window_end = 0, t0 = now();
    for (;;) {
        while (next < count && pending < pending_max) start(&viewers[next++]);
        double t = now();
        if (!started && next == count && pending == 0) {
            window_start = t + warmup_s;
            window_end = window_start + window_s;
            started = 1;
        }
        // The end of the window, or of every viewer once it has begun.
        if (started && (t >= window_end || (done == count && t >= window_start))) break;
        int in_window = started && t >= window_start;
        if (in_window && !announced) { printf("window-start\n"); fflush(stdout); announced = 1; }
        int timeout = started ? (int)((in_window ? window_end - t : window_start - t) * 1000) + 1 : 100;
        int n = epoll_wait(epfd, events, MAX_EVENTS, timeout);
        for (int e = 0; e < n; e++) {
            struct viewer *v = events[e].data.ptr;
            if (v->state == CONNECTING) { send_request(v); continue; }
            ssize_t r = recv(v->fd, buf, sizeof buf, 0);
            if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (r <= 0) {
                finish(v, v->state == STREAMING ? SERVED : FAILED, v->state == STREAMING);
                continue;
            }
            if (v->state == REQUESTED) head(v, buf, r, in_window);
            else body(v, buf, r, in_window);
        }
    }
    printf("window-end\n");
    fflush(stdout);

    int served = 0, refused = 0, other = 0, failed = 0, cut = 0;
    uint64_t *bytes = malloc(sizeof *bytes * count);
    for (int i = 0; i < count; i++) {
        struct viewer *v = &viewers[i];
        served += v->outcome == SERVED;
        refused += v->outcome == REFUSED;
        other += v->outcome == OTHER_STATUS;
        failed += v->outcome == FAILED || v->outcome == NONE;
        cut += v->outcome == SERVED && v->cut;
        if (v->outcome == SERVED) bytes[served - 1] = v->window_bytes;
    }
    qsort(bytes, served, sizeof *bytes, cmp);
    uint64_t median = served ? bytes[served / 2] : 0, min = served ? bytes[0] : 0, max = served ? bytes[served - 1] : 0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    printf("{\"viewers\": %d, \"served\": %d, \"refused_503\": %d, \"other_status\": %d, \"failed\": %d, \"cut\": %d, "
           "\"window_s\": %.3f, \"bytes_median\": %llu, \"bytes_min\": %llu, \"bytes_max\": %llu, \"slowest_to_median\": %.3f, "
           "\"setup_s\": %.3f, \"loadgen_cpu_s\": %.3f}\n",
           count, served, refused, other, failed, cut, window_s, (unsigned long long)median, (unsigned long long)min,
           (unsigned long long)max, median ? (double)min / median : 0, window_start - warmup_s - t0, cpu);
    fprintf(stderr, "loadgen: %d viewers: %d served, %d refused (503), %d other status, %d failed, %d cut; "
            "bytes in %.0f s: median %llu, min %llu (%.2f of the median), max %llu; loadgen CPU %.2f s\n",
            count, served, refused, other, failed, cut, window_s, (unsigned long long)median, (unsigned long long)min,
            median ? (double)min / median : 0, (unsigned long long)max, cpu);
    if (save) fclose(save);
    return 0;
}
