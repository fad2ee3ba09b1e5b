/// What a terminal in a locale that is not UTF-8 (`LANG=C`) is sent instead of the non-ASCII
/// characters the views draw: curses cannot encode them there and would leave them blank.
///
/// The views stay in Unicode; only the curses layer substitutes, when it draws. Every substitute
/// takes exactly the columns of the character it stands for (`DisplayWidth`), so layout is the same.
enum ASCIIGlyphs {
    /// Look-alikes for the characters the dashboard itself uses, and a few common in messages.
    static let lookAlikes: [Unicode.Scalar: Unicode.Scalar] = [
        "…": "~", "↑": "^", "↓": "v", "←": "<", "→": ">", "·": "-", "•": "*",
        "│": "|", "─": "-", "┌": "+", "┐": "+", "└": "+", "┘": "+", "├": "+", "┤": "+", "┬": "+", "┴": "+", "┼": "+",
        "—": "-", "–": "-", "‘": "'", "’": "'", "“": "\"", "”": "\"", "×": "x", "\u{00A0}": " ",
    ]

    /// `text` in ASCII with the same display width: look-alikes where known, otherwise one `?`
    /// per column the character takes (none for combining marks).
    static func ascii(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.isASCII {
                out.append(scalar)
            } else if let lookAlike = lookAlikes[scalar] {
                out.append(lookAlike)
            } else {
                out.append(contentsOf: repeatElement("?", count: DisplayWidth.of(scalar)))
            }
        }
        return String(out)
    }
}
