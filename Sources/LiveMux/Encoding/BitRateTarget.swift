/// Where a video lane takes a new bit rate from between two frames: the adaptive bit rate of an
/// adapting push, or the control API's dial (`BitRateDial`).
protocol BitRateTarget: AnyObject, Sendable {
    /// A target the lane has not applied yet, once (the encoder's thread).
    func takeChange() -> Int?
    /// The bit rate the lane runs at now.
    var current: Int { get }
}
