import Foundation
import FleetTrustTestFleet

/// Which server serves a case of the server differential: the project's fake key server (for
/// what no real server will serve), or a real server of a kind real fleets run, from Debian's
/// packages (`openssh-server`, `dropbear-bin`, `tinysshd` under `socat`).
enum ServerKind: String, CaseIterable, Hashable, Sendable {
    case fake
    /// A stock sshd.
    case sshd
    /// A RHEL host in FIPS mode: ECDH over NIST curves only.
    case fipsECDH = "sshd-fips-ecdh"
    /// Finite-field Diffie-Hellman only, over fixed groups.
    case dhOnly = "sshd-dh-only"
    /// Diffie-Hellman group exchange only.
    case gexOnly = "sshd-dh-gex-only"
    /// The post-quantum hybrid only, as hardening guides recommend.
    case sntrupOnly = "sshd-sntrup761-only"
    /// RSA signed with SHA-1 only: `ssh` 9.2 refuses it.
    case sha1RSAOnly = "sshd-ssh-rsa-only"
    /// A key exchange only libssh negotiates (`diffie-hellman-group14-sha1`, an old switch's), which
    /// the user's `KexAlgorithms +…` lets `ssh` reach.
    case sha1KeyExchangeOnly = "sshd-dh-group14-sha1-only"
    /// The same old switch, for a user who did not enable its key exchange: `ssh` cannot agree
    /// one, so neither may the probe.
    case sha1KeyExchangeNotEnabled = "sshd-dh-group14-sha1-not-enabled"
    /// A stock sshd with curve25519 only, for a user whose `KexAlgorithms -curve25519*` removes
    /// it: `ssh` fails, and so must the probe (a key it proved would be quieter than that).
    case keyExchangeRemovedByUser = "sshd-kex-removed-by-user"
    /// A stock sshd, for a user whose `KexAlgorithms -*` removes every method: `ssh` fails every
    /// key exchange, and so must the probe.
    case everyKeyExchangeRemovedByUser = "sshd-every-kex-removed-by-user"
    /// Dropbear 2022.83.
    case dropbear
    /// tinysshd (Ed25519 host key, curve25519 and sntrup761 exchanges), one process per connection under `socat`.
    case tinysshd

    /// The sshd_config lines that make a stock sshd this kind.
    var sshdSettings: [String] {
        switch self {
        case .fipsECDH: return ["KexAlgorithms ecdh-sha2-nistp256,ecdh-sha2-nistp384"]
        case .dhOnly: return ["KexAlgorithms diffie-hellman-group14-sha256,diffie-hellman-group16-sha512"]
        case .gexOnly: return ["KexAlgorithms diffie-hellman-group-exchange-sha256"]
        case .sntrupOnly: return ["KexAlgorithms sntrup761x25519-sha512@openssh.com"]
        case .sha1RSAOnly: return ["HostKeyAlgorithms ssh-rsa"]
        case .sha1KeyExchangeOnly, .sha1KeyExchangeNotEnabled: return ["KexAlgorithms diffie-hellman-group14-sha1"]
        case .keyExchangeRemovedByUser: return ["KexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org"]
        case .fake, .sshd, .dropbear, .tinysshd, .everyKeyExchangeRemovedByUser: return []
        }
    }

    /// What the user's ssh_config block for such a host says, so that `ssh` reaches it as its user does.
    var clientSettings: [String] {
        switch self {
        case .sha1KeyExchangeOnly: return ["KexAlgorithms +diffie-hellman-group14-sha1"]
        case .keyExchangeRemovedByUser: return ["KexAlgorithms -curve25519*"]
        case .everyKeyExchangeRemovedByUser: return ["KexAlgorithms -*"]
        default: return []
        }
    }

    var isOpenSSH: Bool { ![.fake, .dropbear, .tinysshd].contains(self) }
}

extension ServerMatrix {
    /// One setup per real server kind: the keys each kind can serve, and a host certificate where
    /// the kind is one a certificate is usual on (the FIPS host) or a stock one.
    static let zoo: [ServerCase.Setup] = {
        typealias Setup = ServerCase.Setup
        let all: [Setup.Plain] = [.ed, .ec, .rsa]
        return [
            Setup(plain: [.ec, .rsa], certificate: .init(variant: .valid, key: .ec, ca: "ec"), server: .fipsECDH),
            Setup(plain: all, server: .dhOnly),
            Setup(plain: all, certificate: .init(variant: .valid, key: .ed, ca: "ed"), server: .gexOnly),
            Setup(plain: all, server: .sntrupOnly),
            Setup(plain: [.rsaSHA1Only], server: .sha1RSAOnly),
            Setup(plain: all, server: .sha1KeyExchangeOnly),
            Setup(plain: [.ed], server: .sha1KeyExchangeNotEnabled),
            Setup(plain: [.ed], server: .keyExchangeRemovedByUser),
            Setup(plain: [.ed], server: .everyKeyExchangeRemovedByUser),
            Setup(plain: all, server: .dropbear),
            Setup(plain: [.ed], server: .tinysshd),
        ]
    }()

