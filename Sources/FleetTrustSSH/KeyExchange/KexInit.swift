import COpenSSL
import FleetTrustCore

/// SSH_MSG_KEXINIT (RFC 4253 §7.1): the algorithm lists one side offers, and the negotiation rule.
struct KexInit {
    /// The ten name-lists, in wire order.
    enum List: Int, CaseIterable {
        case keyExchange, hostKey, cipherToServer, cipherToClient, macToServer, macToClient
        case compressionToServer, compressionToClient, languageToServer, languageToClient
    }

    var lists: [[String]]
    var firstKexPacketFollows: Bool
    /// A server's host-key algorithms and key exchange methods as a report shows them (the first
    /// `ReportedNames.limit` of each, cleaned), made once per distinct KEXINIT with its lists; empty in ours.
    private(set) var reported = ReportedNames()
    /// The message exactly as sent or received: it enters the exchange hash byte for byte.
    let payload: [UInt8]

    /// The markers `ssh` 9.2 (Debian) appends to its methods: ext-info-c, and kex-strict-c, the
    /// client's side of kex-strict.
    static let clientMarkers = ["ext-info-c", "kex-strict-c-v00@openssh.com"]
    /// The server's side of kex-strict, in its key exchange list.
    static let strictServerMarker = "kex-strict-s-v00@openssh.com"
    /// Offered only so the server agrees (this client never encrypts anything), and exactly as
    /// `ssh` 9.2 offers them by default, like the MACs and compressions: a server that tells
    /// clients apart by their KEXINIT sees `ssh`'s. The connection shaped like `ssh`'s offers the
    /// host's own (`Ciphers`, `MACs`).
    static let ciphers = TransportAlgorithms.openSSHDefaultCiphers
    static let macs = TransportAlgorithms.openSSHDefaultMACs
    static let compressions = ["none", "zlib@openssh.com", "zlib"]
    /// Ciphers that authenticate themselves, for which no MAC is negotiated (OpenSSH `kex.c`).
    static let authenticatedCiphers: Set = ["chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com"]

    /// Our KEXINIT, offering `hostKeyAlgorithms` in order of preference, and of `keyExchange`
    /// (what `ssh` offers the host, in its order) the methods this client implements.
    init(clientOffering hostKeyAlgorithms: [String], keyExchange: [String] = KeyExchangeAlgorithms.openSSHDefault,
         ciphers: [String] = Self.ciphers, macs: [String] = Self.macs) {
        if keyExchange == KeyExchangeAlgorithms.openSSHDefault {
            self.init(methods: Self.defaultKeyExchangeList, hostKeyAlgorithms: hostKeyAlgorithms,
                      encodedMethods: Self.encodedDefaultKeyExchangeList, ciphers: ciphers, macs: macs)
        } else {
            self.init(methods: Self.keyExchangeList(keyExchange), hostKeyAlgorithms: hostKeyAlgorithms, encodedMethods: nil,
                      ciphers: ciphers, macs: macs)
        }
    }

    /// `ssh`'s own KEXINIT for a host, byte for byte but for the cookie: `keyExchange` and
    /// `hostKeyAlgorithms` exactly as `ssh` orders them for the host (`KeyExchangeAlgorithms.offered`,
    /// `HostKeyAlgorithms.offered`), then its markers, its ciphers, MACs and compressions, and no
    /// guessed packet. The connection that decides which key `ssh` meets sends this one.
    init(sshOffering hostKeyAlgorithms: [String], keyExchange: [String], ciphers: [String] = Self.ciphers,
         macs: [String] = Self.macs) {
        if keyExchange == KeyExchangeAlgorithms.openSSHDefault {
            self.init(methods: Self.sshDefaultMethods, hostKeyAlgorithms: hostKeyAlgorithms,
                      encodedMethods: Self.encodedSSHDefaultMethods, ciphers: ciphers, macs: macs)
        } else {
            self.init(methods: keyExchange + Self.clientMarkers, hostKeyAlgorithms: hostKeyAlgorithms, encodedMethods: nil,
                      ciphers: ciphers, macs: macs)
        }
    }

