/// Something a test needs that could not be set up: a program that did not start, a device rig.
struct SetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
