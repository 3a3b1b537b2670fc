import CFFmpeg

/// An owned `AVPacket`.
///
/// Thread-safety: a packet belongs to one thread at a time; it moves between threads only through
/// queues that hold a lock, and nobody touches it after handing it on. That is why it is
/// `@unchecked Sendable`.
public final class Packet: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVPacket>

    public init() throws {
        guard let p = av_packet_alloc() else { throw outOfMemory("av_packet_alloc") }
        pointer = p
    }

    /// A packet holding a copy of `bytes`.
    public convenience init(copying bytes: UnsafeRawBufferPointer) throws {
        try self.init()
        try check(av_new_packet(pointer, Int32(bytes.count)), "av_new_packet")
        if bytes.count > 0, let base = bytes.baseAddress {
            pointer.pointee.data.update(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
    }

    public convenience init(copying bytes: [UInt8]) throws {
        let packet = try bytes.withUnsafeBytes { try Packet(copying: $0) }
        try self.init()
        av_packet_move_ref(pointer, packet.pointer)
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }

    /// A new reference to the same data (no copy of the payload).
    public func reference() throws -> Packet {
        let other = try Packet()
        try check(av_packet_ref(other.pointer, pointer), "av_packet_ref")
        return other
    }

    public func unreference() { av_packet_unref(pointer) }


    public var pts: Int64 {
        get { pointer.pointee.pts }
        set { pointer.pointee.pts = newValue }
    }
    public var dts: Int64 {
        get { pointer.pointee.dts }
        set { pointer.pointee.dts = newValue }
    }
    public var duration: Int64 {
        get { pointer.pointee.duration }
        set { pointer.pointee.duration = newValue }
    }
    public var streamIndex: Int {
        get { Int(pointer.pointee.stream_index) }
        set { pointer.pointee.stream_index = Int32(newValue) }
    }
    public var isKeyframe: Bool {
        get { pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 }
        set {
            if newValue { pointer.pointee.flags |= AV_PKT_FLAG_KEY } else { pointer.pointee.flags &= ~AV_PKT_FLAG_KEY }
        }
    }
    public var size: Int { Int(pointer.pointee.size) }

    /// Keeps only the payload of a packet that came from somewhere else (a demuxer): drops its
    /// side data (the muxer would act on new extradata or skip samples), duration and position,
    /// and sets the key flag.
    public func resetForMuxing(isKeyframe: Bool) {
        if pointer.pointee.side_data_elems > 0 { av_packet_free_side_data(pointer) }
        pointer.pointee.duration = 0
        pointer.pointee.pos = -1
        pointer.pointee.flags = isKeyframe ? AV_PKT_FLAG_KEY : 0
    }
    /// Byte offset in the input file, as the demuxer reports it; -1 when unknown.
    public var position: Int64 { pointer.pointee.pos }

    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer.pointee.data, count: size))
    }

    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// Lets `body` change the payload in place (copying it first only if it is shared).
    public func withMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) throws -> R {
        try check(av_packet_make_writable(pointer), "av_packet_make_writable")
        return try body(UnsafeMutableRawBufferPointer(start: pointer.pointee.data, count: size))
    }

    /// Parameter sets the encoder or a bitstream filter attached to this packet
    /// (`AV_PKT_DATA_NEW_EXTRADATA`), if any.
    public var newExtradata: [UInt8]? {
        var size: Int = 0
        guard let data = av_packet_get_side_data(pointer, AV_PKT_DATA_NEW_EXTRADATA, &size), size > 0 else {
            return nil
        }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// Attaches new parameter sets, so the FLV muxer writes a new sequence header before this packet.
    public func setNewExtradata(_ bytes: [UInt8]) throws {
        guard let data = av_packet_new_side_data(pointer, AV_PKT_DATA_NEW_EXTRADATA, bytes.count) else {
            throw outOfMemory("av_packet_new_side_data")
        }
        bytes.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: bytes.count) }
    }
}
