/// OpenSSH's answer for a name against a comma-separated pattern list (`match.c`).
///
/// Three answers, not two: a negated match (`!pattern`) rules a line out even when
/// another element matches, and callers (and tests) need to tell that apart.
public enum PatternMatch: Sendable, Equatable {
    case match
    case noMatch
    case negated
}

/// Host pattern lists as OpenSSH's `match_hostname` reads them.
public enum KnownHostsPattern {
    /// OpenSSH copies each sub-pattern into a 1024-byte buffer; one of 1023 bytes or more
    /// ends the whole list with "no match" at that point (`match_pattern_list`).
    static let maximumSubpatternLength = 1023

    /// Matches `name` against `list`; both are lowercased (ASCII) as OpenSSH does.
    public static func match(name: String, list: String) -> PatternMatch {
        match(name: lowercased(Array(name.utf8)), elements: Element.split(Array(list.utf8)))
    }

    /// One element of a pattern list, already lowercased, with its negation.
    struct Element: Sendable, Hashable {
        var negated: Bool
        var pattern: [UInt8]
        /// Set when the element hit OpenSSH's length limit: evaluation stops there with no match.
        var tooLong: Bool

        var isLiteral: Bool { !pattern.contains(UInt8(ascii: "*")) && !pattern.contains(UInt8(ascii: "?")) }

        static func split(_ list: [UInt8]) -> [Element] {
            var elements: [Element] = []
            var i = 0
            let comma = UInt8(ascii: ","), bang = UInt8(ascii: "!")
            while i < list.count {
                var negated = false
                if list[i] == bang { negated = true; i += 1 }
                var sub: [UInt8] = []
                while i < list.count, sub.count < maximumSubpatternLength, list[i] != comma {
                    sub.append(lowercase(list[i]))
                    i += 1
                }
                if sub.count >= maximumSubpatternLength {
                    elements.append(Element(negated: negated, pattern: [], tooLong: true))
                    return elements
                }
                if i < list.count, list[i] == comma { i += 1 }
                elements.append(Element(negated: negated, pattern: sub, tooLong: false))
            }
            return elements
        }
    }

    static func match(name: [UInt8], elements: [Element]) -> PatternMatch {
        var positive = false
        for element in elements {
            if element.tooLong { return .noMatch }
            if glob(name, element.pattern) {
                if element.negated { return .negated }
                positive = true
            }
        }
        return positive ? .match : .noMatch
    }

    /// `*` (any run, including empty) and `?` (one byte); the whole string must match.
    ///
    /// Same answers as OpenSSH's recursive `match_pattern`, in O(n·m) time instead of
    /// its exponential worst case, since known_hosts files are untrusted input.
    static func glob(_ string: [UInt8], _ pattern: [UInt8]) -> Bool {
        let star = UInt8(ascii: "*"), question = UInt8(ascii: "?")
        var s = 0, p = 0
        var starP = -1, starS = 0
        while s < string.count {
            if p < pattern.count, pattern[p] == star {
                starP = p; starS = s; p += 1
            } else if p < pattern.count, pattern[p] == question || pattern[p] == string[s] {
                s += 1; p += 1
            } else if starP >= 0 {
                p = starP + 1; starS += 1; s = starS
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == star { p += 1 }
        return p == pattern.count
    }

    static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte
    }

    static func lowercased(_ bytes: [UInt8]) -> [UInt8] { bytes.map(lowercase) }
}
