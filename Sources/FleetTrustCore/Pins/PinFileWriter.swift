import Foundation

/// Adds pins to a pin file with the same guarantees as `KnownHostsWriter`: atomic
/// replacement, every other byte kept, and refusal if the lines for the same patterns
/// changed since the caller read the file.
public struct PinFileWriter: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// What the person saw pinned for a host when deciding: the write is refused unless the file
    /// still pins exactly these fingerprints (in force) for those names (compare-and-set).
    public struct Expectation: Sendable {
        public var names: [String]
        public var pinned: Set<String>
        public var now: UInt64
        /// Compare the TLS SPKI pins in force instead of the SSH fingerprints.
        public var spki: Bool

        public init(names: [String], pinned: Set<String>, now: UInt64 = UInt64(Date().timeIntervalSince1970), spki: Bool = false) {
            self.names = names
            self.pinned = pinned
            self.now = now
            self.spki = spki
        }
    }

    /// Appends `PATTERNS FINGERPRINT... [expires=DATE]` (a fingerprint may be a TLS
    /// `pin-sha256:BASE64`). `basedOn` is the file content the
    /// decision was made on (nil: no check); `expecting` checks the pins for the host instead.
    public func addPin(patterns: String, fingerprints: [String], expires: String? = nil, basedOn: [UInt8]? = nil,
                       expecting: Expectation? = nil) throws {
        let normalised = try fingerprints.map { text -> String in
            if text.hasPrefix("pin-sha256:") {
                guard let pin = SPKIPin(text.dropFirst("pin-sha256:".count)) else {
                    throw PinFileError(path: path, line: 0, reason: "\(Sanitizer.clean(text, limit: 80)) is not a pin-sha256:BASE64 pin")
                }
                return "pin-sha256:" + pin.description
            }
            guard let fingerprint = SHA256Fingerprint(text) else {
                throw PinFileError(path: path, line: 0, reason: "\(Sanitizer.clean(text, limit: 80)) is not a SHA256 fingerprint")
            }
            return fingerprint.description
        }
        guard !patterns.isEmpty, !patterns.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "#" }) else {
            throw PinFileError(path: path, line: 0, reason: "host patterns cannot contain spaces or #")
        }
        if let expires, PinFileParser.expiry(Substring(expires)) == nil {
            throw PinFileError(path: path, line: 0, reason: "expiry \(Sanitizer.clean(expires, limit: 40)) is not a date YYYY-MM-DD")
        }
        guard !normalised.isEmpty else { throw PinFileError(path: path, line: 0, reason: "a pin needs at least one fingerprint") }
        let line = ([patterns] + normalised + (expires.map { ["expires=\($0)"] } ?? [])).joined(separator: " ") + "\n"
        try GuardedFile(path: path).update { bytes in
            if let basedOn, basedOn != bytes, Self.linesFor(patterns, basedOn) != Self.linesFor(patterns, bytes) {
                throw PinFileError(path: path, line: 0, reason: "the pins for \(Sanitizer.clean(patterns, limit: 80)) changed since the file was read")
            }
            if let expecting {
                let current = PinSet(path: path, bytes: bytes).lines(for: expecting.names).filter { !$0.isExpired(at: expecting.now) }
                    .reduce(into: Set<String>()) { $0.formUnion(expecting.spki ? $1.spkiPins.map(\.description) : $1.fingerprints.map(\.description)) }
                guard current == expecting.pinned else {
                    throw PinFileError(path: path, line: 0, reason: "the pins for \(Sanitizer.clean(patterns, limit: 80)) changed since they were shown; nothing was written")
                }
            }
            return KnownHostsEdit.terminated(bytes) + Array(line.utf8)
        }
    }

    static func linesFor(_ patterns: String, _ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(separator: 0x0a).filter { $0.starts(with: Array((patterns + " ").utf8)) || $0.starts(with: Array((patterns + "\t").utf8)) }
    }
}
