import CFFmpeg

/// libavutil's cap on a single allocation (`av_max_alloc`): past it `av_malloc` returns NULL, as
/// when memory runs out, which is how the tests reach the out-of-memory paths of the wrappers.
public enum AllocationLimit {
    /// libavutil's default cap.
    public static let defaultBytes = Int(Int32.max)

    /// Applies to every thread at once: set it only while no other FFmpeg work runs.
    public static func set(_ bytes: Int) { av_max_alloc(bytes) }
}
