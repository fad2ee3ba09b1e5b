import Foundation

/// A team's pin file: which host keys a host must present, whatever known_hosts says.
///
/// Format (one pin line per host pattern list; `#` starts a comment line; blank lines ignored):
///
///     PATTERNS FINGERPRINT [FINGERPRINT...] [expires=YYYY-MM-DD]
///
/// - `PATTERNS`: a comma-separated host pattern list exactly as in known_hosts: `*` and `?`
///   wildcards, `!pattern` to exclude, `[host]:port` for a non-standard port; names compare
///   case-insensitively.
/// - `FINGERPRINT`: an OpenSSH SHA-256 fingerprint as `ssh-keygen -lf` prints it,
///   `SHA256:` + 43 base64 characters; the prefix may be left out. Several fingerprints (on
///   one line or on several lines matching the host) form a set: the host must present one
///   of them, so a current and a next key can be pinned together for rotation.
/// - `expires=YYYY-MM-DD`: the pin binds through that day (UTC) and no longer after it; a
///   host whose only pins have expired is reported as `expired`, not enforced.
///
/// Fields are separated by spaces or tabs; CRLF line ends are accepted. A bad line is
/// reported as `file:line: message` and skipped; the rest of the file still applies.
public struct PinFile: Sendable {
    public var path: String
    public var pins: [Pin]
    public var errors: [PinFileError]

    /// Parses any bytes without failing; problems are collected in `errors`.
    public init(path: String, bytes: [UInt8]) {
        self.path = path
        pins = []
        errors = []
        for (number, line) in PinLine.split(bytes).enumerated() {
            switch PinLine.parse(line, path: path, line: number + 1) {
            case .none: continue
            case .pin(let pin): pins.append(pin)
            case .error(let error): errors.append(error)
            }
        }
    }

    public static func load(path: String) throws -> PinFile {
        let snapshot = try GuardedFile(path: path).read()
        guard snapshot.exists else { throw StoreError.missingFile(path: path) }
        return PinFile(path: path, bytes: snapshot.bytes)
    }
}

/// One pin line: the hosts it covers and the fingerprints they may present.
public struct Pin: Hashable, Sendable {
    public var patterns: String
    public var fingerprints: [PinFingerprint]
    /// Last day (UTC) on which the pin binds.
    public var expires: PinDate?
    public var file: String
    public var line: Int

    public var location: String { "\(file):\(line)" }
}

/// A calendar day, as written in `expires=`.
public struct PinDate: Hashable, Sendable, CustomStringConvertible {
    public var year: Int, month: Int, day: Int

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Whether `now` is after the end of this day, UTC.
    public func hasPassed(at now: Date) -> Bool {
        Int((now.timeIntervalSince1970 / 86_400).rounded(.down)) > dayNumber
    }

    public var description: String {
        func pad(_ n: Int, _ width: Int) -> String { String(repeating: "0", count: max(0, width - String(n).count)) + String(n) }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    static func parse(_ text: Substring) -> PinDate? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1...12).contains(m) else { return nil }
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
        guard (1...days).contains(d) else { return nil }
        return PinDate(year: y, month: m, day: d)
    }
}

/// A problem on one line of a pin file; prints as `file:line: message`.
public struct PinFileError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Error, Hashable, Sendable, CustomStringConvertible {
        case noFingerprint
        case badFingerprint(String)
        case md5Fingerprint
        case badExpiry(String)
        case repeatedExpiry
        case notUTF8
        case controlCharacter

        public var description: String {
            switch self {
            case .noFingerprint: return "a pin needs host patterns and at least one fingerprint"
            case .badFingerprint(let f): return "not a SHA256 fingerprint (SHA256: and 43 base64 characters): \(Sanitizer.clean(f))"
            case .md5Fingerprint: return "MD5 fingerprints are not accepted; use the SHA256 one (ssh-keygen -lf)"
            case .badExpiry(let e): return "expiry must be expires=YYYY-MM-DD, a real date: \(Sanitizer.clean(e))"
            case .repeatedExpiry: return "more than one expires= on the line"
            case .notUTF8: return "line is not valid UTF-8"
            case .controlCharacter: return "line contains a control character"
            }
        }
    }

    public var file: String
    public var line: Int
    public var reason: Reason

    public var description: String { "\(file):\(line): \(reason)" }
}
