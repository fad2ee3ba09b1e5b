import Foundation
import FleetTrustCore
import FleetTrustTestFleet

/// Deterministic generator of known_hosts files that exercise OpenSSH's rules.
struct KnownHostsCaseGenerator {
    let lab: TrustOracleLab
    var random: SeededGenerator

    init(lab: TrustOracleLab, seed: UInt64) {
        self.lab = lab
        self.random = SeededGenerator(seed: seed)
    }

    mutating func next() -> UInt64 { random.next() }

    mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }
    mutating func chance(_ percent: UInt64) -> Bool { next() % 100 < percent }

    static let hosts = ["foo.example", "Foo.Example", "bar.example", "127.1", "127.0.0.1",
                        "0:0:0:0:0:FFFF:127.0.0.1", "2001:DB8::1"]

    mutating func makeCase(id: Int, certificate: Bool) -> TrustDifferentialTests.Case {
        let host = pick(Self.hosts)
        let port = pick([22, 2222, 2222, 22])
        let alias: String? = chance(15) ? pick(["foo.example", "Alias.Example"]) : nil
        let algorithm: String
        let presented: HostKey
        var variant = TrustOracleLab.CertificateVariant.valid
        if certificate {
            algorithm = "ssh-ed25519-cert-v01@openssh.com"
            variant = pick(TrustOracleLab.CertificateVariant.allCases)
            presented = lab.certificates[variant]!
        } else {
            let kind = pick(["ed25519", "ed25519", "ecdsa", "rsa"])
            algorithm = ["ed25519": "ssh-ed25519", "ecdsa": "ecdsa-sha2-nistp256", "rsa": "rsa-sha2-512"][kind]!
            presented = lab.served[kind]!
        }
        let lookupName = alias.map { $0.lowercased() } ?? LookupName.canonicalHost(host)
        let lines = Int(next() % 4) + 1
        var text: [UInt8] = [], global: [UInt8] = []
        for _ in 0..<lines {
            let line = makeLine(name: lookupName, port: alias == nil ? port : 22, presented: presented, certificate: certificate)
            if chance(25) { global += line } else { text += line }
        }
        return TrustDifferentialTests.Case(id: id, text: text, globalText: global, host: host, port: port, alias: alias,
                                           algorithm: algorithm, presented: presented, variant: variant)
    }

    mutating func hostField(name: String, port: Int) -> String {
        let withPort = LookupName.hostPort(name, port: port)
        let upper = name.uppercased()
        switch next() % 30 {
        case 0, 1, 2, 3: return name
        case 4: return upper
        case 5, 6: return "[\(name)]:\(port)"
        case 7: return "[\(name)]:2222"
        case 8: return "[\(name)]:02222"
        case 9: return "x.example,\(name),y.example"
        case 10: return pick(["*.example", "*", "foo.*", "?oo.example", "[*.example]:*", "[foo.example]:22?2", "*:2222", "1*"])
        case 11: return pick(["!\(name),*", "*,!\(name)", "!other.example,*", "!\(name)", "!\(withPort),*"])
        case 12, 13: return hashed(name)
        case 14, 15: return hashed(withPort)
        case 16: return hashed(upper)
        case 17: return pick(["|2|" + String(hashed(name).dropFirst(3)), "|1|c2hvcnQ=|" + String(hashed(name).suffix(28)),
                              hashed(name) + "," + name, "|1|", "|1|nosalt"])
        case 18: return "other.example"
        case 19: return pick([name + "," + String(repeating: "a", count: 1023), name + "," + String(repeating: "a", count: 1022),
                              "!" + String(repeating: "b", count: 1023) + "," + name])
        case 20: return pick([name + "#x", "foo#x", "\(name),,\(withPort)"])
        case 21: return pick(["alias.example", "[alias.example]:\(port)"])
        case 22, 23: return withPort
        default: return pick([name, withPort, "\(name),\(withPort)"])
        }
    }

    func hashed(_ name: String) -> String { (try? HashedHostName(hashing: name).field) ?? "|1|" }

    mutating func keyText(presented: HostKey, certificate: Bool) -> String {
        let plain = certificate ? (try! HostCertificate(presented)).key : presented
        switch next() % 20 {
        case 0, 1, 2, 3, 4, 5: return plain.openSSHLine
        case 6: return lab.served["ed25519"]!.openSSHLine
        case 7: return lab.spare["ed25519"]!.openSSHLine
        case 8: return lab.spare["ecdsa384"]!.openSSHLine
        case 9: return pick([lab.spare["rsa"]!.openSSHLine, lab.served["rsa"]!.openSSHLine, lab.served["ecdsa"]!.openSSHLine])
        case 10, 11: return lab.authority.openSSHLine
        case 12: return pick([lab.otherAuthority.openSSHLine, lab.rsaAuthority.openSSHLine])
        case 13: return pick([lab.certificates[.valid]!.openSSHLine, presented.openSSHLine])
        case 14: return pick([lab.spare["dsa"]!.openSSHLine, securityKeyLine, forgedCertificateLine, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMq", "ssh-rsa " + plain.base64, "ssh-ed25519",
                              "ssh-ed25519 " + plain.base64.replacingOccurrences(of: "=", with: ""),
                              "SSH-ED25519 " + plain.base64])
        case 15: return plain.openSSHLine + " comment here"
        case 16: return pick(["rsa-sha2-512 " + lab.served["rsa"]!.base64, plain.type + "  \t " + plain.base64])
        default: return pick([plain.openSSHLine, lab.authority.openSSHLine])
        }
    }

    /// A FIDO key line: OpenSSH reads it (so it is "another key"), though no server offers one.
    var securityKeyLine: String {
        var writer = SSHWireWriter()
        writer.writeString("sk-ssh-ed25519@openssh.com")
        writer.writeString(Array(lab.spare["ed25519"]!.blob.suffix(32)))
        writer.writeString("ssh:")
        return "sk-ssh-ed25519@openssh.com " + Base64.encode(writer.bytes)
    }

    /// The valid certificate with one signature byte flipped: OpenSSH ignores the line.
    var forgedCertificateLine: String {
        var blob = lab.certificates[.valid]!.blob
        blob[blob.count - 3] ^= 0x01
        return "ssh-ed25519-cert-v01@openssh.com " + Base64.encode(blob)
    }

    mutating func makeLine(name: String, port: Int, presented: HostKey, certificate: Bool) -> [UInt8] {
        let ending = chance(15) ? "\r\n" : "\n"
        switch next() % 25 {
        case 0: return Array(pick(["# a comment", "", "   ", "\t# indented"]).utf8) + Array(ending.utf8)
        // Not "name\0 key": OpenSSH 9.2 reads past the NUL that ends a host-only line (the
        // bug fixed in 10.1 that the spec says not to copy); a NUL after the key is fine.
        case 1: return Array((name + " " + presented.openSSHLine + "\0 x").utf8) + Array(ending.utf8)
        case 2: return Array((hostField(name: name, port: port) + " " + keyText(presented: presented, certificate: certificate) + "\0junk").utf8) + Array(ending.utf8)
        case 3: return Array(hostField(name: name, port: port).utf8) + Array(ending.utf8)
        default: break
        }
        if certificate, chance(50) {
            let authority = pick([lab.authority, lab.authority, lab.authority, lab.otherAuthority, lab.rsaAuthority])
            let prefix = pick(["@cert-authority ", "@cert-authority ", "@revoked ", "@cert-authority\t"])
            return Array((prefix + hostField(name: name, port: port) + " " + authority.openSSHLine).utf8) + Array(ending.utf8)
        }
        let marker: String
        switch next() % 12 {
        case 0, 1: marker = "@cert-authority "
        case 2, 3: marker = "@revoked "
        case 4: marker = pick(["@REVOKED ", "@Cert-Authority ", "@revoked @cert-authority ", "@revoked\t", "@cert-authority\t", "@ "])
        default: marker = ""
        }
        let field = hostField(name: name, port: port)
        let key = keyText(presented: presented, certificate: certificate)
        if chance(10) {
            let tabbed = (marker.isEmpty ? "" : marker.trimmingCharacters(in: .whitespaces) + "\t") + field + "\t" + key.replacingOccurrences(of: " ", with: "\t")
            return Array(tabbed.utf8) + Array(ending.utf8)
        }
        let separator = chance(10) ? "\t " : " "
        return Array((marker + field + separator + key).utf8) + Array(ending.utf8)
    }
}
