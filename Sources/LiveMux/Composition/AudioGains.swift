import FFmpeg
import POSIX

/// Each audio source's volume and mute, which the control API changes while the mix reads them
/// (once a frame per source). Applied in the mix to the samples before the graph, so a change
/// takes effect at the next frame (~20 ms), and a muted source's level still shows.
final class AudioGains: Sendable {
    struct Gain: Equatable, Sendable {
        var volume: Double = 1
        var muted = false
        var linear: Float { muted ? 0 : Float(volume) }
    }
    private let gains: Locked<[Gain]>

    /// `initial`: `Composition.gains` (`--volume`, `--mute`: a gain of 0 is a mute).
    init(count: Int, initial: [Int: Double]) {
        gains = Locked((0..<count).map { i in
            guard let g = initial[i] else { return Gain() }
            return g == 0 ? Gain(volume: 1, muted: true) : Gain(volume: g)
        })
    }

    var all: [Gain] { gains.withLock { $0 } }

    /// A source added to the mix, at unity.
    func append() { gains.withLock { $0.append(Gain()) } }

    /// Sets source `index`'s volume and/or mute; false when there is no such source.
    func set(_ index: Int, volume: Double?, muted: Bool?) -> Bool {
        gains.withLock { g in
            guard g.indices.contains(index) else { return false }
            if let volume { g[index].volume = volume }
            if let muted { g[index].muted = muted }
            return true
        }
    }

    /// The frame of source `index` at its gain: itself at unity, else a scaled copy.
    func apply(_ index: Int, to frame: Frame) throws -> Frame {
        let gain = gains.withLock { $0.indices.contains(index) ? $0[index].linear : 1 }
        return gain == 1 ? frame : try frame.scaled(by: gain)
    }
}
