#ifndef LIVEMUX_CFFMPEG_SHIM_H
#define LIVEMUX_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavdevice/version_major.h>
#include <libavdevice/avdevice.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavfilter/version_major.h>
#include <libavutil/avutil.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/hmac.h>
#include <libavutil/imgutils.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libavutil/time.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
#include <errno.h>
#include <dlfcn.h>
#include <string.h>

/* Swift cannot import function-like macros or compound-literal constants: these wrap them. */

static inline int lm_averror(int e) { return AVERROR(e); }
static inline int lm_averror_eof(void) { return AVERROR_EOF; }
static inline int lm_averror_exit(void) { return AVERROR_EXIT; }
static inline int lm_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int64_t lm_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline AVRational lm_time_base_q(void) { return AV_TIME_BASE_Q; }
static inline unsigned int lm_mktag(char a, char b, char c, char d) { return MKTAG(a, b, c, d); }
static inline void lm_default_channel_layout(AVChannelLayout *layout, int channels) {
    av_channel_layout_default(layout, channels);
}

/* A log callback receives a va_list, which Swift cannot take in a @convention(c) closure: this C
 * callback formats the line and hands it to a Swift function (FFmpegLog.swift). Only the FFmpeg
 * module includes this header, so there is one copy of these statics. */
typedef void (*lm_log_line_sink)(int level, const char *line);
/* Function-local statics: Swift's importer emits these with the function, not file-scope statics. */
static inline lm_log_line_sink *lm_log_sink_slot(void) { static lm_log_line_sink slot; return &slot; }
static inline void lm_log_redirect_callback(void *avcl, int level, const char *fmt, va_list vl) {
    /* Whether the next line starts with its "[name @ 0x…]" prefix: a line may be logged in pieces,
     * and every thread logs, so each thread keeps its own (thread-local, not a shared static). */
    static _Thread_local int print_prefix = 1;
    lm_log_line_sink sink = *lm_log_sink_slot();
    /* Error lines pass at every level: livemux reads them to tell why a protocol failed
     * (FFmpegLog.watchingErrors), and the sink drops what the level hides. */
    if (!sink || (level > av_log_get_level() && level > AV_LOG_ERROR)) return;
    char line[2048];
    av_log_format_line2(avcl, level, fmt, vl, line, sizeof line, &print_prefix);
    sink(level, line);
}
static inline void lm_log_redirect(lm_log_line_sink sink) {
    *lm_log_sink_slot() = sink;
    av_log_set_callback(lm_log_redirect_callback);
}

/* libsrt (under libavformat's srt://) logs to stderr by itself, and FFmpeg 5.1 reports a
 * listener's refusal of the passphrase as a bare EIO: libsrt's log is routed into av_log (so -v,
 * masking and the app's handler apply), and its rejections for the passphrase are counted.
 * libsrt's levels are syslog's (3 error, 4 warning, 5 notice, 7 debug). */
static inline _Atomic long *lm_srt_rejection_slot(void) { static _Atomic long count; return &count; }
static inline void lm_srt_log_line(void *opaque, int level, const char *file, int line, const char *area, const char *message) {
    (void)opaque; (void)file; (void)line; (void)area;
    if (!message) return;
    /* srt_rejectreason_str: SRT_REJ_BADSECRET "Incorrect passphrase", SRT_REJ_UNSECURE "Password required or unexpected". */
    if (strstr(message, "Incorrect passphrase") || strstr(message, "Password required or unexpected")) (*lm_srt_rejection_slot())++;
    av_log(NULL, level <= 3 ? AV_LOG_ERROR : level == 4 ? AV_LOG_WARNING : AV_LOG_VERBOSE, "libsrt: %s%s", message,
           message[0] && message[strlen(message) - 1] == '\n' ? "" : "\n");
}
/* Once: 0 when libsrt is not in the process (an FFmpeg built without it). */
static inline int lm_srt_route_log(void) {
    void (*set_handler)(void *, void (*)(void *, int, const char *, int, const char *, const char *)) =
        (void (*)(void *, void (*)(void *, int, const char *, int, const char *, const char *)))dlsym(dlopen(NULL, RTLD_LAZY), "srt_setloghandler");
    if (!set_handler) return 0;
    set_handler(NULL, lm_srt_log_line);
    return 1;
}
static inline long lm_srt_passphrase_rejections(void) { return *lm_srt_rejection_slot(); }