    private init(methods: [String], hostKeyAlgorithms: [String], encodedMethods: [UInt8]?, ciphers: [String] = Self.ciphers,
                 macs: [String] = Self.macs) {
        lists = [methods, hostKeyAlgorithms, ciphers, ciphers, macs, macs,
                 Self.compressions, Self.compressions, [], []]
        firstKexPacketFollows = false
        // Sized for ours in one allocation: the fixed lists, and a name of about 32 bytes per method and algorithm.
        var writer = SSHWireWriter(capacity: 21 + Self.encodedFixedLists.count + 32 * (methods.count + hostKeyAlgorithms.count))
        writer.writeByte(BinaryPacket.Message.kexInit.rawValue)
        writer.writeRaw(BinaryPacket.randomBytes(16))
        if let encodedMethods {
            writer.writeRaw(encodedMethods)
        } else {
            writer.writeString(methods.joined(separator: ","))
        }
        writer.writeString(hostKeyAlgorithms.joined(separator: ","))
        if ciphers == Self.ciphers, macs == Self.macs {
            writer.writeRaw(Self.encodedFixedLists)
        } else {
            Self.writeFixedLists(ciphers: ciphers, macs: macs, into: &writer)
        }
        payload = writer.bytes
    }

    /// The key exchange list we send for `ssh`'s offer: its methods we implement, in its order
    /// except that the post-quantum hybrid comes after the others (its key costs this client about
    /// a hundred times an X25519 key, and a stock sshd picks the client's first method: first, it
    /// made a debug scan of a stock sshd 80 times the CPU and lost keys to timeouts), then `ssh`'s
    /// markers. Methods we lack (a SHA-1 exchange a user enabled) are libssh's.
    static func keyExchangeList(_ offered: [String]) -> [String] {
        let implemented = offered.filter { KeyExchangeMethod(rawValue: $0) != nil }
        let hybrid = implemented.filter { $0.hasPrefix("sntrup761x25519-") }
        return implemented.filter { !hybrid.contains($0) } + hybrid + clientMarkers
    }

    /// The lists most KEXINITs of ours share, encoded once: the default key exchange lists (ours,
    /// and `ssh`'s for the deciding connection), and everything after the host-key list (ciphers,
    /// MACs, compression, languages, the guess flag and the reserved word).
    private static let defaultKeyExchangeList = keyExchangeList(KeyExchangeAlgorithms.openSSHDefault)

    private static let encodedDefaultKeyExchangeList = encoded(defaultKeyExchangeList)

    /// `ssh`'s own list for a host that keeps the default `KexAlgorithms`, with its markers.
    private static let sshDefaultMethods = KeyExchangeAlgorithms.openSSHDefault + clientMarkers
    private static let encodedSSHDefaultMethods = encoded(sshDefaultMethods)

    private static func encoded(_ list: [String]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.writeString(list.joined(separator: ","))
        return writer.bytes
    }

    private static let encodedFixedLists: [UInt8] = {
        var writer = SSHWireWriter()
        writeFixedLists(ciphers: ciphers, macs: macs, into: &writer)
        return writer.bytes
    }()

    /// Everything after the host-key list: ciphers and MACs (each direction), compressions,
    /// languages, the guess flag and the reserved word.
    private static func writeFixedLists(ciphers: [String], macs: [String], into writer: inout SSHWireWriter) {
        for list in [ciphers, ciphers, macs, macs, compressions, compressions, [], []] {
            writer.writeString(list.joined(separator: ","))
        }
        writer.writeByte(0)
        writer.writeUInt32(0)
    }

