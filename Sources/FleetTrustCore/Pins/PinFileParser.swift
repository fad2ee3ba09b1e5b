import Foundation

/// Reads pin files (format documented on `PinSet`): any bytes, never a crash. A bad line is
/// skipped and reported with its file and line; all problems are reported, not the first.
enum PinFileParser {
    static let maximumSize = 64 << 20

    /// Where each good pin line starts, its line number, and every bad line; `each` sees every
    /// good line, parsed, with its index among them (once: the caller indexes it then).
    static func index(path: String, bytes: [UInt8], each: (Int, PinLine) -> Void) -> (starts: [UInt32], numbers: [UInt32], errors: [PinFileError]) {
        guard bytes.count <= maximumSize else { return ([], [], [PinFileError(path: path, line: 0, reason: "the file is too large")]) }
        var starts: [UInt32] = [], numbers: [UInt32] = []
        var errors: [PinFileError] = []
        var number = 0
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            switch parseLine(rawLine, number: number) {
            case .none: continue
            case .some(.success(let line)):
                each(starts.count, line)
                starts.append(UInt32(rawLine.startIndex))
                numbers.append(UInt32(number))
            case .some(.failure(let reason)): errors.append(PinFileError(path: path, line: number, reason: reason.text))
            }
        }
        return (starts, numbers, errors)
    }

    struct Reason: Error { var text: String }

    /// nil for blank and comment lines.
    static func parseLine(_ rawLine: ArraySlice<UInt8>, number: Int) -> Result<PinLine, Reason>? {
        guard let text = String(validating: rawLine, as: UTF8.self) else { return .failure(Reason(text: "the line is not valid UTF-8")) }
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
        guard let first = fields.first, !first.hasPrefix("#") else { return nil }
        if text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t" && $0 != "\r") || $0.value == 0x7f }) {
            return .failure(Reason(text: "the line contains a control character"))
        }
        if let reason = nonCanonicalAddress(in: first) { return .failure(reason) }
        var fingerprints: Set<SHA256Fingerprint> = []
        var authorities: Set<SHA256Fingerprint> = []
        var spkiPins: Set<SPKIPin> = []
        var expires: UInt64?
        for (index, field) in fields.dropFirst().enumerated() {
            if field.hasPrefix("expires=") {
                guard index == fields.count - 2 else { return .failure(Reason(text: "expires= must be the last field")) }
                guard let date = expiry(field.dropFirst("expires=".count)) else {
                    return .failure(Reason(text: "expiry \(Sanitizer.clean(String(field), limit: 40)) is not a date YYYY-MM-DD"))
                }
                expires = date
            } else if field.hasPrefix("ca:") {
                guard let fingerprint = SHA256Fingerprint(field.dropFirst(3)) else {
                    return .failure(Reason(text: "\(Sanitizer.clean(String(field), limit: 80)) is not a CA key's SHA256 fingerprint (ca:SHA256:…)"))
                }
                authorities.insert(fingerprint)
            } else if field.hasPrefix("pin-sha256:") {
                guard let pin = SPKIPin(field.dropFirst("pin-sha256:".count)) else {
                    return .failure(Reason(text: "\(Sanitizer.clean(String(field), limit: 80)) is not a pin-sha256:BASE64 of a 32-byte SHA-256"))
                }
                spkiPins.insert(pin)
            } else if field.hasPrefix("MD5:") {
                return .failure(Reason(text: "MD5 fingerprints are not accepted; use the SHA256 one (ssh-keygen -lf)"))
            } else {
                guard let fingerprint = SHA256Fingerprint(field) else {
                    return .failure(Reason(text: "\(Sanitizer.clean(String(field), limit: 80)) is not a SHA256 fingerprint"))
                }
                fingerprints.insert(fingerprint)
            }
        }
        guard !fingerprints.isEmpty || !authorities.isEmpty || !spkiPins.isEmpty else {
            return .failure(Reason(text: "a host pattern needs at least one fingerprint"))
        }
        return .success(PinLine(number: number, patterns: PatternList(ArraySlice(first.utf8)),
                                fingerprints: fingerprints, authorities: authorities, spkiPins: spkiPins, expiresAt: expires))
    }

    /// An address in the pattern list written otherwise than `ssh` writes the peer's address
    /// (`0:0:0:0:0:0:0:1` for `::1`, `127.1` for `127.0.0.1`, a zone kept as written): patterns
    /// compare addresses as text, so it would match (or, negated, exclude) nothing.
    static func nonCanonicalAddress(in patterns: Substring) -> Reason? {
        for element in patterns.split(separator: ",") {
            var address = element.hasPrefix("!") ? element.dropFirst() : element
            if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
                address = address[address.index(after: address.startIndex)..<close]
            }
            let zone = address.firstIndex(of: "%").map { address[$0...] } ?? ""
            let numeric = address.prefix { $0 != "%" }
            let looksNumeric = numeric.contains(":") || numeric.contains(".") && numeric.allSatisfy { $0.isHexDigit || $0 == "." || $0 == "x" || $0 == "X" }
            guard looksNumeric, !address.contains(where: { $0 == "*" || $0 == "?" }),
                  let canonical = LookupName.canonicalAddress(String(numeric)).map({ $0 + zone }), canonical != address else { continue }
            return Reason(text: "\(Sanitizer.clean(String(address), limit: 60)) is written \(Sanitizer.clean(canonical, limit: 60)) by ssh, and "
                          + "patterns compare addresses as text: write \(Sanitizer.clean(canonical, limit: 60))")
        }
        return nil
    }

    /// The first second after the named day (UTC).
    static func expiry(_ text: Substring) -> UInt64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day), year >= 1970 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day)
        guard calendar.date(from: components) != nil, let start = calendar.date(from: components),
              calendar.component(.day, from: start) == day else { return nil }
        return UInt64(start.timeIntervalSince1970) + 86_400
    }
}
