/// Makes untrusted text (server banners, file contents, host names) safe to print.
///
/// Anything a remote host or an input file says may carry terminal escape sequences
/// (screen clears, OSC 52 clipboard writes, title changes) or invalid UTF-8. Before such
/// text reaches a terminal, a log or JSON, it passes through here: control characters
/// (C0, DEL, C1) are replaced by `?`, invalid UTF-8 by U+FFFD, and length is bounded.
public enum Sanitizer {
    public static func clean(_ text: String, limit: Int = 256) -> String {
        if isPrintableASCII(text.utf8, limit: limit) { return text }
        return clean(bytes: Array(text.utf8), limit: limit)
    }

    public static func clean(bytes: [UInt8], limit: Int = 256) -> String {
        if isPrintableASCII(bytes, limit: limit) { return String(decoding: bytes, as: UTF8.self) }
        let decoded = String(decoding: bytes.prefix(limit * 4), as: UTF8.self)
        var out = String.UnicodeScalarView()
        var count = 0
        for scalar in decoded.unicodeScalars {
            if count >= limit {
                out.append("…")
                break
            }
            out.append(isControl(scalar) ? "?" : scalar)
            count += 1
        }
        return String(out)
    }

    /// Text the slow path would return unchanged (most names, keys and banners): short enough, and
    /// every byte printable ASCII.
    private static func isPrintableASCII<Bytes: Collection<UInt8>>(_ bytes: Bytes, limit: Int) -> Bool {
        bytes.count <= limit && bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7f }
    }

    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v < 0x20 || (v >= 0x7f && v < 0xa0) || v == 0x2028 || v == 0x2029
            || (v >= 0x202a && v <= 0x202e) || (v >= 0x2066 && v <= 0x2069)
    }
}
