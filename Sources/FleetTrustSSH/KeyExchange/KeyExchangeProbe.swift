import FleetTrustCore

/// Fetches one host key or host certificate through a real key exchange, with proof of possession.
///
/// libssh 0.10 cannot negotiate `*-cert-v01@openssh.com` host-key algorithms, and
/// `ssh-keyscan -c` fetches certificates without checking anything. This minimal, read-only SSH
/// client (RFC 4253 transport, curve25519-sha256 of RFC 8731) runs the exchange itself and checks
/// the server's signature over the exchange hash with the host key (for a certificate, the
/// certified key), then disconnects before NEWKEYS: no session keys, no authentication, nothing
/// encrypted. Whether a certificate's CA signature is valid and trusted is the trust engine's
/// question (`HostCertificate.isSignatureValid`). Synchronous: run it on a dedicated thread.
public enum KeyExchangeProbe {
    public static let certificateAlgorithms = [
        "ssh-ed25519-cert-v01@openssh.com", "ecdsa-sha2-nistp256-cert-v01@openssh.com",
        "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521-cert-v01@openssh.com",
        "rsa-sha2-512-cert-v01@openssh.com", "rsa-sha2-256-cert-v01@openssh.com",
    ]
    public static let plainAlgorithms = [
        "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
        "rsa-sha2-512", "rsa-sha2-256",
    ]
    /// Everything this client can verify; `ssh-rsa` (SHA-1) only when asked for explicitly.
    public static let supportedAlgorithms = certificateAlgorithms + plainAlgorithms
        + ["ssh-rsa-cert-v01@openssh.com", "ssh-rsa"]

    /// Runs one key exchange offering `hostKeyAlgorithms` (in preference order; names this client
    /// cannot verify are dropped) and reports the key the server proved it holds.
    ///
    /// With `fd`, the exchange runs over that connected socket, which stays the caller's to close
    /// (so a pool can cancel by `shutdown(2)` without racing a close); otherwise it connects to
    /// `host`:`port` itself. `timeout` bounds the whole exchange, connection included.
    public static func run(host: String, port: Int, hostKeyAlgorithms: [String], timeout: Double,
                           fd: Int32? = nil) -> KeyExchangeReport {
        var offered: [String] = []
        for name in hostKeyAlgorithms where supportedAlgorithms.contains(name) && !offered.contains(name) {
            offered.append(name)
        }
        return perform(host: host, port: port, offer: .upFront(offered), timeout: timeout, fd: fd)
    }

    /// Runs one key exchange over the connected socket `fd` (which stays the caller's), deciding
    /// what to offer only once the server's KEXINIT has named its host-key algorithms: `choose`
    /// returns the list to offer, or nil when this connection is not needed (it then disconnects).
    /// OpenSSH sends its KEXINIT only after our identification arrives, so waiting for it before
    /// sending ours costs no round trip, and lets several connections to one server each ask for a
    /// different key type from the start.
    static func run(fd: Int32, host: String, timeout: Double, choosing choose: @escaping ([String]) -> [String]?) -> KeyExchangeReport {
        perform(host: host, port: 0, offer: .afterServer(choose), timeout: timeout, fd: fd)
    }

    /// What a run offers: a list fixed up front (sent with our identification), or one chosen
    /// from the server's list.
    private enum Offer {
        case upFront([String])
        case afterServer(([String]) -> [String]?)
    }

    private static func perform(host: String, port: Int, offer: Offer, timeout: Double, fd: Int32?) -> KeyExchangeReport {
        let started = ContinuousClock.now
        let seconds = timeout.isNaN ? 0 : min(max(timeout, 0), 86_400)
        let deadline = started + .milliseconds(Int64(seconds * 1000))
        var report = KeyExchangeReport(outcome: .failure(KeyExchangeFailures.kexFailed("not started")))
        do throws(ProbeFailure) {
            if case .upFront(let offered) = offer, offered.isEmpty {
                throw KeyExchangeFailures.noCommonAlgorithm("host key", server: [])
            }
            var socket = if let fd { TransportSocket(adopting: fd, deadline: deadline) }
                         else { try TransportSocket.connect(host: host, port: port, deadline: deadline) }
            report.peerAddress = socket.peerAddress
            var key = try exchange(over: &socket, offer: offer, report: &report)
            try? socket.write(BinaryPacket.goodbye)
            let elapsed = (ContinuousClock.now - started).components
            key.handshakeMilliseconds = Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15
            report.outcome = .success(key)
        } catch {
            report.outcome = .failure(error)
        }
        return report
    }

