import COpenSSL

/// Message digests through OpenSSL, for fingerprints and hashed host names.
public enum Digest {
    public static func sha256(_ data: [UInt8]) -> [UInt8] { run(EVP_sha256(), data, 32) }
    public static func sha1(_ data: [UInt8]) -> [UInt8] { run(EVP_sha1(), data, 20) }
    public static func md5(_ data: [UInt8]) -> [UInt8] { run(EVP_md5(), data, 16) }
    public static func sha384(_ data: [UInt8]) -> [UInt8] { run(EVP_sha384(), data, 48) }
    public static func sha512(_ data: [UInt8]) -> [UInt8] { run(EVP_sha512(), data, 64) }

    private static func run(_ md: OpaquePointer?, _ data: [UInt8], _ size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        _ = data.withUnsafeBufferPointer { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &out, &length, md, nil)
        }
        return out
    }
}
