/// One output: where it goes and in which container.
public struct OutputSpec: Sendable, Equatable {
    public var destination: Destination
    public var format: ContainerFormat

    public init(destination: Destination, format: ContainerFormat) {
        self.destination = destination
        self.format = format
    }
}
