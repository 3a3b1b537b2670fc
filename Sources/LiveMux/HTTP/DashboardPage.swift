import Foundation

/// The dashboard's page, served at `/` to a browser (`Accept: text/html`): one self-contained
/// document, no external script, style or font. Its script reads `/events` (one object a second,
/// docs/stats.schema.json) after `/history` (the plotted fields of the last five minutes), and refreshes
/// `/snapshot.jpg` once a second while the tab is visible. Its `<video>` plays `/live.mp4`
/// (`BrowserStream`) through Media Source Extensions near the live edge. Every live value carries
/// `data-stat="NAME"`, its name in the schema (`latency_ms.p99` for a nested one), and script
/// errors are written into `#errors`, so tests and scrapers read the page as a person sees it.
/// Opened as `/#control=KEY` (the key of `--control-key-file`), it also shows the controls of
/// `/api` — mute and volume per audio source, a bit rate and a remove button per output, a form
/// that adds an output, the main picture and the layout, a segment cut — each with
/// `data-control="NAME"`; the key stays in the tab's sessionStorage and leaves the address bar.
/// A fragment never reaches the server, so the key is in no request line or access log.
/// The page is three files in Dashboard/ (HTML, CSS, JavaScript), compiled into the binary
/// (`embedInCode`) and put together once: a livemux copied anywhere serves the whole page.
enum DashboardPage {
    /// The layouts the page offers, as JSON strings: the names `PUT /api/layout` takes.
    private static let layoutNames = "[" + VideoLayout.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ") + "]"

    /// Where `page(access:stream:)` writes the query that lets the page's own requests in, and
    /// the path of the stream its video plays; where the script's layouts and the style and
    /// script files go into the page.
    private static let accessPlaceholder = "ACCESS_QUERY"
    private static let streamPlaceholder = "LIVE_STREAM_PATH"
    private static let layoutsPlaceholder = "LAYOUT_NAMES"
    private static let stylePlaceholder = "/* dashboard.css */"
    private static let scriptPlaceholder = "// dashboard.js"

    /// The page, its requests carrying `access` (`key=KEY`, or `expires=T&sig=HEX` signed over
    /// `*`; empty: they carry what the page's own address does), its video playing `stream`
    /// (nil: the server streams nothing a browser plays, as for HEVC; no video then).
    static func page(access: String, stream: String?) -> String {
        html.replacingOccurrences(of: accessPlaceholder, with: scriptString(access))
            .replacingOccurrences(of: streamPlaceholder, with: scriptString(stream ?? ""))
    }

    /// `text` as a JavaScript string literal that cannot end the script element.
    private static func scriptString(_ text: String) -> String {
        let literal = (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
        return literal.replacingOccurrences(of: "<", with: "\\u003c")
    }

    /// The page with its style and script in it, the placeholders of each request still open.
    static let html: String = {
        let text = { (bytes: [UInt8]) in String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines) }
        return text(PackageResources.dashboard_html)
            .replacingOccurrences(of: stylePlaceholder, with: text(PackageResources.dashboard_css))
            .replacingOccurrences(of: scriptPlaceholder, with: text(PackageResources.dashboard_js)
                .replacingOccurrences(of: layoutsPlaceholder, with: layoutNames))
    }()
}
