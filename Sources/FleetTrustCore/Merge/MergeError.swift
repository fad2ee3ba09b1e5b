/// Why `merge` refused its input: the report and, for a host entry, its index and name.
public struct MergeError: Error, CustomStringConvertible, Sendable {
    public var file: String
    public var message: String

    public init(file: String, message: String) {
        self.file = Sanitizer.clean(file, limit: 1024)
        self.message = message
    }

    public var description: String { "\(file): \(message)" }
}
