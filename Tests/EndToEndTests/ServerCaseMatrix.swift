import Foundation
import FleetTrustTestFleet

/// The cases of the server-side differential test: what a host serves × what known_hosts says ×
/// what the host's ssh_config block says. Every case gets its own loopback address, so bare-name
/// entries of one case never touch another while all share one inventory and one known_hosts file.
struct ServerCase: CustomStringConvertible, Sendable {
    /// What the server serves.
    struct Setup: Hashable, CustomStringConvertible, Sendable {
        enum Plain: String, Hashable, Sendable {
            case ed, ec, rsa
            /// The 2048-bit RSA key offered only as `ssh-rsa` (SHA-1 signatures).
            case rsaSHA1Only = "rsa-ssh-rsa-only"
            /// A 768-bit RSA key.
            case shortRSA = "rsa768"
            /// The 2048-bit RSA key sent with a zero byte in front of its modulus: the same key to
            /// OpenSSH, other bytes on the wire (a fake server only).
            case paddedRSA = "rsa-zero-padded"
        }
        enum CertificateVariant: String, CaseIterable, Hashable, Sendable {
            case valid, expired, wrongPrincipals = "wrong-principals", untrustedCA = "untrusted-ca", forged, undecodable
            case userRole = "user-certificate", sha1Signed = "sha1-signed", sha1Relabelled = "sha1-relabelled"
        }
        struct Certificate: Hashable, Sendable {
            var variant: CertificateVariant
            /// The certified key: ed, ec or rsa.
            var key: Plain
            /// The signing CA: ed, ec, rsa or untrusted.
            var ca: String
        }
        var plain: [Plain]
        var certificate: Certificate?
        /// Which server serves it: a FakeKeyServer, or a real server of some kind.
        var server = ServerKind.fake

        var description: String {
            var parts = [server.rawValue]
            if let certificate { parts.append("\(certificate.variant.rawValue) \(certificate.key.rawValue)-cert by ca-\(certificate.ca)") }
            parts.append("plain " + plain.map(\.rawValue).joined(separator: "+"))
            return parts.joined(separator: ", ")
        }
    }

    enum KnownHosts: String, CaseIterable, Sendable {
        case nothing, exact, exactAll = "exact-all", bareName = "bare-name", revoked, revokedBare = "revoked-bare-name"
        case certAuthority = "cert-authority", certAuthorityAndExact = "cert-authority+exact", hashed
        case otherSameType = "other-key-same-type", otherTypeOnly = "other-type-only"
    }

    enum Config: String, CaseIterable, Sendable {
        case none, hostKeyAlias = "HostKeyAlias", hostKeyAlgorithms = "HostKeyAlgorithms", userKnownHostsFile = "UserKnownHostsFile"
        /// An explicit `HostKeyAlgorithms` list naming the plain keys in reverse order: `ssh` uses it
        /// as written, not reordered by what known_hosts records.
        case hostKeyAlgorithmsOrder = "HostKeyAlgorithms-explicit-order"
        /// `CASignatureAlgorithms ssh-ed25519`: certificates signed by the RSA or ECDSA CA are not
        /// accepted as certificates.
        case caSignatureAlgorithms = "CASignatureAlgorithms"
        /// `RequiredRSASize 3072`: the 2048-bit RSA key is refused.
        case requiredRSASize = "RequiredRSASize"
        /// The case's known_hosts lines printed by `KnownHostsCommand /bin/cat FILE` instead of a
        /// file: run from the user's own configuration, never from an inventory.
        case knownHostsCommand = "KnownHostsCommand"
        /// `RevokedHostKeys FILE`: a KRL made by `ssh-keygen -k` revoking the case's first plain key.
        case revokedHostKeysKRL = "RevokedHostKeys-KRL"
    }

    var index: Int
    var setup: Setup
    var knownHosts: KnownHosts
    var config: Config
    var port = 0

    var name: String { String(format: "c%04d", index) }
    var address: String { "127.10.\(index / 250).\(1 + index % 250)" }
    var alias: String? { config == .hostKeyAlias ? "alias-\(name).example" : nil }
    /// The string ssh looks known_hosts up with (never port 22 here).
    var lookupName: String { alias ?? "[\(address)]:\(port)" }

    /// The HostKeyAlgorithms this case's block sets: the last plain key's algorithms (so ssh meets
    /// that key, not a certificate or the preferred type), `+ssh-rsa` for a SHA-1-only server.
    var hostKeyAlgorithms: String? {
        if config == .hostKeyAlgorithmsOrder {
            return setup.plain.reversed().flatMap(ServerLab.algorithms).joined(separator: ",")
        }
        guard config == .hostKeyAlgorithms, let last = setup.plain.last else { return nil }
        return last == .rsaSHA1Only ? "+ssh-rsa" : ServerLab.algorithms(last).joined(separator: ",")
    }

