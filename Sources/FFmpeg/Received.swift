import CFFmpeg

/// What a `receive` call produced: EAGAIN and EOF are states, not errors.
public enum Received<Value> {
    case value(Value)
    case needsInput
    case endOfStream
}
