/// Why the history store cannot be used; each case prints as one sentence naming the file.
/// Whatever the case, the file is left exactly as it was.
public enum HistoryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is not an SQLite database (or is damaged).
    case notADatabase(path: String, detail: String)
    /// An SQLite database, but another program's.
    case foreign(path: String)
    /// Written by a newer fleettrust, whose schema this one does not know.
    case newerSchema(path: String)
    /// Other writers held the database for longer than the busy timeout.
    case busy(path: String, seconds: Double)
    /// Any other SQLite or file-system failure.
    case unusable(path: String, detail: String)

    public var description: String {
        switch self {
        case .notADatabase(let path, let detail):
            return "\(path): not a fleettrust history database (\(detail)); it was left untouched: move it away or give another --history file"
        case .foreign(let path):
            return "\(path): an SQLite database of another program, not a fleettrust history; it was left untouched: give another --history file"
        case .newerSchema(let path):
            return "\(path): written by a newer fleettrust (unknown schema version); it was left untouched: use that version or another --history file"
        case .busy(let path, let seconds):
            return "\(path): other fleettrust processes kept the history busy for more than \(seconds) seconds; nothing was recorded"
        case .unusable(let path, let detail):
            return "\(path): cannot use the history database: \(detail)"
        }
    }
}
