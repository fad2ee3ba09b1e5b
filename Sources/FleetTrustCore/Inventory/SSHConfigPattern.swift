/// OpenSSH's `match.c` wildcard rules, as `Host` and `Match host` lines use them.
///
/// `*` matches any run of characters, `?` exactly one; nothing else is special. A pattern list is
/// comma-separated, `!` negates an element, and a matching negated element vetoes the whole list.
enum SSHConfigPattern {
    enum ListMatch {
        case match
        case noMatch
        case negatedMatch
    }

    /// `match_pattern`: case-sensitive, the whole string must match. Linear-time greedy matching
    /// with one backtrack point, which gives the same answers as OpenSSH's recursive version.
    static func matches(_ string: String, _ pattern: String) -> Bool {
        let text = Array(string.utf8)
        let pattern = Array(pattern.utf8)
        var t = 0
        var p = 0
        var star: Int?
        var resume = 0
        while t < text.count {
            if p < pattern.count && (pattern[p] == UInt8(ascii: "?") || pattern[p] == text[t] && pattern[p] != UInt8(ascii: "*")) {
                t += 1
                p += 1
            } else if p < pattern.count && pattern[p] == UInt8(ascii: "*") {
                star = p
                resume = t
                p += 1
            } else if let starAt = star {
                p = starAt + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }

    /// `match_pattern_list`, with lowercasing as `match_hostname` calls it, or without (`Match
    /// user`, `Match localuser`).
    static func matchesList(_ string: String, _ list: String, lowercase: Bool = true) -> ListMatch {
        let lowered = lowercase ? string.lowercased() : string
        var positive = false
        for element in list.split(separator: ",", omittingEmptySubsequences: true) {
            var sub = Substring(element)
            let negated = sub.hasPrefix("!")
            if negated { sub = sub.dropFirst() }
            if sub.utf8.count >= 1023 { return .noMatch }
            if matches(lowered, lowercase ? sub.lowercased() : String(sub)) {
                if negated { return .negatedMatch }
                positive = true
            }
        }
        return positive ? .match : .noMatch
    }

    /// Whether a `Host` argument names one concrete host rather than a pattern or an exclusion.
    static func isConcrete(_ pattern: String) -> Bool {
        !pattern.isEmpty && !pattern.contains(where: { $0 == "*" || $0 == "?" || $0 == "!" })
    }
}
