/// Why the control API refused a request: the HTTP status, the field at fault (nil: the
/// request as a whole) and what to do instead. Nothing was changed.
struct ControlError: Error, Equatable {
    let status: String
    let field: String?
    let message: String

    static func badRequest(_ field: String?, _ message: String) -> ControlError { ControlError(status: "400 Bad Request", field: field, message: message) }
    static func notFound(_ message: String) -> ControlError { ControlError(status: "404 Not Found", field: nil, message: message) }
    static func conflict(_ field: String?, _ message: String) -> ControlError { ControlError(status: "409 Conflict", field: field, message: message) }
    static func notImplemented(_ message: String) -> ControlError { ControlError(status: "501 Not Implemented", field: nil, message: message) }

    var jsonObject: [String: Any] {
        var o: [String: Any] = ["error": message]
        if let field { o["field"] = field }
        return o
    }
}
