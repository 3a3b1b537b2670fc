import CFFmpeg

/// Options for a libav* call that takes an `AVDictionary` (`avcodec_open2`, `avformat_open_input`,
/// `avformat_write_header`, `avio_open2`): every `av_dict_set` checked, and after the call what it
/// left unused, which names an option the component does not have.
struct OptionDictionary: ~Copyable {
    var raw: OpaquePointer?

    init(_ options: [(String, String)]) throws {
        for (key, value) in options { try check(av_dict_set(&raw, key, value, 0), "av_dict_set(\(key))") }
    }

    deinit {
        var owned = raw
        av_dict_free(&owned)
    }

    /// The first option the call did not take, if any.
    var leftover: String? {
        av_dict_get(raw, "", nil, AV_DICT_IGNORE_SUFFIX).map { String(cString: $0.pointee.key) }
    }
}
