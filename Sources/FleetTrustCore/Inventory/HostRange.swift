/// Expands Ansible host ranges: `web[01:20]` (zero-padded), `[1:10:2]` (step), `db-[a:f]` (letters).
///
/// A pattern may hold several ranges; the count is computed before anything is expanded, so a
/// hostile `h[0:99999999][0:99999999]` is refused instead of exhausting memory.
enum HostRange {
    private enum Part {
        case literal(String)
        case range([String])
    }

    private static let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

    static func expand(_ pattern: String, limit: Int) -> Result<[String], HostPattern.PatternError> {
        var parts: [Part] = []
        var literal = ""
        var rest = Substring(pattern)
        var total = 1
        while let open = rest.firstIndex(of: "[") {
            guard let close = rest[open...].firstIndex(of: "]"), !rest[rest.index(after: open)..<close].contains("[") else {
                return .failure(.message("unmatched '[' in \(InventoryDiagnostic.quote(pattern))"))
            }
            let inner = rest[rest.index(after: open)..<close]
            guard inner.contains(":") else {
                return .failure(.message("brackets in \(InventoryDiagnostic.quote(pattern)) must hold a range such as [1:10]"))
            }
            guard !rest[..<open].contains("]") else {
                return .failure(.message("unmatched ']' in \(InventoryDiagnostic.quote(pattern))"))
            }
            literal += rest[..<open]
            switch values(inner, limit: limit, pattern: pattern) {
            case .failure(let error): return .failure(error)
            case .success(let values):
                parts.append(.literal(literal))
                literal = ""
                parts.append(.range(values.list))
                let (product, overflow) = total.multipliedReportingOverflow(by: max(values.count, 1))
                total = overflow ? Int.max : product
                if total > limit {
                    return .failure(.message("range in \(InventoryDiagnostic.quote(pattern)) expands to more than \(limit) hosts"))
                }
            }
            rest = rest[rest.index(after: close)...]
        }
        if rest.contains("]") {
            return .failure(.message("unmatched ']' in \(InventoryDiagnostic.quote(pattern))"))
        }
        parts.append(.literal(literal + rest))
        var names = [""]
        for part in parts {
            switch part {
            case .literal(let text):
                names = names.map { $0 + text }
            case .range(let values):
                names = names.flatMap { prefix in values.map { prefix + $0 } }
            }
        }
        return .success(names)
    }

    private struct Values {
        var list: [String]
        var count: Int { list.count }
    }

    private static func values(_ inner: Substring, limit: Int, pattern: String) -> Result<Values, HostPattern.PatternError> {
        let shown = "[\(Sanitizer.clean(String(inner), limit: 40))]"
        let bounds = inner.split(separator: ":", omittingEmptySubsequences: false)
        guard bounds.count == 2 || bounds.count == 3 else {
            return .failure(.message("host range \(shown) must be [begin:end] or [begin:end:step]"))
        }
        let begin = bounds[0].isEmpty ? "0" : bounds[0]
        let end = bounds[1]
        guard !end.isEmpty else { return .failure(.message("host range \(shown) has no end")) }
        var step = 1
        if bounds.count == 3 {
            guard let value = Int(bounds[2]), value > 0 else {
                return .failure(.message("host range step \(InventoryDiagnostic.quote(bounds[2])) is not a positive number"))
            }
            step = value
        }
        if begin.count == 1, end.count == 1, let first = letters.firstIndex(of: begin.first!),
           let last = letters.firstIndex(of: end.first!) {
            guard first <= last else { return .failure(.message("host range \(shown) ends before it begins")) }
            let list = stride(from: first, through: last, by: step).map { String(letters[$0]) }
            return .success(Values(list: list))
        }
        guard let low = Int(begin), let high = Int(end), low >= 0, high >= 0 else {
            return .failure(.message("host range \(shown) needs two numbers or two letters"))
        }
        guard low <= high else { return .failure(.message("host range \(shown) ends before it begins")) }
        let width = begin.hasPrefix("0") && begin.count > 1 ? begin.count : 0
        if width > 0 && end.count != width {
            return .failure(.message("host range \(shown) must give begin and end with the same number of digits"))
        }
        // (high - low) / step is at most Int.max; adding one more could trap, so compare without it.
        guard (high - low) / step < limit else {
            return .failure(.message("range in \(InventoryDiagnostic.quote(pattern)) expands to more than \(limit) hosts"))
        }
        let list = stride(from: low, through: high, by: step).map { value in
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return .success(Values(list: list))
    }
}
