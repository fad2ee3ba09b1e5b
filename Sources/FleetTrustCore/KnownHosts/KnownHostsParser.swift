/// Reads known_hosts bytes into lines with OpenSSH's exact rules
/// (`hostfile.c:hostkeys_foreach_file`, `check_markers`, `sshkey_read`).
///
/// Everything OpenSSH ignores becomes `.invalid(reason)`, never an error: a bad line
/// must not make a whole file unusable, as it does not for `ssh`.
enum KnownHostsParser {
    static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")

    static func parseLine(_ raw: [UInt8]) -> KnownHostsLine.Content {
        let text = raw.prefix { $0 != 0 }
        var i = text.startIndex
        while i < text.endIndex, text[i] == space || text[i] == tab { i += 1 }
        if i == text.endIndex || text[i] == UInt8(ascii: "#") { return .comment }

        var marker: KnownHostsMarker?
        while i < text.endIndex, text[i] == UInt8(ascii: "@") {
            if marker != nil { return .invalid("more than one marker") }
            let rest = text[i...]
            guard let end = rest.firstIndex(of: space) ?? rest.firstIndex(of: tab) else {
                return .invalid("marker not followed by a space")
            }
            let word = String(decoding: text[i..<end], as: UTF8.self)
            guard end - i >= 2, end - i < 32, let known = KnownHostsMarker(rawValue: word) else {
                return .invalid("unknown marker")
            }
            marker = known
            i = end
            while i < text.endIndex, text[i] == space || text[i] == tab { i += 1 }
        }

        let hostStart = i
        while i < text.endIndex, text[i] != space, text[i] != tab { i += 1 }
        let hostBytes = text[hostStart..<i]
        while i < text.endIndex, text[i] == space || text[i] == tab { i += 1 }
        if i == text.endIndex || text[i] == UInt8(ascii: "#") { return .invalid("no key after the host field") }

        let hosts: HostField
        if hostBytes.first == UInt8(ascii: "|") {
            do {
                hosts = .hashed(try HashedHostName(field: hostBytes))
            } catch {
                return .invalid("bad hashed host name")
            }
        } else {
            hosts = .patterns(PatternList(hostBytes))
        }

        let typeStart = i
        while i < text.endIndex, text[i] != space, text[i] != tab { i += 1 }
        if i == text.endIndex { return .invalid("key type without key data") }
        let typeName = String(decoding: text[typeStart..<i], as: UTF8.self)
        while i < text.endIndex, text[i] == space || text[i] == tab { i += 1 }
        if i == text.endIndex { return .invalid("key type without key data") }
        let blobStart = i
        while i < text.endIndex, text[i] != space, text[i] != tab { i += 1 }
        guard let blob = OpenSSHBase64.decode(text[blobStart..<i]) else { return .invalid("key data is not valid base64") }
        while i < text.endIndex, text[i] == space || text[i] == tab { i += 1 }
        let comment = String(decoding: text[i...], as: UTF8.self)

        guard let key = readKey(typeName: typeName, blob: blob) else { return .invalid("not a valid \(Sanitizer.clean(typeName, limit: 64)) key") }
        let publicKey: RecordedKey
        if case .key(let hostKey) = key, hostKey.isCertificate, let certificate = try? HostCertificate(hostKey) {
            publicKey = .key(certificate.key)
        } else {
            publicKey = key
        }
        return .entry(KnownHostsEntry(marker: marker, hosts: hosts, key: key, comment: comment, publicKey: publicKey))
    }

    /// `sshkey_read`'s checks: a known type name whose blob encodes that very type.
    static func readKey(typeName: String, blob: [UInt8]) -> RecordedKey? {
        if let key = try? HostKey(type: typeName, blob: blob) {
            if key.kind.plain == .rsa && key.bits < 1024 { return nil }
            if key.isCertificate {
                guard let certificate = try? HostCertificate(key),
                      [nil, .notHostCertificate].contains(CertificateAcceptance.invalidity(of: certificate)) else { return nil }
            }
            return .key(key)
        }
        return SecurityKeyBlob.isValid(typeName: typeName, blob: blob) ? .opaque(type: typeName, blob: blob) : nil
    }
}

/// Security-key (FIDO) public keys, which OpenSSH reads in known_hosts although no
/// server offers them as host keys. A line holding one is valid and counts as another key.
enum SecurityKeyBlob {
    static func isValid(typeName: String, blob: [UInt8]) -> Bool {
        var reader = SSHWireReader(blob)
        guard let encoded = try? reader.readUTF8(limit: 128), encoded == typeName else { return false }
        switch typeName {
        case "sk-ssh-ed25519@openssh.com":
            guard let point = try? reader.readString(limit: 64), point.count == 32 else { return false }
        case "sk-ecdsa-sha2-nistp256@openssh.com":
            guard let curve = try? reader.readString(limit: 32), curve == Array("nistp256".utf8),
                  let point = try? reader.readString(limit: 256), point.count == 65, point.first == 4 else { return false }
        default:
            return false
        }
        guard (try? reader.readString(limit: 1 << 16)) != nil else { return false }
        return reader.isAtEnd
    }
}
