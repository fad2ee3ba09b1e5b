/// Something in an inventory that fleettrust left out (a host entry, a value, a whole file), as
/// the scan document's `skipped` lists it: a host nobody checked must never vanish silently.
public struct SkippedInventoryEntry: Codable, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    /// One sentence, cleaned: what was wrong and what was left out.
    public var reason: String

    public init(file: String, line: Int, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    /// Every error the readers reported (warnings were read, with a caveat: they are not listed).
    public static func entries(in inventory: Inventory) -> [SkippedInventoryEntry] {
        inventory.errors.map {
            SkippedInventoryEntry(file: CleanText($0.location.file, limit: 1024).value, line: $0.location.line,
                                  reason: CleanText($0.message, limit: 512).value)
        }
    }

    public var description: String { "\(file):\(line): \(reason)" }
}