/* Rescale with rounding to nearest, halfway away from zero, passing min/max through. */
static inline int64_t lm_rescale_q(int64_t a, AVRational bq, AVRational cq) {
    return av_rescale_q_rnd(a, bq, cq, AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
}

/* libavdevice (with libavfilter and some 80 libraries behind it: X11, PulseAudio, ALSA, SDL…) is
 * loaded only when a capture device is wanted, so `livemux mux`, `report` and programs that only
 * embed the muxer start without it (about 60 ms less at start-up). Its one entry point we need
 * registers the devices inside libavformat. Bound lazily, like a program's own libraries.
 * Returns NULL, or dlerror()'s message. */
#define LM_STRINGIFY_(x) #x
#define LM_STRINGIFY(x) LM_STRINGIFY_(x)
static inline const char *lm_avdevice_soname(void) {
    return "libavdevice.so." LM_STRINGIFY(LIBAVDEVICE_VERSION_MAJOR);
}
static inline const char *lm_register_devices(void) {
    void *library = dlopen(lm_avdevice_soname(), RTLD_LAZY | RTLD_GLOBAL);
    if (!library) return dlerror();
    void (*register_all)(void) = (void (*)(void))dlsym(library, "avdevice_register_all");
    if (!register_all) return dlerror();
    register_all();
    return NULL;
}

/* avdevice_list_input_sources and avdevice_free_list_devices, through dlsym for the same reason:
 * the sources a backend can name (pulse, alsa, v4l2…). Call after lm_register_devices succeeded;
 * AVERROR(ENOSYS) when the backend cannot list. */
static inline int lm_list_input_sources(const AVInputFormat *format, AVDeviceInfoList **list) {
    void *library = dlopen(lm_avdevice_soname(), RTLD_LAZY | RTLD_GLOBAL | RTLD_NOLOAD);
    if (!library) return AVERROR(ENOSYS);
    int (*list_sources)(const AVInputFormat *, const char *, AVDictionary *, AVDeviceInfoList **) =
        (int (*)(const AVInputFormat *, const char *, AVDictionary *, AVDeviceInfoList **))dlsym(library, "avdevice_list_input_sources");
    if (!list_sources) return AVERROR(ENOSYS);
    return list_sources(format, NULL, NULL, list);
}
static inline void lm_free_device_list(AVDeviceInfoList **list) {
    void *library = dlopen(lm_avdevice_soname(), RTLD_LAZY | RTLD_GLOBAL | RTLD_NOLOAD);
    void (*free_list)(AVDeviceInfoList **) = library ? (void (*)(AVDeviceInfoList **))dlsym(library, "avdevice_free_list_devices") : NULL;
    if (free_list) free_list(list);
}

/* Whether ALSA opens a PCM for capture: FFmpeg's alsa device lists every hint not marked
 * output-only, among them plugins that only play (upmix, vdownmix) or whose card or server is
 * missing (lavrate, jack…). The PCM is opened non-blocking and closed at once. libasound came with
 * libavdevice (call after lm_register_devices); its errors, and those of libjack, which the jack
 * plugin loads, would each print a line on stderr, so both are quiet while checking (libjack stays
 * so: it has no default to restore). 0, or a negative errno (-EBUSY: there, but in use; -ENOSYS:
 * no libasound). SND_PCM_STREAM_CAPTURE and SND_PCM_NONBLOCK are 1 in alsa/pcm.h. */
static inline void lm_alsa_quiet(const char *file, int line, const char *function, int err, const char *format, ...) {}
static inline void lm_jack_quiet(const char *message) {}
static inline int lm_alsa_open_for_capture(const char *name) {
    void *asound = dlopen("libasound.so.2", RTLD_LAZY | RTLD_NOLOAD);
    if (!asound) return -ENOSYS;
    typedef void (*error_handler)(const char *, int, const char *, int, const char *, ...);
    int (*pcm_open)(void **, const char *, int, int) = (int (*)(void **, const char *, int, int))dlsym(asound, "snd_pcm_open");
    int (*pcm_close)(void *) = (int (*)(void *))dlsym(asound, "snd_pcm_close");
    int (*set_handler)(error_handler) = (int (*)(error_handler))dlsym(asound, "snd_lib_error_set_handler");
    if (!pcm_open || !pcm_close || !set_handler) return -ENOSYS;
    void *jack = dlopen("libjack.so.0", RTLD_LAZY);
    void (*jack_error)(void (*)(const char *)) = jack ? (void (*)(void (*)(const char *)))dlsym(jack, "jack_set_error_function") : NULL;
    void (*jack_info)(void (*)(const char *)) = jack ? (void (*)(void (*)(const char *)))dlsym(jack, "jack_set_info_function") : NULL;
    if (jack_error) jack_error(lm_jack_quiet);
    if (jack_info) jack_info(lm_jack_quiet);
    set_handler(lm_alsa_quiet);
    void *pcm = NULL;
    int status = pcm_open(&pcm, name, 1, 1);
    if (status == 0) pcm_close(pcm);
    set_handler(NULL);  /* ALSA's own handler: errors on stderr again */
    return status;
}

/* libavfilter runs the lavfi sources (testsrc2, sine… — the default capture) directly: a frame
 * from its sink goes to the encoder as it is, where libavdevice's lavfi device copies every frame
 * into a packet and a rawvideo decoder turns it back into a frame. Loaded at run time for the
 * same reason as libavdevice, and without the ~50 libraries only libavdevice needs (X11, SDL,
 * PulseAudio…), which is about 6 MiB less resident memory. The package does not link it: Swift
 * calls it only through this table, filled once by lm_load_filters (its pointers are never NULL
 * once that succeeded). */
typedef struct lm_filter_api {
    AVFilterGraph *(* _Nonnull graph_alloc)(void);
    void (* _Nonnull graph_free)(AVFilterGraph **graph);
    int (* _Nonnull graph_parse_ptr)(AVFilterGraph *graph, const char *filters, AVFilterInOut **inputs,
                           AVFilterInOut **outputs, void *log_ctx);
    int (* _Nonnull graph_create_filter)(AVFilterContext **filt_ctx, const AVFilter *filt, const char *name,
                               const char *args, void *opaque, AVFilterGraph *graph_ctx);
    int (* _Nonnull graph_config)(AVFilterGraph *graph, void *log_ctx);
    int (* _Nonnull link)(AVFilterContext *src, unsigned srcpad, AVFilterContext *dst, unsigned dstpad);
    const AVFilter *(* _Nonnull get_by_name)(const char *name);
    enum AVMediaType (* _Nonnull pad_get_type)(const AVFilterPad *pads, int pad_idx);
    void (* _Nonnull inout_free)(AVFilterInOut **inout);
    int (* _Nonnull buffersink_get_frame)(AVFilterContext *ctx, AVFrame *frame);
    AVRational (* _Nonnull buffersink_get_time_base)(const AVFilterContext *ctx);
    /* What an output makes, known once the graph is configured. */
    AVRational (* _Nonnull buffersink_get_frame_rate)(const AVFilterContext *ctx);
    int (* _Nonnull buffersink_get_w)(const AVFilterContext *ctx);
    int (* _Nonnull buffersink_get_h)(const AVFilterContext *ctx);
    int (* _Nonnull buffersink_get_sample_rate)(const AVFilterContext *ctx);
    int (* _Nonnull buffersink_get_channels)(const AVFilterContext *ctx);
    /* Frames into a graph that processes them (mixing, composing, --vf/--af). */
    int (* _Nonnull buffersrc_add_frame_flags)(AVFilterContext *ctx, AVFrame *frame, int flags);
} lm_filter_api;

static inline const char *lm_avfilter_soname(void) {
    return "libavfilter.so." LM_STRINGIFY(LIBAVFILTER_VERSION_MAJOR);
}
static inline lm_filter_api *lm_filter_api_slot(void) { static lm_filter_api api; return &api; }
/* Fills the table; NULL, or dlerror()'s message. Call once (FilterGraph does, through a Swift
 * static let, which runs it exactly once). */
static inline const char *lm_load_filters(void) {
    void *library = dlopen(lm_avfilter_soname(), RTLD_LAZY | RTLD_GLOBAL);
    if (!library) return dlerror();
    lm_filter_api *api = lm_filter_api_slot();
#define LM_BIND(field, symbol) if (!(*(void **)&api->field = dlsym(library, #symbol))) return dlerror();
    LM_BIND(graph_alloc, avfilter_graph_alloc)
    LM_BIND(graph_free, avfilter_graph_free)
    LM_BIND(graph_parse_ptr, avfilter_graph_parse_ptr)
    LM_BIND(graph_create_filter, avfilter_graph_create_filter)
    LM_BIND(graph_config, avfilter_graph_config)
    LM_BIND(link, avfilter_link)
    LM_BIND(get_by_name, avfilter_get_by_name)
    LM_BIND(pad_get_type, avfilter_pad_get_type)
    LM_BIND(inout_free, avfilter_inout_free)
    LM_BIND(buffersink_get_frame, av_buffersink_get_frame)
    LM_BIND(buffersink_get_time_base, av_buffersink_get_time_base)
    LM_BIND(buffersink_get_frame_rate, av_buffersink_get_frame_rate)
    LM_BIND(buffersink_get_w, av_buffersink_get_w)
    LM_BIND(buffersink_get_h, av_buffersink_get_h)
    LM_BIND(buffersink_get_sample_rate, av_buffersink_get_sample_rate)
    LM_BIND(buffersink_get_channels, av_buffersink_get_channels)
    LM_BIND(buffersrc_add_frame_flags, av_buffersrc_add_frame_flags)
#undef LM_BIND
    return NULL;
}

/* The run-time version of a library loaded only on demand (for livemux --version): its
 * `<prefix>_version()`, or 0 when it cannot be loaded. */
static inline unsigned lm_loaded_library_version(const char *soname, const char *symbol) {
    void *library = dlopen(soname, RTLD_LAZY | RTLD_GLOBAL);
    if (!library) return 0;
    unsigned (*version)(void) = (unsigned (*)(void))dlsym(library, symbol);
    return version ? version() : 0;
}

#endif