    /// Every zoo setup with nothing recorded, every key it offers, another key of its first type,
    /// and a `@cert-authority` line where it has a certificate.
    static func zooCases() -> [ServerCase] {
        var combos: [(ServerCase.Setup, ServerCase.KnownHosts)] = []
        for setup in zoo {
            var recorded: [ServerCase.KnownHosts] = [.nothing, .exactAll, .otherSameType]
            if setup.certificate != nil { recorded.append(.certAuthority) }
            combos += recorded.map { (setup, $0) }
        }
        return combos.enumerated().map { ServerCase(index: $0.offset, setup: $0.element.0, knownHosts: $0.element.1, config: .none) }
    }
}

extension RealServerGroup {
    /// Starts the servers of `kind` listening on `addresses`, serving the lab's key files
    /// `hostKeys` (OpenSSH format); returns the port of each address.
    func start(_ kind: ServerKind, hostKeys: [String], certificate: String?, addresses: [String], tag: String) throws -> [String: Int] {
        switch kind {
        case .dropbear:
            let converted = try hostKeys.map { key in
                _ = try Tool.check("/usr/bin/dropbearconvert", ["openssh", "dropbear", key, key + ".dropbear"])
                return key + ".dropbear"
            }
            return try startEach(addresses) { address, port in
                try SpawnedProcess("/usr/sbin/dropbear", ["-F", "-E", "-s", "-p", "\(address):\(port)"] + converted.flatMap { ["-r", $0] },
                                   stderrPath: "\(directory)/dropbear-\(tag)-\(address).log")
            }
        case .tinysshd:
            let keys = "\(directory)/tinysshd-\(tag)"
            try Self.writeTinysshdKeys(from: hostKeys[0], to: keys)
            return try startEach(addresses) { address, port in
                try SpawnedProcess("/usr/bin/socat", ["TCP-LISTEN:\(port),bind=\(address),reuseaddr,fork", "EXEC:/usr/sbin/tinysshd \(keys)"],
                                   stderrPath: "\(directory)/socat-\(tag)-\(address).log")
            }
        case .fake:
            throw TestFleetError.toolFailed("a fake server is not a real server")
        default:
            return try startSSHD(kind, hostKeys: hostKeys, certificate: certificate, addresses: addresses, tag: tag)
        }
    }

    /// Starts one server per address on a free port, retried on another port if it does not
    /// listen; returns the port of each address.
    private func startEach(_ addresses: [String], _ spawn: (String, Int) throws -> SpawnedProcess) throws -> [String: Int] {
        var ports: [String: Int] = [:]
        for address in addresses {
            for _ in 0..<10 where ports[address] == nil {
                let port = try Loopback.freePort()
                let process = try spawn(address, port)
                for _ in 0..<100 where ports[address] == nil && process.isRunning {
                    // Its own process listening, not another test's server on the same port.
                    if Loopback.accepts(address: address, port: port) {
                        if Loopback.isListening(pid: process.pid, address: address, port: port) { ports[address] = port } else { break }
                    } else {
                        usleep(20_000)
                    }
                }
                if ports[address] != nil { processes.append(process) } else { process.terminate(grace: 1) }
            }
            guard ports[address] != nil else { throw TestFleetError.sshdDidNotStart("a server on \(address)") }
        }
        return ports
    }

    /// tinysshd's key directory holding the lab's Ed25519 key (tinysshd reads the raw 32-byte
    /// public key and the 64-byte seed-and-public secret key), so known_hosts lines made from the
    /// lab's key files name it.
    private static func writeTinysshdKeys(from privateKey: String, to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let script = """
            import sys
            from cryptography.hazmat.primitives import serialization as s
            key = s.load_ssh_private_key(open(sys.argv[1], "rb").read(), None)
            public = key.public_key().public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)
            seed = key.private_bytes(s.Encoding.Raw, s.PrivateFormat.Raw, s.NoEncryption())
            open(sys.argv[2] + "/ed25519.pk", "wb").write(public)
            open(sys.argv[2] + "/.ed25519.sk", "wb").write(seed + public)
            """
        _ = try Tool.check("/usr/bin/python3", ["-c", script, privateKey, directory])
    }
}
