/// The bit rates LiveMux takes, in bits per second: one range for the command line, `ctl` and
/// the control API alike.
public enum BitRates {
    public static let range = 1_000...1_000_000_000
    /// The range as messages say it.
    public static let described = "1k to 1G"
}