    /// The server's KEXINIT, its name-lists as OpenSSH reads them: `kex_buf2prop` takes each as a
    /// C string (`sshbuf_get_cstring`: one NUL as the last byte ends the string, a NUL anywhere
    /// else fails the exchange), and `match_list` (match.c), which every
    /// negotiation goes through, considers a list only up to its first empty element, and at most
    /// its first `MAX_PROP` (40) names. Names past either limit are not offered, as far as `ssh` knows.
    /// A KEXINIT this thread read before but for its cookie gets the lists read then (`RecentServerProposals`).
    init(parsing payload: [UInt8]) throws(ProbeFailure) {
        self.payload = payload
        let recent = RecentServerProposals.current.current
        if let known = recent?.proposal(for: payload) {
            lists = known.lists
            firstKexPacketFollows = known.firstKexPacketFollows
            reported = known.reported
            return
        }
        var reader = SSHWireReader(payload)
        do {
            guard try reader.readByte() == BinaryPacket.Message.kexInit.rawValue else {
                throw KeyExchangeFailures.kexFailed("expected KEXINIT, got message \(payload[0])")
            }
            _ = try reader.readBytes(16)
            lists = try List.allCases.map { _ in
                var list = try reader.readString(limit: BinaryPacket.maximumLength)
                if list.last == 0 { list.removeLast() }
                guard !list.contains(0) else { throw KeyExchangeFailures.kexFailed("a KEXINIT name-list contains a NUL byte") }
                return list.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
                    .prefix { !$0.isEmpty }.prefix(Self.consideredNames).map(KnownAlgorithmNames.name)
            }
            firstKexPacketFollows = try reader.readBoolean()
            _ = try reader.readUInt32()
            reported = ReportedNames(hostKey: lists[List.hostKey.rawValue], keyExchange: lists[List.keyExchange.rawValue])
            recent?.keep(payload, lists: lists, firstKexPacketFollows: firstKexPacketFollows, reported: reported)
        } catch let failure as ProbeFailure {
            throw failure
        } catch {
            throw KeyExchangeFailures.kexFailed("malformed KEXINIT from the server")
        }
    }

    /// `MAX_PROP` of match.c.
    static let consideredNames = 40

    /// The server's names a report carries: untrusted text, so cleaned, and at most `limit` of each list.
    struct ReportedNames {
        static let limit = 64
        var hostKey: [String] = []
        var keyExchange: [String] = []

        init() {}

        init(hostKey: [String], keyExchange: [String]) {
            self.hostKey = hostKey.prefix(Self.limit).map { Sanitizer.clean($0, limit: 64) }
            self.keyExchange = keyExchange.prefix(Self.limit).map { Sanitizer.clean($0, limit: 64) }
        }
    }

    subscript(_ list: List) -> [String] { lists[list.rawValue] }

    /// What both sides agreed on, in the terms of `NegotiatedAlgorithms`.
    static func negotiate(client: KexInit, server: KexInit) throws(ProbeFailure) -> NegotiatedAlgorithms {
        func pick(_ list: List, _ what: String) throws(ProbeFailure) -> String {
            guard let chosen = client[list].first(where: server[list].contains) else {
                throw KeyExchangeFailures.noCommonAlgorithm(what, server: server[list])
            }
            return chosen
        }
        let keyExchange = try pick(.keyExchange, "key exchange")
        let hostKey = try pick(.hostKey, "host key")
        let cipher = try pick(.cipherToServer, "cipher")
        let incomingCipher = try pick(.cipherToClient, "cipher")
        // kex_choose_conf: a MAC is negotiated for each direction whose cipher does not authenticate.
        var mac = "<implicit>"
        if !authenticatedCiphers.contains(cipher) { mac = try pick(.macToServer, "MAC") }
        if !authenticatedCiphers.contains(incomingCipher) { _ = try pick(.macToClient, "MAC") }
        _ = try pick(.compressionToServer, "compression")
        _ = try pick(.compressionToClient, "compression")
        return NegotiatedAlgorithms(hostKey: hostKey, keyExchange: keyExchange, cipher: cipher, mac: mac)
    }

    /// Whether the packet the server sent after its KEXINIT guessed wrong and must be skipped, as
    /// OpenSSH's `proposals_match` (kex.c) decides: the guess is right only when both sides list
    /// the same first key exchange method and the same first host-key algorithm.
    static func serverGuessWasWrong(client: KexInit, server: KexInit) -> Bool {
        server.firstKexPacketFollows
            && (client[.keyExchange].first != server[.keyExchange].first || client[.hostKey].first != server[.hostKey].first)
    }
}
