/// One problem found while reading an inventory, tied to the file and line that caused it.
///
/// Readers collect every problem in a file instead of stopping at the first, so a sysadmin can fix
/// them all in one pass; `description` prints as `file:line: message`, the shape compilers use.
public struct InventoryDiagnostic: Hashable, Sendable, CustomStringConvertible {
    /// Errors mean an entry was left out or a value ignored; warnings mean it was read, with a
    /// caveat; a refusal is a security setting that does not parse, which refuses the whole run
    /// (dropping the host, or judging it under another policy, would be quieter than asked).
    public enum Severity: String, Sendable, Codable {
        case error
        case warning
        case refusal
    }

    public var location: SourceLocation
    public var severity: Severity
    /// One sentence; any input text in it is already sanitized.
    public var message: String

    public init(_ severity: Severity, _ location: SourceLocation, _ message: String) {
        self.location = location
        self.severity = severity
        self.message = message
    }

    public var description: String {
        severity == .warning ? "\(location): warning: \(message)" : "\(location): \(message)"
    }

    /// Quotes untrusted input for a message: sanitized and shortened.
    static func quote<S: StringProtocol>(_ text: S) -> String {
        "'\(Sanitizer.clean(String(text), limit: 80))'"
    }
}

/// Collects diagnostics for one source file while a reader walks it.
struct DiagnosticLog {
    let file: String
    private(set) var diagnostics: [InventoryDiagnostic] = []
    private(set) var skipped = 0

    init(file: String) {
        self.file = file
    }

    mutating func error(_ line: Int, _ message: String, skipping count: Int = 0) {
        diagnostics.append(InventoryDiagnostic(.error, SourceLocation(file: file, line: line), message))
        skipped += count
    }

    mutating func warning(_ line: Int, _ message: String) {
        diagnostics.append(InventoryDiagnostic(.warning, SourceLocation(file: file, line: line), message))
    }

    mutating func error(at location: SourceLocation, _ message: String, skipping count: Int = 0) {
        diagnostics.append(InventoryDiagnostic(.error, location, message))
        skipped += count
    }

    /// A security setting that does not parse: the run is refused (see `Severity.refusal`).
    mutating func refuse(at location: SourceLocation, _ message: String) {
        diagnostics.append(InventoryDiagnostic(.refusal, location, message))
    }

    mutating func warning(at location: SourceLocation, _ message: String) {
        diagnostics.append(InventoryDiagnostic(.warning, location, message))
    }

    func location(_ line: Int) -> SourceLocation {
        SourceLocation(file: file, line: line)
    }
}
