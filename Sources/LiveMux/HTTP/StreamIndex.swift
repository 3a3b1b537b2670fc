import Foundation

/// What `GET /` answers: the streams with their codecs and viewer counts, as plain text lines or
/// (`?format=json`, `Accept: application/json`) one JSON object.
struct StreamIndex: Encodable {
    struct Entry: Encodable {
        let path: String
        let contentType: String
        let codecs: [StreamCodec]
        let viewers: Int

        enum CodingKeys: String, CodingKey {
            case path, codecs, viewers
            case contentType = "content_type"
        }
    }

    let streams: [Entry]
    let viewers: Int
    let maxViewers: Int

    enum CodingKeys: String, CodingKey {
        case streams, viewers
        case maxViewers = "max_viewers"
    }

    /// `/live.flv video/x-flv h264 640x360, aac 48000 Hz 2 ch, 3 viewers`, a line a stream, then the total.
    var text: String {
        var lines = streams.map { s in
            let codecs = s.codecs.isEmpty ? "" : " " + s.codecs.map(\.summary).joined(separator: ", ") + ","
            return "\(s.path) \(s.contentType)\(codecs) \(s.viewers) viewer\(s.viewers == 1 ? "" : "s")"
        }
        lines.append("\(viewers) of at most \(maxViewers) viewers")
        return lines.joined(separator: "\n") + "\n"
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
