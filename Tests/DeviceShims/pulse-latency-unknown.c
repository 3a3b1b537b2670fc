/* Preloaded into livemux by the device tests: pulse's first latency query fails, as it does when
 * a record stream's first packet is read before the daemon's first timing update came back
 * (PA_ERR_NODATA). libavdevice's pulse input then skips its stamp for that packet, whose time
 * comes out at about when it was read, not when it was captured: the burst of packets waiting
 * since the stream started is read tens of ms late, and the time filter, started on the next
 * packet, takes a dozen packets to settle.
 *
 *   gcc -shared -fPIC -o pulse-latency-unknown.so pulse-latency-unknown.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

typedef struct pa_stream pa_stream;
typedef uint64_t pa_usec_t;

/* enum pa_error_code's PA_ERR_NODATA (pulse/def.h). */
#define NO_DATA 16

int pa_stream_get_latency(pa_stream *s, pa_usec_t *latency, int *negative) {
    static int calls;
    static int (*real)(pa_stream *, pa_usec_t *, int *);
    if (!real) real = (int (*)(pa_stream *, pa_usec_t *, int *))dlsym(RTLD_NEXT, "pa_stream_get_latency");
    if (__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED) == 0) {
        fputs("pulse-latency-unknown: the first latency query failed\n", stderr);
        return -NO_DATA;
    }
    return real(s, latency, negative);
}
