/// What the control API changed in a running job, as a typed value: `--stats`, `/stats` and
/// `/events` write each as `target`, `setting` and `value` (docs/control.md).
public enum JobEvent: Sendable, Equatable {
    case sourceAdded(SourceID, name: String)
    case sourceRemoved(SourceID)
    case volume(SourceID, Double)
    case mute(SourceID, Bool)
    case outputAdded(OutputID)
    case outputRemoved(OutputID)
    case videoBitRate(OutputID, Int)
    case reconnect(OutputID)
    case segmentsCut
    case layout(VideoLayout)
    case mainPicture(SourceID)

    /// What was changed: a source (`a1`), an output (`o0`), `segments` or `layout`.
    public var target: String {
        switch self {
        case .sourceAdded(let s, _), .sourceRemoved(let s), .volume(let s, _), .mute(let s, _): s.description
        case .outputAdded(let o), .outputRemoved(let o), .videoBitRate(let o, _), .reconnect(let o): o.description
        case .segmentsCut: "segments"
        case .layout, .mainPicture: "layout"
        }
    }

    /// The setting: `added`, `removed`, `volume`, `mute`, `vbitrate`, `reconnect`, `cut`, `layout`, `main`.
    public var setting: String {
        switch self {
        case .sourceAdded, .outputAdded: "added"
        case .sourceRemoved, .outputRemoved: "removed"
        case .volume: "volume"
        case .mute: "mute"
        case .videoBitRate: "vbitrate"
        case .reconnect: "reconnect"
        case .segmentsCut: "cut"
        case .layout: "layout"
        case .mainPicture: "main"
        }
    }

    /// Its value as the JSON writes it; `.none` for a change without one (a cut, a removal).
    public var value: JobChange.Value {
        switch self {
        case .sourceAdded(_, let name): .text(name)
        case .volume(_, let v): .number(v)
        case .mute(_, let b): .flag(b)
        case .videoBitRate(_, let rate): .number(Double(rate))
        case .layout(let l): .text(l.rawValue)
        case .mainPicture(let s): .text(s.description)
        case .sourceRemoved, .outputAdded, .outputRemoved, .reconnect, .segmentsCut: .none
        }
    }
}
