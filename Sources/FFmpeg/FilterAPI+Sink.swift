import CFFmpeg

extension lm_filter_api {
    /// Creates a buffersink (abuffersink for audio) named `name` in `graph` and links the open
    /// output `pad` to it: how both kinds of graph end.
    func linkSink(_ pad: UnsafeMutablePointer<AVFilterInOut>, _ type: MediaType, named name: String,
                  in graph: UnsafeMutablePointer<AVFilterGraph>) throws -> UnsafeMutablePointer<AVFilterContext> {
        let filterName = type == .video ? "buffersink" : "abuffersink"
        guard let filter = get_by_name(filterName) else { throw outOfMemory("avfilter_get_by_name(\(filterName))") }
        var sink: UnsafeMutablePointer<AVFilterContext>? = nil
        try check(graph_create_filter(&sink, filter, name, nil, nil, graph), "avfilter_graph_create_filter(\(filterName))")
        try check(link(pad.pointee.filter_ctx, UInt32(pad.pointee.pad_idx), sink, 0), "avfilter_link")
        return sink!
    }
}
