import COpenSSL
import Glibc

/// A hashed host field, `|1|<base64 salt>|<base64 HMAC-SHA1(salt, name)>` (`hostfile.c`).
///
/// OpenSSH re-hashes the lookup string with the line's salt and compares the re-encoded
/// text with the entire field. The HMAC key schedule is precomputed once per line, so a
/// lookup costs two SHA-1 compressions and a bulk check of many names stays cheap.
public struct HashedHostName: Sendable, Hashable {
    public static let magic = "|1|"
    public let salt: [UInt8]
    /// The HMAC the field records, or nil when the field is not the canonical encoding of
    /// one (OpenSSH's text comparison can then never succeed).
    let expected: [UInt8]?
    let hmac: HMACSHA1Key

    public enum Invalid: Error, Equatable, Sendable {
        case badMagic, missingSaltEnd, badSalt
    }

    /// Parses a host field that starts with `|`; throws for lines OpenSSH ignores.
    init(field: ArraySlice<UInt8>) throws {
        let magic = Array(HashedHostName.magic.utf8)
        guard field.count >= magic.count, field.prefix(magic.count).elementsEqual(magic) else { throw Invalid.badMagic }
        let rest = field.dropFirst(magic.count)
        guard let end = rest.firstIndex(of: UInt8(ascii: "|")) else { throw Invalid.missingSaltEnd }
        let saltText = rest[rest.startIndex..<end]
        guard !saltText.isEmpty, saltText.count <= 1024,
              let salt = OpenSSHBase64.decode(saltText), salt.count == 20 else { throw Invalid.badSalt }
        self.salt = salt
        self.hmac = HMACSHA1Key(salt)
        let hashText = rest[(end + 1)...]
        if let hash = OpenSSHBase64.decode(hashText), hash.count == 20,
           Array(field) == Array(HashedHostName.encode(salt: salt, hash: hash).utf8) {
            self.expected = hash
        } else {
            self.expected = nil
        }
    }

    /// A fresh entry for `name` (the exact lookup string) with a random 20-byte salt.
    public init(hashing name: String) throws {
        var salt = [UInt8](repeating: 0, count: 20)
        guard RAND_bytes(&salt, 20) == 1 else { throw RandomFailure() }
        self.salt = salt
        self.hmac = HMACSHA1Key(salt)
        self.expected = hmac.authenticate(Array(name.utf8))
    }

    public struct RandomFailure: Error, CustomStringConvertible {
        public var description: String { "the system random generator failed" }
    }

    /// The field text, as OpenSSH writes it.
    public var field: String { HashedHostName.encode(salt: salt, hash: expected ?? []) }

    /// Whether `name` (the exact lookup string, not lowercased here) is the hashed name.
    public func matches(_ name: [UInt8]) -> Bool {
        name.withUnsafeBytes { matches($0) }
    }

    func matches(_ name: UnsafeRawBufferPointer) -> Bool {
        guard let expected else { return false }
        return expected.withUnsafeBytes { wanted in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digest in
                hmac.authenticate(name, into: digest.baseAddress!)
                return memcmp(digest.baseAddress!, wanted.baseAddress!, 20) == 0
            }
        }
    }

    public func matches(_ name: String) -> Bool { matches(Array(name.utf8)) }

    static func encode(salt: [UInt8], hash: [UInt8]) -> String {
        magic + Base64.encode(salt) + "|" + Base64.encode(hash)
    }

    public static func == (a: HashedHostName, b: HashedHostName) -> Bool { a.salt == b.salt && a.expected == b.expected }
    public func hash(into hasher: inout Hasher) { hasher.combine(salt); hasher.combine(expected) }
}

/// HMAC-SHA1 with the key schedule done once: the SHA-1 chaining values after the inner and
/// outer padded keys (20 bytes each, not two 96-byte `SHA_CTX`), so a hashed line of a
/// 200,000-line file costs little memory. A context is rebuilt from them per message: the
/// values, and a length of one 64-byte block already hashed (OpenSSL's `SHA_CTX` fields).
struct HMACSHA1Key: Sendable {
    typealias Chain = (UInt32, UInt32, UInt32, UInt32, UInt32)
    private let inner: Chain
    private let outer: Chain

    init(_ key: [UInt8]) {
        var block = [UInt8](repeating: 0, count: 64)
        let material = key.count > 64 ? Digest.sha1(key) : key
        for (i, byte) in material.enumerated() { block[i] = byte }
        var inner = SHA_CTX(), outer = SHA_CTX()
        SHA1_Init(&inner)
        SHA1_Init(&outer)
        let innerPad = block.map { $0 ^ 0x36 }, outerPad = block.map { $0 ^ 0x5c }
        SHA1_Update(&inner, innerPad, 64)
        SHA1_Update(&outer, outerPad, 64)
        self.inner = (inner.h0, inner.h1, inner.h2, inner.h3, inner.h4)
        self.outer = (outer.h0, outer.h1, outer.h2, outer.h3, outer.h4)
    }

    private static func context(_ chain: Chain) -> SHA_CTX {
        var context = SHA_CTX()
        (context.h0, context.h1, context.h2, context.h3, context.h4) = chain
        context.Nl = 512
        return context
    }

    func authenticate(_ message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        message.withUnsafeBytes { bytes in digest.withUnsafeMutableBufferPointer { authenticate(bytes, into: $0.baseAddress!) } }
        return digest
    }

    /// Writes the 20-byte HMAC of `message` to `digest`; no allocation.
    func authenticate(_ message: UnsafeRawBufferPointer, into digest: UnsafeMutablePointer<UInt8>) {
        var context = HMACSHA1Key.context(inner)
        SHA1_Update(&context, message.baseAddress, message.count)
        SHA1_Final(digest, &context)
        var outerContext = HMACSHA1Key.context(outer)
        SHA1_Update(&outerContext, digest, 20)
        SHA1_Final(digest, &outerContext)
    }
}

/// A hashed line reduced to what matching needs: its HMAC key schedule and the expected
/// digest as five words (64 bytes in all, so 100,000 hashed lines take 6.4 MB), so checking a
/// name costs two SHA-1 compressions and no allocation.
struct HashedLine: Sendable {
    let line: Int32
    let key: HMACSHA1Key
    let expected: HMACSHA1Key.Chain

    init?(line: Int, name: HashedHostName) {
        guard let digest = name.expected, digest.count == 20 else { return nil }
        self.line = Int32(line)
        self.key = name.hmac
        self.expected = digest.withUnsafeBytes { HashedLine.words($0.baseAddress!) }
    }

    func matches(_ name: UnsafeRawBufferPointer, digest: UnsafeMutablePointer<UInt8>) -> Bool {
        key.authenticate(name, into: digest)
        let got = HashedLine.words(UnsafeRawPointer(digest))
        return got.0 == expected.0 && got.1 == expected.1 && got.2 == expected.2 && got.3 == expected.3 && got.4 == expected.4
    }

    private static func words(_ raw: UnsafeRawPointer) -> HMACSHA1Key.Chain {
        (raw.loadUnaligned(fromByteOffset: 0, as: UInt32.self), raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self),
         raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self), raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self),
         raw.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
    }
}
