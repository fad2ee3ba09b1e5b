/// One `RevokedHostKeys` file, parsed: a KRL (`ssh-keygen -k`) or a plain list of public keys.
///
/// `ssh` consults this file before known_hosts and refuses a key it revokes whatever known_hosts
/// says (`sshconnect.c:verify_host_key`, `krl.c:ssh_krl_check_key`, `authfile.c:sshkey_in_file`),
/// so it is judged as a revocation like a `@revoked` line. Keys are compared through their
/// fingerprints (SHA-256 of the plain key blob), as OpenSSH compares the parsed keys.
public struct RevocationList: Hashable, Sendable {
    /// Which of the two forms `ssh` accepts the file was.
    public enum Form: String, Hashable, Sendable {
        case krl
        case keyList = "key-list"
    }

    /// What in the file revoked a key.
    public enum Match: Hashable, Sendable {
        /// A plain list's line naming the key (or, for a certificate, its CA).
        case listedKey(line: Int)
        /// A KRL's explicit key section.
        case explicitKey
        case sha1
        case sha256
        /// A KRL's certificate section: by serial, or by key id.
        case serial(UInt64)
        case keyID(String)
    }

    /// A key the file revokes: how, and whether the revoked key is the certificate's CA.
    public struct Revocation: Hashable, Sendable {
        public let path: String
        public let match: Match
        /// The key the file names: the presented key (for a certificate, the key it certifies), or its CA.
        public let revokedKey: HostKey
        public let isCertificateAuthority: Bool
    }

    /// Certificates revoked for one CA (or, with a nil CA, for any CA).
    struct CertificateRevocations: Hashable, Sendable {
        /// Merged, sorted, disjoint serial ranges.
        var serials: [ClosedRange<UInt64>] = []
        var keyIDs: Set<String> = []

        func revokes(_ certificate: HostCertificate) -> Match? {
            if keyIDs.contains(certificate.keyID) { return .keyID(certificate.keyID) }
            // A zero serial is what a CA writes when it sets none: `ssh` never revokes it by serial.
            guard certificate.serial != 0 else { return nil }
            var low = 0, high = serials.count
            while low < high {
                let middle = low + (high - low) / 2
                if serials[middle].upperBound < certificate.serial { low = middle + 1 } else { high = middle }
            }
            return low < serials.count && serials[low].contains(certificate.serial) ? .serial(certificate.serial) : nil
        }
    }

    public let path: String
    public let form: Form
    /// SHA-256 of each plain key blob the file names explicitly (KRL) or lists (key list), with its line.
    let keyDigests: [[UInt8]: Int]
    let sha1s: Set<[UInt8]>
    let sha256s: Set<[UInt8]>
    /// By the SHA-256 of the CA key blob; nil: for any CA.
    let certificates: [[UInt8]?: CertificateRevocations]

    init(path: String, form: Form, keyDigests: [[UInt8]: Int] = [:], sha1s: Set<[UInt8]> = [], sha256s: Set<[UInt8]> = [],
         certificates: [[UInt8]?: CertificateRevocations] = [:]) {
        self.path = path
        self.form = form
        self.keyDigests = keyDigests
        self.sha1s = sha1s
        self.sha256s = sha256s
        self.certificates = certificates
    }

    /// Parses the bytes of a `RevokedHostKeys` file: a KRL when it starts with the KRL magic,
    /// else a list of public keys, as `sshkey_check_revoked` decides.
    public static func parse(path: String, bytes: [UInt8]) throws(RevocationListError) -> RevocationList {
        if bytes.starts(with: KRLParser.magic) {
            var parser = KRLParser(path: path, bytes: bytes)
            return try parser.parse()
        }
        return try parseKeyList(path: path, bytes: bytes)
    }

    /// Reads and parses `path`; every failure is a `RevocationListError` naming the file.
    public static func read(path: String) throws(RevocationListError) -> RevocationList {
        let bytes: [UInt8]
        do {
            bytes = try InputFile.read(path, role: "RevokedHostKeys file", limit: maximumFileSize, text: false)
        } catch {
            throw RevocationListError(path: path, problem: .unreadable(error.problem))
        }
        return try parse(path: path, bytes: bytes)
    }

    /// Far above any KRL `ssh-keygen` writes for a real fleet; a larger file is refused, not skimmed.
    public static let maximumFileSize = 16 << 20

    /// The revocation of `key`, if the file revokes it: the key itself (a certificate by the key
    /// it certifies, its serial or key id), then a certificate's CA, in `ssh_krl_check_key`'s order.
    public func revocation(of key: HostKey) -> Revocation? {
        let certificate = key.isCertificate ? try? HostCertificate(key) : nil
        let plain = certificate?.key ?? key
        if let match = revokes(plain: plain, certificate: certificate) {
            return Revocation(path: path, match: match, revokedKey: plain, isCertificateAuthority: false)
        }
        if let authority = certificate?.signatureKey, let match = revokes(plain: authority, certificate: nil) {
            return Revocation(path: path, match: match, revokedKey: authority, isCertificateAuthority: true)
        }
        return nil
    }

    private func revokes(plain: HostKey, certificate: HostCertificate?) -> Match? {
        let blob = plain.fingerprintedBlob
        if sha1s.contains(Digest.sha1(blob)) { return .sha1 }
        let digest = Digest.sha256(blob)
        if sha256s.contains(digest) { return .sha256 }
        if let line = keyDigests[digest] { return form == .krl ? .explicitKey : .listedKey(line: line) }
        guard let certificate else { return nil }
        return certificates[Digest.sha256(certificate.signatureKey.blob)]?.revokes(certificate)
            ?? certificates[nil]?.revokes(certificate)
    }

    /// `sshkey_in_file`: one public key a line; blank lines and `#` comments skipped; an RSA key
    /// `ssh` finds too short is skipped; any other line that is not a key fails the whole file.
    static func parseKeyList(path: String, bytes: [UInt8]) throws(RevocationListError) -> RevocationList {
        var digests: [[UInt8]: Int] = [:]
        for (index, raw) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            // getline() then C strings: a NUL ends the line.
            let line = raw.prefix { $0 != 0 }.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            guard let first = line.first, first != UInt8(ascii: "#") else { continue }
            let key: HostKey
            do {
                key = try HostKey(openSSHLine: Substring(decoding: line, as: UTF8.self))
            } catch {
                throw RevocationListError(path: path, problem: .badKeyLine(line: index + 1, "\(error)"))
            }
            if key.kind.plain == .rsa && (try? HostCertificate(key))?.key.bits ?? key.bits < 1024 { continue }
            let digest = Digest.sha256(key.fingerprintedBlob)
            if digests[digest] == nil { digests[digest] = index + 1 }
        }
        return RevocationList(path: path, form: .keyList, keyDigests: digests)
    }
}