    /// The other lines this case's block sets: what its server kind needs a user to set
    /// (`KexAlgorithms +…`), and what its config variant sets.
    var otherSettings: [String] {
        switch config {
        case .caSignatureAlgorithms: return setup.server.clientSettings + ["CASignatureAlgorithms ssh-ed25519"]
        case .requiredRSASize: return setup.server.clientSettings + ["RequiredRSASize 3072"]
        default: return setup.server.clientSettings
        }
    }

    var description: String {
        "\(name) \(address):\(port) [\(setup)] known_hosts=\(knownHosts.rawValue) config=\(config.rawValue)"
            + (hostKeyAlgorithms.map { " (HostKeyAlgorithms \($0))" } ?? "")
    }

    /// What the server serves, coarsely (the certificate variant, or the plain key set), for
    /// grouping disagreements into classes.
    var kind: String {
        if let certificate = setup.certificate {
            return (setup.server == .fake ? "" : setup.server.rawValue + " ") + "\(certificate.variant.rawValue) certificate"
        }
        return (setup.server == .fake ? "" : setup.server.rawValue + " ") + "plain " + setup.plain.map(\.rawValue).joined(separator: "+")
    }
}

/// Keys, CAs and certificates for the matrix, made once per run with ssh-keygen (and openssl for
/// the short RSA key).
final class ServerLab: @unchecked Sendable {
    let directory: String
    static let certificateSuffix = "-cert-v01@openssh.com"

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-server-lab-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let keys: [(String, String, Int?)] = [
            ("ed", "ed25519", nil), ("ec", "ecdsa", 256), ("rsa", "rsa", 2048), ("rsa768", "rsa", 768),
            ("ed2", "ed25519", nil), ("ec2", "ecdsa", 256), ("rsa2", "rsa", 2048), ("ec384", "ecdsa", 384),
            ("ca-ed", "ed25519", nil), ("ca-ec", "ecdsa", 256), ("ca-rsa", "rsa", 2048), ("ca-untrusted", "ed25519", nil),
        ]
        let failures = NSLock()
        nonisolated(unsafe) var failure: Error?
        DispatchQueue.concurrentPerform(iterations: keys.count) { index in
            let (name, type, bits) = keys[index]
            do { try KeyFiles.generate(type: type, bits: bits, path: "\(directory)/\(name)") } catch {
                failures.lock(); failure = error; failures.unlock()
            }
        }
        if let failure { throw failure }
    }

    func stop() { try? FileManager.default.removeItem(atPath: directory) }

    func path(_ name: String) -> String { "\(directory)/\(name)" }

    func publicLine(_ name: String) throws -> String { try KeyFiles.line(publicKeyFile: path(name) + ".pub") }

    static func keyFile(_ plain: ServerCase.Setup.Plain) -> String {
        switch plain {
        case .ed: return "ed"
        case .ec: return "ec"
        case .rsa, .rsaSHA1Only, .paddedRSA: return "rsa"
        case .shortRSA: return "rsa768"
        }
    }

    static func algorithms(_ plain: ServerCase.Setup.Plain) -> [String] {
        switch plain {
        case .ed: return ["ssh-ed25519"]
        case .ec: return ["ecdsa-sha2-nistp256"]
        case .rsa, .shortRSA, .paddedRSA: return ["rsa-sha2-512", "rsa-sha2-256"]
        case .rsaSHA1Only: return ["ssh-rsa"]
        }
    }

    static func certificateAlgorithms(_ key: ServerCase.Setup.Plain) -> [String] {
        switch key {
        case .ed: return ["ssh-ed25519" + certificateSuffix]
        case .ec: return ["ecdsa-sha2-nistp256" + certificateSuffix]
        default: return ["rsa-sha2-512" + certificateSuffix, "rsa-sha2-256" + certificateSuffix]
        }
    }

    /// A spare key of the same type as `plain` (one no server holds).
    static func spareOfSameType(_ plain: ServerCase.Setup.Plain) -> String {
        switch plain {
        case .ed: return "ed2"
        case .ec: return "ec2"
        default: return "rsa2"
        }
    }

    /// The certificate blob a setup presents; `names` are every host name its cases are reached
    /// under (principals of the well-formed variants).
    func certificateBlob(_ certificate: ServerCase.Setup.Certificate, tag: String, names: [String]) throws -> [UInt8] {
        let output = path("cert-\(tag)-cert.pub")
        let key = path(Self.keyFile(certificate.key)) + ".pub"
        let ca = path("ca-\(certificate.ca)")
        switch certificate.variant {
        case .valid, .forged, .undecodable, .untrustedCA, .sha1Relabelled:
            try KeyFiles.certify(publicKeyPath: key, caPath: ca, identity: tag, principals: names, output: output)
        case .expired:
            try KeyFiles.certify(publicKeyPath: key, caPath: ca, identity: tag, principals: names, validity: "20200101:20210101", output: output)
        case .wrongPrincipals:
            try KeyFiles.certify(publicKeyPath: key, caPath: ca, identity: tag, principals: ["other.example"], output: output)
        case .userRole:
            try KeyFiles.certify(publicKeyPath: key, caPath: ca, identity: tag, host: false, principals: names, output: output)
        case .sha1Signed:
            try KeyFiles.certify(publicKeyPath: key, caPath: ca, identity: tag, principals: names, signatureAlgorithm: "ssh-rsa", output: output)
        }
        let blob = try KeyFiles.blob(publicKeyFile: output)
        switch certificate.variant {
        case .forged: return try OddCertificates.forged(blob)
        case .undecodable: return try OddCertificates.undecodable(blob)
        case .sha1Relabelled: return try OddCertificates.relabelledToSHA1(blob)
        default: return blob
        }
    }

    /// The CA a `@cert-authority` line names for a setup: the one that signed its certificate,
    /// unless that is the untrusted one (then the ed25519 CA, which signed nothing here).
    static func trustedCA(_ setup: ServerCase.Setup) -> String {
        guard let certificate = setup.certificate, certificate.ca != "untrusted" else { return "ca-ed" }
        return "ca-\(certificate.ca)"
    }

    /// The known_hosts lines of one case (names not yet hashed; `hashed` marks lines to hash).
    func knownHostsLines(_ item: ServerCase) throws -> [(line: String, hash: Bool)] {
        let name = item.lookupName
        let primary = try publicLine(Self.keyFile(item.setup.plain[0]))
        let ca = try publicLine(Self.trustedCA(item.setup))
        switch item.knownHosts {
        case .nothing: return []
        case .exact: return [("\(name) \(primary)", false)]
        case .exactAll:
            var seen = Set<String>()
            return try item.setup.plain.map { try publicLine(Self.keyFile($0)) }.filter { seen.insert($0).inserted }.map { ("\(name) \($0)", false) }
        case .bareName: return [("\(item.address) \(primary)", false)]
        case .revoked: return [("@revoked \(name) \(primary)", false), ("\(name) \(primary)", false)]
        case .revokedBare: return [("@revoked \(item.address) \(primary)", false)]
        case .certAuthority: return [("@cert-authority \(name) \(ca)", false)]
        case .certAuthorityAndExact: return [("@cert-authority \(name) \(ca)", false), ("\(name) \(primary)", false)]
        case .hashed: return [("\(name) \(primary)", true)]
        case .otherSameType: return [("\(name) \(try publicLine(Self.spareOfSameType(item.setup.plain[0])))", false)]
        case .otherTypeOnly: return [("\(name) \(try publicLine("ec384"))", false)]
        }
    }

    /// A key revocation list made by the real `ssh-keygen -k`, revoking the case's first plain key
    /// (ssh-keygen refuses a 768-bit RSA key: then a spare key no server holds, which revokes nothing).
    func revocationList(_ item: ServerCase) throws -> String {
        let list = path("krl-\(item.name)")
        let revoked = item.setup.plain[0] == .shortRSA ? Self.spareOfSameType(.rsa) : Self.keyFile(item.setup.plain[0])
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-k", "-f", list, path(revoked) + ".pub"])
        return list
    }

    /// Hashes the host field of each line with `ssh-keygen -H` (one run for all).
    func hashed(_ lines: [String]) throws -> [String] {
        guard !lines.isEmpty else { return [] }
        let file = path("to-hash")
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        try Tool.check("/usr/bin/ssh-keygen", ["-H", "-f", file])
        let out = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init).filter { $0.hasPrefix("|1|") }
        guard out.count == lines.count else { throw TestFleetError.toolFailed("ssh-keygen -H gave \(out.count) lines for \(lines.count)") }
        return out
    }
}