    /// `run`, when only the key or the failure matters.
    public static func fetchHostKey(host: String, port: Int, hostKeyAlgorithms: [String], timeout: Double,
                                    fd: Int32? = nil) -> Result<DiscoveredKey, ProbeFailure> {
        run(host: host, port: port, hostKeyAlgorithms: hostKeyAlgorithms, timeout: timeout, fd: fd).outcome
    }

    private static func exchange(over socket: inout TransportSocket, offer: Offer,
                                 report: inout KeyExchangeReport) throws(ProbeFailure) -> DiscoveredKey {
        let agreement = try Curve25519KeyAgreement()
        var opening = IdentificationExchange.clientVersion + [0x0d, 0x0a]
        var sentInit: KexInit?
        if case .upFront(let offered) = offer {
            sentInit = KexInit(clientOffering: offered)
            opening += BinaryPacket.frame(sentInit!.payload)
        }
        do {
            try socket.write(opening)
        } catch {
            throw KeyExchangeFailures.transport(error, stage: .banner)
        }
        let identification = try IdentificationExchange.readServer(from: &socket)
        report.serverVersion = Sanitizer.clean(bytes: identification.version, limit: 255)
        report.serverPreamble = identification.preamble

        let serverInit = try KexInit(parsing: try BinaryPacket.readMessage(from: &socket, stage: .keyExchange))
        report.serverHostKeyAlgorithms = serverInit[.hostKey].prefix(64).map { Sanitizer.clean($0, limit: 64) }
        var outgoing: [UInt8] = []
        if case .afterServer(let choose) = offer {
            let chosen = (choose(report.serverHostKeyAlgorithms) ?? []).filter(supportedAlgorithms.contains)
            guard !chosen.isEmpty else {
                try? socket.write(BinaryPacket.goodbye)
                throw KeyExchangeFailures.notNeeded
            }
            sentInit = KexInit(clientOffering: chosen)
            outgoing = BinaryPacket.frame(sentInit!.payload)
        }
        guard let clientInit = sentInit else { throw KeyExchangeFailures.kexFailed("no KEXINIT sent") }
        let negotiated = try KexInit.negotiate(client: clientInit, server: serverInit)
        if KexInit.serverGuessWasWrong(server: serverInit, negotiated: negotiated) {
            _ = try BinaryPacket.readPayload(from: &socket, stage: .keyExchange)
        }

        var ecdhInit = SSHWireWriter()
        ecdhInit.writeByte(BinaryPacket.Message.kexECDHInit.rawValue)
        ecdhInit.writeString(agreement.publicKey)
        do {
            try socket.write(outgoing + BinaryPacket.frame(ecdhInit.bytes))
        } catch {
            throw KeyExchangeFailures.transport(error, stage: .keyExchange)
        }

        let reply = try ECDHReply(try BinaryPacket.readMessage(from: &socket, stage: .keyExchange))
        let key: HostKey
        do {
            key = try HostKey(blob: reply.hostKeyBlob)
        } catch {
            // A certificate whose body does not decode may still carry a key the server signs
            // with: if it proves that key, keep the certificate as evidence of a broken or hostile server.
            if let certified = certifiedKey(inMalformed: reply.hostKeyBlob, algorithm: negotiated.hostKey),
               let hash = exchangeHash(reply: reply, agreement: agreement, identification: identification,
                                       clientInit: clientInit, serverInit: serverInit),
               (try? checkSignature(reply.signature, over: hash, key: certified, hostKeyAlgorithm: negotiated.hostKey)) != nil {
                report.malformedKey = MalformedHostKey(algorithm: negotiated.hostKey, blob: reply.hostKeyBlob, reason: "\(error)")
            }
            throw KeyExchangeFailures.kexFailed("the server's host key is malformed (\(error))")
        }
        guard key.type == KeyType.canonicalName(negotiated.hostKey) else {
            throw KeyExchangeFailures.kexFailed("the server sent a \(Sanitizer.clean(key.type, limit: 64)) key for \(negotiated.hostKey)")
        }
        guard let hash = exchangeHash(reply: reply, agreement: agreement, identification: identification,
                                      clientInit: clientInit, serverInit: serverInit) else {
            throw KeyExchangeFailures.kexFailed("the server's X25519 public value is invalid")
        }
        try checkSignature(reply.signature, over: hash, key: key, hostKeyAlgorithm: negotiated.hostKey)
        return DiscoveredKey(key: key, algorithms: negotiated)
    }

