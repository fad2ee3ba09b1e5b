/// Why a `RevokedHostKeys` file could not be used.
///
/// `ssh` fails the connection when it cannot read or parse the file (`sshkey_check_revoked`), so
/// fleettrust must not be quieter: each of these makes a host that names the file an `error`
/// naming it, never `trusted`. Typed, so a caller can tell a missing file from a corrupt KRL.
public struct RevocationListError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Problem: Error, Hashable, Sendable {
        /// The file could not be read (missing, a directory, unreadable, too large).
        case unreadable(String)
        /// The KRL ends inside a field.
        case truncated
        /// A length or count field is larger than the rest of the file, or than the bound fleettrust keeps.
        case oversized
        /// The KRL header says a format version other than 1.
        case unsupportedVersion(UInt32)
        /// A section or certificate subsection of an unknown type (`ssh` refuses these too).
        case unknownSection(UInt8)
        /// Bytes left over inside a section, a bad hash length, a serial of 0, a range whose low end
        /// is above its high end, a bitmap that wraps, a negative bitmap, a NUL in a string.
        case malformed(String)
        /// A CA or signing key that does not parse as a key.
        case badKey(String)
        /// A signature section whose signature does not verify, or a non-signature section after one.
        case badSignature(String)
        /// Every key that signed the KRL is revoked by it.
        case signersRevoked
        /// A line of a plain key list that is not a public key (`ssh` refuses the whole file).
        case badKeyLine(line: Int, String)
    }

    public let path: String
    public let problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var description: String {
        let place = Sanitizer.clean(path, limit: 400)
        switch problem {
        case .unreadable(let why): return "RevokedHostKeys \(place): \(why)"
        case .truncated: return "RevokedHostKeys \(place): the KRL is truncated"
        case .oversized: return "RevokedHostKeys \(place): a KRL field is larger than the file or the limit"
        case .unsupportedVersion(let version): return "RevokedHostKeys \(place): KRL format version \(version) is not 1"
        case .unknownSection(let type): return "RevokedHostKeys \(place): unknown KRL section type \(type)"
        case .malformed(let why): return "RevokedHostKeys \(place): malformed KRL: \(why)"
        case .badKey(let why): return "RevokedHostKeys \(place): a key in the KRL does not parse: \(Sanitizer.clean(why, limit: 200))"
        case .badSignature(let why): return "RevokedHostKeys \(place): \(why)"
        case .signersRevoked: return "RevokedHostKeys \(place): every key that signed the KRL is revoked by it"
        case .badKeyLine(let line, let why): return "\(place):\(line): not a public key (\(Sanitizer.clean(why, limit: 200)))"
        }
    }
}