/// Generates the matrix and samples it.
enum ServerMatrix {
    /// Every host configuration: plain key sets, then each certificate variant over each key type
    /// (forged with each CA type; SHA-1 variants with the RSA CA), alone and beside all three
    /// plain keys, then two real sshd configurations.
    static let setups: [ServerCase.Setup] = {
        typealias Setup = ServerCase.Setup
        var setups: [Setup] = [
            Setup(plain: [.ed]), Setup(plain: [.ed, .ec, .rsa]), Setup(plain: [.rsa]),
            Setup(plain: [.rsaSHA1Only]), Setup(plain: [.shortRSA]), Setup(plain: [.ed, .shortRSA]),
            Setup(plain: [.paddedRSA]), Setup(plain: [.ed, .paddedRSA]),
        ]
        for key in [Setup.Plain.ed, .ec, .rsa] {
            let ownCA = ["ed": "ed", "ec": "ec", "rsa": "rsa"][key.rawValue]!
            var certificates: [Setup.Certificate] = []
            for variant in Setup.CertificateVariant.allCases {
                switch variant {
                case .forged: certificates += ["ed", "ec", "rsa"].map { Setup.Certificate(variant: variant, key: key, ca: $0) }
                case .sha1Signed, .sha1Relabelled: certificates.append(Setup.Certificate(variant: variant, key: key, ca: "rsa"))
                case .untrustedCA: certificates.append(Setup.Certificate(variant: variant, key: key, ca: "untrusted"))
                default: certificates.append(Setup.Certificate(variant: variant, key: key, ca: ownCA))
                }
            }
            for certificate in certificates {
                setups.append(Setup(plain: [key], certificate: certificate))
                setups.append(Setup(plain: [.ed, .ec, .rsa], certificate: certificate))
            }
        }
        setups.append(Setup(plain: [.ed, .ec, .rsa], server: .sshd))
        setups.append(Setup(plain: [.ed, .ec, .rsa], certificate: .init(variant: .valid, key: .ed, ca: "ed"), server: .sshd))
        return setups
    }()

