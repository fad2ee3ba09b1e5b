/// One line of an input file, numbered from 1, without its line terminator.
struct InventoryLine {
    let number: Int
    let text: Substring
}

/// Line splitting and word splitting shared by the text readers.
enum InventoryLines {
    /// Splits on `\n` at the byte level (so `\r\n` files work) and drops one trailing `\r`.
    /// Stops after `limit` bytes when given, for cheap looks at the head of a file.
    static func split(_ contents: String, limit: Int = .max) -> [InventoryLine] {
        var lines: [InventoryLine] = []
        let utf8 = contents.utf8
        var start = utf8.startIndex
        var number = 1
        var consumed = 0
        var index = start
        while index != utf8.endIndex, consumed < limit {
            if utf8[index] == 0x0A {
                lines.append(InventoryLine(number: number, text: line(utf8, start, index)))
                number += 1
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
            consumed += 1
        }
        if start != index {
            lines.append(InventoryLine(number: number, text: line(utf8, start, index)))
        }
        return lines
    }

    /// Splits and drops over-long lines with an error each, so no reader works on unbounded text.
    static func split(_ contents: String, maxLength: Int, log: inout DiagnosticLog) -> [InventoryLine] {
        split(contents).filter { line in
            let length = line.text.utf8.count
            guard length > maxLength else { return true }
            log.error(line.number, "line is \(length) bytes long, over the limit of \(maxLength); skipped",
                      skipping: 1)
            return false
        }
    }

    private static func line(_ utf8: String.UTF8View, _ start: String.Index, _ end: String.Index) -> Substring {
        var end = end
        if end != start, utf8[utf8.index(before: end)] == 0x0D {
            end = utf8.index(before: end)
        }
        return Substring(utf8[start..<end])
    }

    enum WordError: Error {
        case unterminatedQuote
    }

    /// Splits a line into words the way a POSIX shell quotes them: blanks separate words, `'…'` and
    /// `"…"` group, a backslash escapes the next character outside single quotes, and an unquoted `#`
    /// at the start of a word begins a comment. This is what both Python's `shlex` (Ansible INI host
    /// lines) and OpenSSH's `argv_split` (ssh_config arguments) do for every input they accept.
    static func words<S: StringProtocol>(_ text: S) throws(WordError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            if let open = quote {
                if character == open {
                    quote = nil
                } else if character == "\\" && open == "\"" {
                    escaped = true
                } else {
                    current.append(character)
                }
                continue
            }
            switch character {
            case " ", "\t", "\u{0C}":
                if inWord {
                    words.append(current)
                    current = ""
                    inWord = false
                }
            case "#" where !inWord:
                return words
            case "\"", "'":
                quote = character
                inWord = true
            case "\\":
                escaped = true
                inWord = true
            default:
                current.append(character)
                inWord = true
            }
        }
        if quote != nil { throw .unterminatedQuote }
        if inWord { words.append(current) }
        return words
    }
}
