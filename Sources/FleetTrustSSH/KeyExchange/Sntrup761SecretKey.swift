/// An sntrup761 secret key decoded once for every ciphertext it will open: its key pair serves
/// several exchanges (`EphemeralKeyLifetime`), and decoding the public key inside it (h, the
/// radix encoding of 761 numbers mod q) alone was a sixth of a decapsulation's CPU.
///
/// Fields as the secret key lays them out (`Sntrup761`): small f, small 1/g mod 3, the public
/// key (kept decoded as h for re-encryption), rho (the implicit rejection's secret) and
/// Hash4(public key).
struct Sntrup761SecretKey: Sendable {
    let f: [Int8]
    let gInverse: [Int8]
    let h: [Int16]
    let rho: [UInt8]
    let publicKeyHash: [UInt8]

    /// The key in `bytes`; nil for a secret key of the wrong length.
    init?(_ bytes: [UInt8]) {
        guard bytes.count == Sntrup761.secretKeyBytes else { return nil }
        let small = Sntrup761.smallBytes, publicKeyEnd = 2 * small + Sntrup761.publicKeyBytes
        f = Sntrup761Encoding.decodeSmall(bytes[0..<small])
        gInverse = Sntrup761Encoding.decodeSmall(bytes[small..<2 * small])
        h = Sntrup761Encoding.decodeRq(Array(bytes[2 * small..<publicKeyEnd]))
        rho = Array(bytes[publicKeyEnd..<publicKeyEnd + small])
        publicKeyHash = Array(bytes[(Sntrup761.secretKeyBytes - 32)...])
    }
}
