/// One network output's link, as its watcher last measured it (`--stats` `network`).
public struct NetworkOutputSnapshot: Sendable, Equatable {
    /// The output's id (`o1`).
    public var id: String
    /// The URL, masked.
    public var name: String
    /// How far behind real time the output is: the age of its oldest media byte not yet
    /// acknowledged by the peer (kernel, write in progress, queue).
    public var backlogMs: Double
    /// What the link carried while busy, else what it carried (a lower bound), in kbit/s.
    public var linkKbps: Double
    /// Times the output skipped to the newest keyframe to stay within `--max-latency`.
    public var latencySkips: Int
    /// Whether the kernel's send queue is read (a TCP socket was found), not only the output's queue.
    public var kernelVisible: Bool
    public var state: ConnectionState
    /// Bytes its connections took: what reached the network (a push that never connected sent none).
    public var sentBytes: Int64 = 0
}
