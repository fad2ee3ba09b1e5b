/// A pinned key's OpenSSH SHA-256 fingerprint, always written `SHA256:` + 43 base64 characters.
///
/// Accepted with or without the `SHA256:` prefix (as SSHKit does) and with a trailing `=`,
/// and normalised, so that a pin compares equal to `HostKey.sha256Fingerprint`.
public struct PinFingerprint: Hashable, Sendable, CustomStringConvertible {
    public let text: String
    public var description: String { text }

    static let base64Alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    /// The last of 43 characters carries 2 bits beyond the 32 bytes; they must be zero.
    static let lastCharacters = Set("AEIMQUYcgkosw048".utf8)

    /// Parses one fingerprint; the error is a message without a location.
    public static func parse<S: StringProtocol>(_ input: S) -> Result<PinFingerprint, PinFileError.Reason> {
        var body = Substring(input)
        for prefix in ["SHA256:", "sha256:"] where body.hasPrefix(prefix) {
            body = body.dropFirst(prefix.count)
        }
        if body.hasPrefix("MD5:") || body.utf8.filter({ $0 == UInt8(ascii: ":") }).count >= 15 {
            return .failure(.md5Fingerprint)
        }
        if body.hasSuffix("=") { body = body.dropLast() }
        let bytes = Array(body.utf8)
        guard bytes.count == 43, bytes.allSatisfy(base64Alphabet.contains), lastCharacters.contains(bytes[42]) else {
            return .failure(.badFingerprint(String(decoding: bytes.prefix(60), as: UTF8.self)))
        }
        return .success(PinFingerprint(text: "SHA256:" + String(decoding: bytes, as: UTF8.self)))
    }

    /// The pin form of a key's fingerprint (`HostKey.sha256Fingerprint`).
    public init(key: HostKey) { text = key.sha256Fingerprint }

    private init(text: String) { self.text = text }
}
