import FFmpeg

/// What turns packets into a container's bytes for `ContainerWriter`: libavformat's muxer
/// (`OutputContainer`), or LiveMux's own FLV tags for HEVC (`FLVTagWriter`), which FFmpeg 5.1's
/// FLV muxer refuses. Streams are numbered in the order they were given, video first.
protocol ContainerMuxer: AnyObject {
    /// Each stream's time base, valid after `writeHeader`.
    var streamTimeBases: [Rational] { get }
    func writeHeader() throws -> MuxedBytes
    /// One packet with these timestamps, in its stream's time base; the packet is left as it was.
    func write(_ packet: Packet, stream: Int, pts: Int64, dts: Int64, duration: Int64) throws -> MuxedBytes
    func writeTrailer() throws -> OutputContainer.Trailer
}

extension OutputContainer: ContainerMuxer {}
