/// Why a change to a running job was refused (the control API's answer): the HTTP status, the
/// field at fault (nil: the request as a whole) and what to do instead. Nothing was changed.
public struct ControlError: Error, Equatable, CustomStringConvertible {
    public let status: String
    public let field: String?
    public let message: String
    /// A method not allowed: the methods the path takes (its `Allow` header).
    public var allowed: String? = nil

    public var description: String { message }

    static func badRequest(_ field: String?, _ message: String) -> ControlError { ControlError(status: "400 Bad Request", field: field, message: message) }
    static func notFound(_ message: String) -> ControlError { ControlError(status: "404 Not Found", field: nil, message: message) }
    static func conflict(_ field: String?, _ message: String) -> ControlError { ControlError(status: "409 Conflict", field: field, message: message) }
    static func notImplemented(_ message: String) -> ControlError { ControlError(status: "501 Not Implemented", field: nil, message: message) }

    var jsonObject: [String: String] {
        var o = ["error": message]
        if let field { o["field"] = field }
        return o
    }
}
