/// A number with its noun in agreement ("1 host", "2 hosts", "1 entry", "3 entries"): the one
/// place every command, report and dashboard line puts a count before a noun, so none says
/// "1 hosts".
public enum Counted {
    /// `count` and `singular`, or `plural` (default: `singular` + "s") unless the count is 1.
    public static func of(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
    }
}
