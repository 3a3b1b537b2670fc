import Foundation

/// The iOS push API's form of `Muxer`'s intake (LFLiveKit's `addVideoData`/`addAudioData`):
/// raw pointers, timestamps in milliseconds.
extension Muxer {
    /// Adds one video packet stamped in milliseconds, like the iOS push API's
    /// `addVideoData(data, size, timestamp, isKeyFrame, isExtraData)` (spelled `isKeyframe` here, as
    /// everywhere in LiveMux).
    public func addVideoData(_ data: UnsafeRawPointer, size: Int, timestamp: Int64, isKeyframe: Bool, isExtraData: Bool) throws {
        let bytes = Array(UnsafeRawBufferPointer(start: data, count: max(0, size)))
        try addVideo(bytes, pts: timestamp, isKeyframe: isKeyframe, isExtraData: isExtraData)
    }

    /// Adds audio stamped in milliseconds, like the iOS push API's
    /// `addAudioData(data, size, channels, sampleRate, timestamp)`. A rate or channel count other
    /// than the stream's is dropped and counted.
    public func addAudioData(_ data: UnsafeRawPointer, size: Int, channels: Int, sampleRate: Int, timestamp: Int64) throws {
        let bytes = Array(UnsafeRawBufferPointer(start: data, count: max(0, size)))
        guard acceptsAudio(sampleRate: sampleRate, channels: channels) else { return }
        try addAudio(bytes, pts: timestamp)
    }
}
