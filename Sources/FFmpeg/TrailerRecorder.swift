import CFFmpeg

/// Receives the trailer's writes with their true file offsets.
final class TrailerRecorder {
    let startOffset: Int64
    var position: Int64
    var appended: [UInt8] = []
    var updates: [(offset: Int64, bytes: [UInt8])] = []

    init(startOffset: Int64) {
        self.startOffset = startOffset
        position = startOffset
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        var chunk = bytes[...]
        // The part before the trailer's start rewrites earlier bytes.
        if position < startOffset {
            let n = min(Int(startOffset - position), chunk.count)
            updates.append((position, Array(chunk.prefix(n))))
            position += Int64(n)
            chunk = chunk.dropFirst(n)
        }
        guard !chunk.isEmpty else { return }
        let at = Int(position - startOffset)
        if at > appended.count { appended.append(contentsOf: repeatElement(0, count: at - appended.count)) }
        let overlap = min(appended.count - at, chunk.count)
        appended.replaceSubrange(at..<(at + overlap), with: chunk.prefix(overlap))
        appended.append(contentsOf: chunk.dropFirst(overlap))
        position += Int64(chunk.count)
    }

    func seek(_ offset: Int64, whence: Int32) -> Int64 {
        let end = startOffset + Int64(appended.count)
        switch whence {
        case AVSEEK_SIZE: return end
        case SEEK_SET: position = offset
        case SEEK_CUR: position += offset
        case SEEK_END: position = end + offset
        default: return Int64(FFmpegError.posix(EINVAL))
        }
        return position
    }
}
