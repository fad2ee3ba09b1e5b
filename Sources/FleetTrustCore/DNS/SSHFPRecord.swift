/// One SSHFP record (RFC 4255, RFC 6594, RFC 7479): the key algorithm number, the digest type
/// and the digest of a host key's blob. The unit both directions share: what DNS says about a
/// host, and what `scan --format sshfp` prints for the keys a host proved.
public struct SSHFPRecord: Hashable, Sendable, Codable {
    /// 1 RSA, 2 DSA, 3 ECDSA, 4 Ed25519, 6 Ed448 (`dns.c`'s numbers; other values are kept as read).
    public var algorithm: UInt8
    /// 1 SHA-1, 2 SHA-256.
    public var digestType: UInt8
    public var digest: [UInt8]

    public init(algorithm: UInt8, digestType: UInt8, digest: [UInt8]) {
        self.algorithm = algorithm
        self.digestType = digestType
        self.digest = digest
    }

    /// The records `ssh-keygen -r` prints for a key, in its order (SHA-1, then SHA-256); a
    /// certificate stands for the key it certifies, as `ssh` downgrades it before asking DNS.
    /// Empty for a key type SSHFP has no number for (security keys), as `ssh-keygen` prints none.
    public static func records(for key: HostKey) -> [SSHFPRecord] {
        guard let algorithm = algorithmNumber(key.kind.plain) else { return [] }
        let blob = key.fingerprintedBlob
        return [SSHFPRecord(algorithm: algorithm, digestType: 1, digest: Digest.sha1(blob)),
                SSHFPRecord(algorithm: algorithm, digestType: 2, digest: Digest.sha256(blob))]
    }

    /// `dns.c`'s `dns_read_key`: the algorithm number of a plain key type.
    static func algorithmNumber(_ type: KeyType) -> UInt8? {
        switch type {
        case .rsa: return 1
        case .dsa: return 2
        case .ecdsaP256, .ecdsaP384, .ecdsaP521: return 3
        case .ed25519: return 4
        default: return nil
        }
    }

    /// The digest in lower-case hex, as zone files and `ssh-keygen -r` write it.
    public var hexDigest: String {
        digest.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    /// The zone-file line `ssh-keygen -r NAME` prints: `NAME IN SSHFP ALG TYPE HEX`.
    public func zoneLine(owner: String) -> String {
        "\(owner) IN SSHFP \(algorithm) \(digestType) \(hexDigest)"
    }
}
