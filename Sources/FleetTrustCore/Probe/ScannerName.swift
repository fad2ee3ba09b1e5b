import Glibc

/// The name a scan records as each host's `scanned_from`: `--scanner-name`, or this machine's
/// host name. A merged document from many networks says, per host, which one proved its keys.
public enum ScannerName {
    /// `name` cleaned (at most 255 characters; an empty one is `unknown`), or the host name
    /// `gethostname` gives when nil.
    public static func resolve(_ name: String?) -> CleanText {
        let text = name ?? hostName()
        let cleaned = CleanText(text, limit: 255)
        return cleaned.value.isEmpty ? CleanText("unknown") : cleaned
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