    static var fullCount: Int { setups.count * ServerCase.KnownHosts.allCases.count * ServerCase.Config.allCases.count }

    /// The rows of ORACLE-FINDINGS.md, always in the sample so every known class shows.
    static let pinned: [(ServerCase.Setup, ServerCase.KnownHosts, ServerCase.Config)] = {
        typealias Setup = ServerCase.Setup
        func cert(_ variant: Setup.CertificateVariant, _ key: Setup.Plain, _ ca: String, all: Bool = false) -> Setup {
            Setup(plain: all ? [.ed, .ec, .rsa] : [key], certificate: .init(variant: variant, key: key, ca: ca))
        }
        return [
            (cert(.forged, .ed, "ed"), .exact, .none),
            (cert(.forged, .rsa, "rsa"), .certAuthority, .none),
            (cert(.forged, .ec, "ec", all: true), .nothing, .none),
            (cert(.undecodable, .ed, "ed"), .exact, .none),
            (cert(.userRole, .ed, "ed"), .certAuthority, .none),
            (cert(.sha1Relabelled, .rsa, "rsa"), .certAuthority, .none),
            (cert(.sha1Signed, .rsa, "rsa"), .certAuthorityAndExact, .none),
            (Setup(plain: [.rsaSHA1Only]), .exact, .none),
            (Setup(plain: [.rsaSHA1Only]), .exact, .hostKeyAlgorithms),
            (Setup(plain: [.shortRSA]), .exact, .none),
            (Setup(plain: [.shortRSA]), .nothing, .none),
            (cert(.untrustedCA, .ec, "untrusted", all: true), .exact, .none),
            (cert(.valid, .ed, "ed", all: true), .certAuthority, .hostKeyAlgorithms),
            (Setup(plain: [.ed]), .revokedBare, .none),
            (Setup(plain: [.ed, .ec, .rsa]), .exact, .hostKeyAlias),
            (Setup(plain: [.ed, .ec, .rsa]), .exact, .userKnownHostsFile),
            (Setup(plain: [.ed, .ec, .rsa], server: .sshd), .exact, .none),
            (Setup(plain: [.ed, .ec, .rsa]), .exact, .hostKeyAlgorithmsOrder),
            (Setup(plain: [.ed, .ec, .rsa], server: .sshd), .exact, .hostKeyAlgorithmsOrder),
            (cert(.valid, .rsa, "rsa"), .certAuthority, .caSignatureAlgorithms),
            (cert(.valid, .ec, "ec", all: true), .certAuthorityAndExact, .caSignatureAlgorithms),
            (cert(.valid, .ed, "ed"), .certAuthority, .caSignatureAlgorithms),
            (Setup(plain: [.rsa]), .exact, .requiredRSASize),
            (Setup(plain: [.ed, .ec, .rsa], server: .sshd), .exactAll, .requiredRSASize),
            (Setup(plain: [.ed, .ec, .rsa], certificate: .init(variant: .valid, key: .ed, ca: "ed"), server: .sshd), .certAuthority, .none),
            (Setup(plain: [.ed]), .exact, .revokedHostKeysKRL),
            (Setup(plain: [.paddedRSA]), .exact, .none),
            (Setup(plain: [.paddedRSA]), .revoked, .none),
            (Setup(plain: [.paddedRSA]), .otherSameType, .none),
            (Setup(plain: [.paddedRSA]), .exact, .revokedHostKeysKRL),
            // libssh refuses the padded key: the probe must still fetch it (ssh meets it first here).
            (Setup(plain: [.ed, .paddedRSA]), .certAuthorityAndExact, .hostKeyAlgorithmsOrder),
            (Setup(plain: [.ed, .ec, .rsa], server: .sshd), .exactAll, .revokedHostKeysKRL),
            (Setup(plain: [.ed, .ec, .rsa], certificate: .init(variant: .valid, key: .ed, ca: "ed"), server: .sshd), .certAuthority,
             .revokedHostKeysKRL),
        ]
    }()

