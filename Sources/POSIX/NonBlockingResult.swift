/// What a call on a non-blocking descriptor did: a socket that is full or has nothing to read
/// (EAGAIN) is an ordinary state of an event loop, not a failure.
public enum NonBlockingResult<Value> {
    case done(Value)
    /// EAGAIN (EWOULDBLOCK): go on once the descriptor is ready.
    case wouldBlock
    case failed(SystemCallError)
}
