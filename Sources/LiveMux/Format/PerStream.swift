/// One value for each stream, looked up without hashing: the per-packet paths (interleaver,
/// container writer) use it where a dictionary would hash the kind's raw string every time.
struct PerStream<Value> {
    var video: Value
    var audio: Value

    init(repeating value: Value) {
        video = value
        audio = value
    }

    subscript(kind: StreamKind) -> Value {
        get { kind == .video ? video : audio }
        // In place: a get-then-set would copy a queued array on every append.
        _modify {
            if kind == .video { yield &video } else { yield &audio }
        }
    }
}

extension PerStream: Sendable where Value: Sendable {}