    /// H of RFC 8731; nil when the server's X25519 value is invalid.
    private static func exchangeHash(reply: ECDHReply, agreement: borrowing Curve25519KeyAgreement, identification: IdentificationExchange.ServerIdentification,
                                     clientInit: KexInit, serverInit: KexInit) -> [UInt8]? {
        guard let secret = agreement.sharedSecret(serverPublicKey: reply.serverPublicKey) else { return nil }
        return Curve25519KeyAgreement.exchangeHash(
            clientVersion: IdentificationExchange.clientVersion, serverVersion: identification.version,
            clientKexInit: clientInit.payload, serverKexInit: serverInit.payload, hostKeyBlob: reply.hostKeyBlob,
            clientPublicKey: agreement.publicKey, serverPublicKey: reply.serverPublicKey, sharedSecret: secret)
    }

    /// The plain key at the front of a certificate blob whose later fields do not decode.
    private static func certifiedKey(inMalformed blob: [UInt8], algorithm: String) -> HostKey? {
        guard let kind = KeyType(name: KeyType.canonicalName(algorithm)), kind.isCertificate else { return nil }
        var reader = SSHWireReader(blob)
        guard (try? reader.readUTF8(limit: 128)) == kind.name, (try? reader.readString(limit: 64)) != nil else { return nil }
        let start = reader.offset
        guard (try? kind.plain.skipPublicFields(&reader)) != nil else { return nil }
        var plain = SSHWireWriter()
        plain.writeString(kind.plain.name)
        plain.writeRaw(Array(blob[start..<reader.offset]))
        return try? HostKey(type: kind.plain.name, blob: plain.bytes)
    }

    /// OpenSSH requires the signature algorithm to be exactly the one the host-key algorithm implies
    /// (`rsa-sha2-512` for `rsa-sha2-512-cert-v01@openssh.com`), so a server cannot downgrade to SHA-1.
    private static func checkSignature(_ signature: [UInt8], over hash: [UInt8], key: HostKey,
                                       hostKeyAlgorithm: String) throws(ProbeFailure) {
        let certificateSuffix = "-cert-v01@openssh.com"
        let expected = hostKeyAlgorithm.hasSuffix(certificateSuffix)
            ? String(hostKeyAlgorithm.dropLast(certificateSuffix.count)) : hostKeyAlgorithm
        var reader = SSHWireReader(signature)
        let algorithm = (try? reader.readUTF8(limit: 64)) ?? ""
        guard algorithm == expected else {
            throw KeyExchangeFailures.badSignature("signature algorithm \(Sanitizer.clean(algorithm, limit: 64)) instead of \(expected)")
        }
        guard SignatureVerifier.verify(signatureBlob: signature, data: hash, key: key) else {
            throw KeyExchangeFailures.badSignature("the signature over the exchange hash does not verify")
        }
    }
}

/// SSH_MSG_KEX_ECDH_REPLY (RFC 5656 §4): K_S, Q_S and the signature over H.
private struct ECDHReply {
    var hostKeyBlob: [UInt8]
    var serverPublicKey: [UInt8]
    var signature: [UInt8]

    init(_ payload: [UInt8]) throws(ProbeFailure) {
        guard payload.first == BinaryPacket.Message.kexECDHReply.rawValue else {
            throw KeyExchangeFailures.kexFailed("expected KEX_ECDH_REPLY, got message \(payload.first ?? 0)")
        }
        var reader = SSHWireReader(Array(payload.dropFirst()))
        do {
            hostKeyBlob = try reader.readString(limit: 16 * 1024)
            serverPublicKey = try reader.readString(limit: 256)
            signature = try reader.readString(limit: 8192)
        } catch {
            throw KeyExchangeFailures.kexFailed("malformed KEX_ECDH_REPLY")
        }
    }
}
