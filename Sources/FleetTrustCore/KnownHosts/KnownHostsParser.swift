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

    /// `sshkey_read`'s checks: a known type name whose blob encodes that very type, parsed into
    /// its canonical encoding (`HostKey`), RSA under 1024 bits refused (`sshkey_check_rsa_length`).
    static func readKey(typeName: String, blob: [UInt8]) -> RecordedKey? {
        if let key = try? HostKey(type: typeName, blob: blob) {
            if key.kind.plain == .rsa && key.bits < 1024 { return nil }
            if key.isCertificate {
                guard let certificate = try? HostCertificate(key),
                      [nil, .notHostCertificate].contains(CertificateAcceptance.invalidity(of: certificate)) else { return nil }
            }
            return .key(key)
        }
        return SecurityKeyBlob.canonical(typeName: typeName, blob: blob).map { .opaque(type: typeName, blob: $0) }
    }
}

/// Security-key (FIDO) public keys, which OpenSSH reads in known_hosts although no
/// server offers them as host keys. A line holding one is valid and counts as another key,
/// compared in its canonical encoding as any other key.
enum SecurityKeyBlob {
    /// The blob OpenSSH would write for the key `blob` encodes, or nil when `sshkey_read` refuses it.
    static func canonical(typeName: String, blob: [UInt8]) -> [UInt8]? {
        var reader = SSHWireReader(blob)
        var writer = SSHWireWriter()
        guard let raw = try? reader.readString(limit: 128), let name = try? KeyBlobParser.cString(raw, field: "key type"),
              name.0 == typeName else { return nil }
        writer.writeString(typeName)
        switch typeName {
        case "sk-ssh-ed25519@openssh.com":
            guard let point = try? reader.readString(limit: 64), point.count == 32 else { return nil }
            writer.writeString(point)
        case "sk-ecdsa-sha2-nistp256@openssh.com":
            guard let curve = try? reader.readString(limit: 64), let curveName = try? KeyBlobParser.cString(curve, field: "curve"),
                  curveName.0 == "nistp256", let point = try? reader.readString(limit: ECPublicPoint.maximumLength),
                  (try? ECPublicPoint.validate(point, curve: .p256)) != nil else { return nil }
            writer.writeString("nistp256")
            writer.writeString(point)
        default:
            return nil
        }
        guard let application = try? reader.readString(limit: 1 << 16),
              let text = try? KeyBlobParser.cString(application, field: "application"), reader.isAtEnd else { return nil }
        writer.writeString(text.1 ? application : Array(application.dropLast()))
        return writer.bytes == blob ? blob : writer.bytes
    }
}
