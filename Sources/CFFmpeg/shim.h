#ifndef LIVEMUX_CFFMPEG_SHIM_H
#define LIVEMUX_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavdevice/version_major.h>
#include <libavutil/avutil.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libavutil/time.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
#include <errno.h>
#include <dlfcn.h>

/* Swift cannot import function-like macros or compound-literal constants: these wrap them. */

static inline int lm_averror(int e) { return AVERROR(e); }
static inline int lm_averror_eof(void) { return AVERROR_EOF; }
static inline int lm_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int lm_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int64_t lm_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline AVRational lm_time_base_q(void) { return AV_TIME_BASE_Q; }
static inline unsigned int lm_mktag(char a, char b, char c, char d) { return MKTAG(a, b, c, d); }
static inline void lm_default_channel_layout(AVChannelLayout *layout, int channels) {
    av_channel_layout_default(layout, channels);
}

/* av_log is variadic; Swift calls av_vlog through withVaList instead. */
static inline void lm_log_message(void *avcl, int level, const char *message) {
    av_log(avcl, level, "%s", message);
}

/* A log callback receives a va_list, which Swift cannot take in a @convention(c) closure: this C
 * callback formats the line and hands it to a Swift function (LogRedaction.swift). Only the FFmpeg
 * module includes this header, so there is one copy of these statics. */
typedef void (*lm_log_line_sink)(int level, const char *line);
/* Function-local statics: Swift's importer emits these with the function, not file-scope statics. */
static inline lm_log_line_sink *lm_log_sink_slot(void) { static lm_log_line_sink slot; return &slot; }
static inline void lm_log_redirect_callback(void *avcl, int level, const char *fmt, va_list vl) {
    static int print_prefix = 1;
    lm_log_line_sink sink = *lm_log_sink_slot();
    if (level > av_log_get_level() || !sink) return;
    char line[2048];
    av_log_format_line2(avcl, level, fmt, vl, line, sizeof line, &print_prefix);
    sink(level, line);
}
static inline void lm_log_redirect(lm_log_line_sink sink) {
    *lm_log_sink_slot() = sink;
    av_log_set_callback(lm_log_redirect_callback);
}

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

#endif
