/// What forgetting a host can remove, decided in one place for the writer and for the dialog that
/// shows it beforehand: forget removes what `ssh-keygen -R` removes (hashed lines for the name,
/// the name from a list of literal names), and leaves a line whose patterns name more than this
/// host. So the dialog can list such a line as kept, with why, instead of promising its removal.
extension PatternList {
    /// Why forget leaves this list alone, or nil when it removes the host's name from it.
    public var keptByForget: String? {
        if elements.contains(where: \.negated) {
            return "a negated pattern list: removing a name from it would change whom it excludes; edit it by hand"
        }
        guard literalNames != nil else {
            return "a pattern line (wildcards or an address range) that can match other hosts too; edit it by hand"
        }
        return nil
    }
}

extension RecordedLine {
    /// Why forget keeps this line, or nil when it removes it (or the host's name from it).
    public var keptByForget: String? {
        let field = Array(text.value.utf8.prefix { $0 != 0x20 && $0 != 0x09 })
        guard field.first != UInt8(ascii: "|") else { return nil }
        return PatternList(field[...]).keptByForget
    }
}
