/// Terminal column widths of text, without asking the C library (whose answer depends on the
/// process locale), so that layout is a pure function: East Asian wide characters take two
/// columns, combining marks none.
public enum DisplayWidth {
    public static func of(_ scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v == 0 { return 0 }
        if (0x0300...0x036F).contains(v) || (0x200B...0x200F).contains(v) || (0xFE00...0xFE0F).contains(v)
            || (0x1AB0...0x1AFF).contains(v) || (0x20D0...0x20FF).contains(v) {
            return 0
        }
        if (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
            || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
            || (0xFFE0...0xFFE6).contains(v) || (0x1F300...0x1F64F).contains(v) || (0x1F900...0x1F9FF).contains(v)
            || (0x20000...0x3FFFD).contains(v) {
            return 2
        }
        return 1
    }

    public static func of(_ text: String) -> Int {
        var total = 0
        for scalar in text.unicodeScalars { total += of(scalar) }
        return total
    }

    /// The longest prefix that fits in `width` columns, ending in `…` when something was cut.
    public static func truncate(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        if text.utf8.count <= width, text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        if of(text) <= width { return text }
        var out = String.UnicodeScalarView()
        var used = 0
        for scalar in text.unicodeScalars {
            let w = of(scalar)
            if used + w > width - 1 { break }
            out.append(scalar)
            used += w
        }
        out.append("…")
        return String(out)
    }

    /// `text` cut or padded with spaces to exactly `width` columns.
    public static func fit(_ text: String, to width: Int, alignRight: Bool = false) -> String {
        let cut = truncate(text, to: width)
        let pad = max(0, width - of(cut))
        let spaces = String(repeating: " ", count: pad)
        return alignRight ? spaces + cut : cut + spaces
    }

    /// Keeps both ends of a long identifier (fingerprints): `SHA256:abcd…wxyz`.
    public static func middleTruncate(_ text: String, to width: Int) -> String {
        guard of(text) > width else { return text }
        guard width > 4 else { return truncate(text, to: width) }
        let scalars = Array(text.unicodeScalars)
        let tail = (width - 1) / 3
        let head = width - 1 - tail
        var out = String.UnicodeScalarView(scalars.prefix(head))
        out.append("…")
        out.append(contentsOf: scalars.suffix(tail))
        return String(out)
    }

    /// `text` broken into lines of at most `width` columns, at spaces where it can be and anywhere
    /// in a word longer than a line (a fingerprint is never cut short: it continues on the next
    /// line); continuation lines start with `indent`.
    public static func wrap(_ text: String, width: Int, indent: String = "") -> [String] {
        guard width > 0 else { return [] }
        let indentWidth = min(of(indent), width / 2)
        var lines: [String] = []
        var line = ""
        var used = 0
        var empty = true
        func flush() {
            lines.append(line)
            line = String(indent.prefix(indentWidth))
            used = indentWidth
            empty = true
        }
        for (position, word) in text.split(separator: " ", omittingEmptySubsequences: false).enumerated() {
            if position > 0 {
                if !empty && used + 1 + of(String(word)) > width && of(String(word)) <= width - indentWidth {
                    flush()
                } else if used + 1 <= width {
                    line += " "
                    used += 1
                } else {
                    flush()
                }
            }
            for scalar in word.unicodeScalars {
                let w = of(scalar)
                if used + w > width { flush() }
                line.unicodeScalars.append(scalar)
                used += w
                empty = false
            }
        }
        lines.append(line)
        return lines
    }
}
