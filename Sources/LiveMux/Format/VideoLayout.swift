/// Where the second and later video sources go in the picture (`--layout`).
public enum VideoLayout: String, CaseIterable, Sendable {
    /// Picture in picture: each a quarter of the width, aspect kept, in a corner with a margin;
    /// a third source goes beside the second, and so on.
    case pip, pipTopLeft = "pip-top-left", pipTopRight = "pip-top-right", pipBottomLeft = "pip-bottom-left"
    /// Every source in a cell of equal width (height), aspect kept, black around.
    case sideBySide = "side-by-side", topBottom = "top-bottom"
}