    /// Every case (`full`), or the pinned ones plus a seeded sample up to `count`.
    static func cases(full: Bool, count: Int, seed: UInt64) -> [ServerCase] {
        var combos: [(ServerCase.Setup, ServerCase.KnownHosts, ServerCase.Config)] = []
        if full {
            for setup in setups {
                for knownHosts in ServerCase.KnownHosts.allCases {
                    for config in ServerCase.Config.allCases { combos.append((setup, knownHosts, config)) }
                }
            }
        } else {
            combos = pinned
            var generator = SeededGenerator(seed: seed)
            var seen = Set(combos.map { "\($0.0)|\($0.1)|\($0.2)" })
            while combos.count < count {
                let combo = (setups.randomElement(using: &generator)!, ServerCase.KnownHosts.allCases.randomElement(using: &generator)!,
                             ServerCase.Config.allCases.randomElement(using: &generator)!)
                if seen.insert("\(combo.0)|\(combo.1)|\(combo.2)").inserted { combos.append(combo) }
            }
        }
        return combos.enumerated().map { ServerCase(index: $0.offset, setup: $0.element.0, knownHosts: $0.element.1, config: $0.element.2) }
    }
}

/// Real server processes for the cases a real server serves (sshd: at most 16 addresses each),
/// stopped by PID.
final class RealServerGroup {
    var processes: [SpawnedProcess] = []
    let directory: String

    init(directory: String) { self.directory = directory }

    /// Starts sshd processes of `kind` listening on `addresses`; returns the port of each address.
    func startSSHD(_ kind: ServerKind, hostKeys: [String], certificate: String?, addresses: [String], tag: String) throws -> [String: Int] {
        try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        var ports: [String: Int] = [:]
        for (chunkIndex, chunk) in stride(from: 0, to: addresses.count, by: 16).map({ Array(addresses[$0..<min($0 + 16, addresses.count)]) }).enumerated() {
            var started = false
            for _ in 0..<10 where !started {
                let port = try Loopback.freePort()
                let config = "\(directory)/sshd-\(tag)-\(chunkIndex).conf"
                var lines = chunk.map { "ListenAddress \($0):\(port)" } + hostKeys.map { "HostKey \($0)" }
                if let certificate { lines.append("HostCertificate \(certificate)") }
                lines += kind.sshdSettings
                lines += ["UsePAM no", "StrictModes no", "PidFile none", "MaxStartups 1000:30:2000", "LogLevel ERROR",
                          "LoginGraceTime 20", "AuthorizedKeysFile none"]
                try (lines.joined(separator: "\n") + "\n").write(toFile: config, atomically: true, encoding: .utf8)
                let process = try SpawnedProcess("/usr/sbin/sshd", ["-D", "-e", "-f", config])
                for _ in 0..<100 where !started && process.isRunning {
                    if chunk.allSatisfy({ Loopback.accepts(address: $0, port: port) }) { started = true } else { usleep(20_000) }
                }
                if started {
                    processes.append(process)
                    for address in chunk { ports[address] = port }
                } else {
                    process.terminate(grace: 1)
                }
            }
            guard started else { throw TestFleetError.sshdDidNotStart("on \(chunk.joined(separator: ","))") }
        }
        return ports
    }

    func stop() {
        for process in processes { process.terminate(grace: 2) }
        processes = []
    }
}
