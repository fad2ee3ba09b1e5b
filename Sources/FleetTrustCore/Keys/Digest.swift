import COpenSSL

/// Message digests through OpenSSL, for fingerprints and hashed host names.
///
/// Each algorithm is fetched from OpenSSL once: OpenSSL 3 looks a legacy `EVP_sha256()` up in
/// its provider store (name maps, locks) on every use, which a scan pays several times per
/// handshake. A fetched `EVP_MD` is immutable and safe to share between threads.
public enum Digest {
    public static func sha256(_ data: [UInt8]) -> [UInt8] { run(fetchedSHA256, data, 32) }
    public static func sha1(_ data: [UInt8]) -> [UInt8] { run(fetchedSHA1, data, 20) }
    public static func md5(_ data: [UInt8]) -> [UInt8] { run(fetchedMD5, data, 16) }
    public static func sha384(_ data: [UInt8]) -> [UInt8] { run(fetchedSHA384, data, 48) }
    public static func sha512(_ data: [UInt8]) -> [UInt8] { run(fetchedSHA512, data, 64) }

    /// The algorithms, fetched once for the process's life (never freed); the legacy handle if a fetch fails.
    nonisolated(unsafe) static let fetchedSHA256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()
    nonisolated(unsafe) static let fetchedSHA1: OpaquePointer? = EVP_MD_fetch(nil, "SHA1", nil) ?? EVP_sha1()
    nonisolated(unsafe) static let fetchedMD5: OpaquePointer? = EVP_MD_fetch(nil, "MD5", nil) ?? EVP_md5()
    nonisolated(unsafe) static let fetchedSHA384: OpaquePointer? = EVP_MD_fetch(nil, "SHA384", nil) ?? EVP_sha384()
    nonisolated(unsafe) static let fetchedSHA512: OpaquePointer? = EVP_MD_fetch(nil, "SHA512", nil) ?? EVP_sha512()

    private static func run(_ md: OpaquePointer?, _ data: [UInt8], _ size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        _ = data.withUnsafeBufferPointer { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &out, &length, md, nil)
        }
        return out
    }
}
