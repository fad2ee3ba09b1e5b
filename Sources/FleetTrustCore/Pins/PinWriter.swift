/// Adds pins to a pin file through `GuardedFile`, changing nothing but the pin it adds.
///
/// A valid line whose pattern field is exactly the given pattern list is extended in place
/// (the new fingerprints go after its last fingerprint, before `expires=` or any trailing
/// bytes); otherwise one line is appended. Adding is merged into whatever the file holds
/// at write time, so concurrent additions by other processes are all kept.
public struct PinWriter: Sendable {
    public enum EditError: Error, Equatable, Sendable, CustomStringConvertible {
        case invalidPatterns(String)

        public var description: String {
            switch self {
            case .invalidPatterns(let p): return "cannot pin \"\(Sanitizer.clean(p))\": host patterns must be one field without spaces, not starting with #"
            }
        }
    }

    public var file: GuardedFile

    public init(path: String) { file = GuardedFile(path: path) }

    /// Pins `fingerprints` for `patterns`; returns the saved file's content.
    @discardableResult
    public func add(_ fingerprints: [PinFingerprint], forPatterns patterns: String) throws -> FileSnapshot {
        guard !patterns.isEmpty, !patterns.hasPrefix("#"),
              !patterns.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7f }) else {
            throw EditError.invalidPatterns(patterns)
        }
        let snapshot = try file.read()
        return try file.update(from: snapshot) { _, current in
            Self.adding(fingerprints, forPatterns: patterns, to: current, path: file.path)
        }
    }

    /// The pure edit behind `add`: `bytes` with the pins added, every other byte kept.
    public static func adding(_ fingerprints: [PinFingerprint], forPatterns patterns: String, to bytes: [UInt8],
                              path: String) -> [UInt8] {
        for (number, line) in PinLine.split(bytes).enumerated() {
            guard case .pin(let pin) = PinLine.parse(line, path: path, line: number + 1),
                  pin.patterns == patterns else { continue }
            let missing = fingerprints.filter { !pin.fingerprints.contains($0) }
            if missing.isEmpty { return bytes }
            let lastFingerprint = line.fields.dropFirst().last { !line.text($0).hasPrefix("expires=") }!
            var result = bytes
            result.insert(contentsOf: missing.flatMap { Array(" \($0.text)".utf8) }, at: lastFingerprint.upperBound)
            return result
        }
        var result = bytes
        if let last = result.last, last != UInt8(ascii: "\n") { result.append(UInt8(ascii: "\n")) }
        var unique: [PinFingerprint] = []
        for fingerprint in fingerprints where !unique.contains(fingerprint) { unique.append(fingerprint) }
        result += Array((([patterns] + unique.map(\.text)).joined(separator: " ") + "\n").utf8)
        return result
    }
}
