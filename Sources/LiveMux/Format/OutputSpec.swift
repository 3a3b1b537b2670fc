/// One output: where it goes, in which container, and what it asks of its encode.
public struct OutputSpec: Sendable, Equatable {
    public var destination: Destination
    public var format: ContainerFormat
    /// Its own encode settings where they differ from the recording's (`record` only).
    public var encoding: OutputEncoding
    /// Its identity in the job; nil until the job numbers its outputs (`Outputs.identified`).
    public var id: OutputID?

    public init(destination: Destination, format: ContainerFormat, encoding: OutputEncoding = OutputEncoding()) {
        self.destination = destination
        self.format = format
        self.encoding = encoding
    }
}
