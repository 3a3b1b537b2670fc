import LiveMux

extension [ClaimedFile] {
    /// Claims `path` for `option` (nil: a file only read, at will); refused when a file claimed
    /// before is the same.
    mutating func claim(_ path: String, shown: String? = nil, option: String?, reader: String? = nil, segmented: Bool = false) throws {
        let claim = ClaimedFile(path, shown: shown, option: option, reader: reader, segmented: segmented)
        if let refusal = refusal(of: claim) { throw UsageError(refusal) }
        append(claim)
    }
}
