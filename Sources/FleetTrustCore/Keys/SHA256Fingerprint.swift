/// A SHA-256 digest as a value: 32 bytes, compared and hashed as four words.
///
/// Fingerprints and pins are compared by the million in a large fleet (pins, history, shared
/// keys); bytes compare exactly where two spellings of one text (with or without `SHA256:`, with
/// or without `=` padding) would not. The text forms are made only at the edge.
public struct SHA256Digest: Hashable, Sendable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// nil unless `bytes` holds exactly 32 bytes.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        func word(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        words = (word(0), word(8), word(16), word(24))
    }

    /// One array, written in place: every fingerprint's text is made from these bytes.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)) { Array($0) }
    }

    public static func == (a: SHA256Digest, b: SHA256Digest) -> Bool { a.words == b.words }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0); hasher.combine(words.1); hasher.combine(words.2); hasher.combine(words.3)
    }
}

/// An OpenSSH SHA-256 key fingerprint: the digest of a key's blob (for a certificate, of the key
/// it certifies). Its text is `SHA256:` + 43 unpadded base64 characters, exactly as
/// `ssh-keygen -lf` prints it, and is made only by `description`.
public struct SHA256Fingerprint: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let digest: SHA256Digest

    public init(digest: SHA256Digest) {
        self.digest = digest
    }

    /// `SHA256:` + 43 unpadded base64 characters, as `ssh-keygen -lf` prints it.
    public var description: String { "SHA256:" + Base64.encode(digest.bytes, padded: false) }

    /// The fingerprint of a blob (what `ssh-keygen -l` hashes).
    public init(of blob: [UInt8]) {
        self.init(digest: SHA256Digest(Digest.sha256(blob))!)
    }

    /// Parses the text as people write it: `SHA256:` and trailing `=` padding may be left out
    /// or added; nil unless it is the base64 of exactly 32 bytes.
    public init?<S: StringProtocol>(_ text: S) {
        var body = Substring(text)
        if body.hasPrefix("SHA256:") { body = body.dropFirst(7) }
        while body.hasSuffix("=") { body = body.dropLast() }
        guard body.utf8.count == 43, let bytes = OpenSSHBase64.decode(Array(body.utf8) + Array("=".utf8)),
              let digest = SHA256Digest(bytes) else { return nil }
        self.init(digest: digest)
    }

    /// In the order of the text, so sorted lists print as they always did.
    public static func < (a: SHA256Fingerprint, b: SHA256Fingerprint) -> Bool { a.description < b.description }
}

/// A TLS public-key pin: the SHA-256 of a certificate's SubjectPublicKeyInfo. Its text (written
/// after `pin-sha256:` in pin files, as in HPKP) is standard padded base64, made by `description`.
public struct SPKIPin: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let digest: SHA256Digest

    public init(digest: SHA256Digest) {
        self.digest = digest
    }

    /// Standard padded base64, as written after `pin-sha256:`.
    public var description: String { Base64.encode(digest.bytes) }

    /// Parses standard base64 of 32 bytes, its `=` padding optional; nil otherwise.
    public init?<S: StringProtocol>(_ text: S) {
        var body = Substring(text)
        while body.hasSuffix("=") { body = body.dropLast() }
        guard body.utf8.count == 43, let bytes = Base64.decode(body + "="), let digest = SHA256Digest(bytes) else { return nil }
        self.init(digest: digest)
    }

    public static func < (a: SPKIPin, b: SPKIPin) -> Bool { a.description < b.description }
}
