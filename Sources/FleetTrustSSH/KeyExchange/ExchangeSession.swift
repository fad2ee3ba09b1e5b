import FleetTrustCore

/// One key exchange of `KeyExchangeProbe` as a state machine: fed the bytes the server sends,
/// it says what to send back and when the exchange is proved or failed.
///
/// It never touches a socket, so the same protocol code runs under a thread blocked in `poll`
/// (`KeyExchangeProbe.run`) and under the event loops that keep thousands of exchanges in
/// flight on a few threads (`ExchangeEngine`). Every parse step takes only whole lines and whole
/// packets out of `buffer`, so it can be retried whenever more bytes arrive.
final class ExchangeSession {
    /// What a run offers: a list fixed up front (sent with our identification), one chosen
    /// from the server's list, or `ssh`'s own KEXINIT (`KexInit(sshOffering:keyExchange:)`) for
    /// this host-key list, sent when `ssh` sends it: as soon as the server's identification is read.
    enum Offer: Sendable {
        /// These host-key algorithms, sent at once, with the host's ciphers and MACs (`ssh`'s for it).
        case upFront([String], ciphers: [String] = TransportAlgorithms.openSSHDefaultCiphers,
                     macs: [String] = TransportAlgorithms.openSSHDefaultMACs)
        /// The host-key algorithms `choose` picks from the server's list, sent once it has arrived,
        /// with the host's ciphers and MACs.
        case afterServer(@Sendable ([String]) -> [String]?, ciphers: [String] = TransportAlgorithms.openSSHDefaultCiphers,
                         macs: [String] = TransportAlgorithms.openSSHDefaultMACs)
        /// The host-key algorithms, ciphers and MACs as `ssh` lists them for the host
        /// (`TransportAlgorithms` applies its `Ciphers` and `MACs`).
        case likeSSH([String], ciphers: [String] = TransportAlgorithms.openSSHDefaultCiphers,
                     macs: [String] = TransportAlgorithms.openSSHDefaultMACs)
    }

    /// What the driver does next.
    enum Step {
        /// Wait for more bytes from the server.
        case needMore
        /// Send these bytes, then ask again.
        case send([UInt8])
        /// The server proved this key; send `BinaryPacket.goodbye` and close.
        case proved(DiscoveredKey)
    }

    private enum State {
        case identification
        case serverInit
        case skipGuess
        case reply
        case finished
    }

    var buffer = ReceiveBuffer()
    /// What the exchange learned so far; its outcome is the driver's to fill in.
    var report = KeyExchangeReport(outcome: .failure(KeyExchangeFailures.kexFailed("not started")))
    /// Our identification, with our KEXINIT when the offer is fixed up front: the first bytes to send.
    let opening: [UInt8]

    private let offer: Offer
    /// The key exchange methods `ssh` offers the host (`KeyExchangeAlgorithms.offered`).
    private let keyExchange: [String]
    /// The client side of the agreed method, made once the method is known.
    private var agreement: (any KeyAgreement)?
    private var method: KeyExchangeMethod?
    private var state = State.identification
    private var identificationReader = IdentificationExchange.Reader()
    private var identification: IdentificationExchange.ServerIdentification?
    private var clientInit: KexInit?
    private var serverInit: KexInit?
    private var negotiated: NegotiatedAlgorithms?
    /// Packets the server sent before its KEXINIT (they give its KEXINIT a sequence number above 0).
    private var packetsBeforeServerInit = 0
    /// kex-strict: both sides offered it (Terrapin's fix, in Debian's 9.2 as in OpenSSH 9.6).
    private var strict = false

    init(offer: Offer, keyExchange: [String] = KeyExchangeAlgorithms.openSSHDefault) throws(ProbeFailure) {
        self.offer = offer
        self.keyExchange = keyExchange
        var opening = IdentificationExchange.clientVersion + [0x0d, 0x0a]
        switch offer {
        case .upFront(let offered, let ciphers, let macs):
            guard !offered.isEmpty else { throw KeyExchangeFailures.noCommonAlgorithm("host key", server: []) }
            let sent = KexInit(clientOffering: offered, keyExchange: keyExchange, ciphers: ciphers, macs: macs)
            clientInit = sent
            opening += BinaryPacket.frame(sent.payload)
        case .likeSSH(let offered, let ciphers, let macs):
            guard !offered.isEmpty else { throw KeyExchangeFailures.noCommonAlgorithm("host key", server: []) }
            clientInit = KexInit(sshOffering: offered, keyExchange: keyExchange, ciphers: ciphers, macs: macs)
        case .afterServer:
            break
        }
        self.opening = opening
    }

    /// Whether the server's identification has arrived (failures before it are the banner's).
    var identified: Bool { identification != nil }

    /// The failure for a connection that ended (`closed`, a system error) or stalled (`timeout`)
    /// in the middle of the exchange.
    func failure(_ error: TransportSocket.Failure) -> ProbeFailure {
        identified ? KeyExchangeFailures.transport(error, stage: .keyExchange)
                   : identificationReader.failure(error, in: buffer)
    }

    /// Takes the exchange as far as the bytes received allow. Throws the failure that ends it
    /// (`KeyExchangeFailures.notNeeded` when `choose` declined: send the goodbye and close).
    func advance() throws(ProbeFailure) -> Step {
        while true {
            switch state {
            case .identification:
                guard let identification = try identificationReader.read(from: &buffer) else { return .needMore }
                self.identification = identification
                report.serverVersion = Sanitizer.clean(bytes: identification.version, limit: 255)
                report.serverPreamble = identification.preamble
                state = .serverInit
                // sshconnect.c: `ssh` sends its KEXINIT once it has read the server's identification.
                if case .likeSSH = offer, let clientInit { return .send(BinaryPacket.frame(clientInit.payload)) }
            case .serverInit:
                guard let payload = try BinaryPacket.takeMessage(from: &buffer, stage: .keyExchange, strict: false,
                                                                 skipped: &packetsBeforeServerInit) else { return .needMore }
                guard payload[0] == BinaryPacket.Message.kexInit.rawValue else {
                    try dispatchUnexpected(payload[0])
                    packetsBeforeServerInit += 1
                    continue
                }
                let serverInit = try KexInit(parsing: payload)
                self.serverInit = serverInit
                report.serverHostKeyAlgorithms = serverInit.reported.hostKey
                report.serverKeyExchangeAlgorithms = serverInit.reported.keyExchange
                var outgoing: [UInt8] = []
                if case .afterServer(let choose, let ciphers, let macs) = offer {
                    let chosen = (choose(report.serverHostKeyAlgorithms) ?? []).filter(KeyExchangeProbe.supportedAlgorithms.contains)
                    guard !chosen.isEmpty else {
                        state = .finished
                        throw KeyExchangeFailures.notNeeded
                    }
                    let sent = KexInit(clientOffering: chosen, keyExchange: keyExchange, ciphers: ciphers, macs: macs)
                    clientInit = sent
                    outgoing = BinaryPacket.frame(sent.payload)
                }
                guard let clientInit else { throw KeyExchangeFailures.kexFailed("no KEXINIT sent") }
                // kex.c (`kex_choose_conf`, OpenSSH 9.6 and Debian's 9.2): strict when the peer lists
                // kex-strict-s; then its KEXINIT must have been its first packet.
                strict = serverInit[.keyExchange].contains(KexInit.strictServerMarker)
                if strict && packetsBeforeServerInit > 0 {
                    throw KeyExchangeFailures.kexFailed("strict KEX violation: KEXINIT was not the first packet")
                }
                let negotiated = try KexInit.negotiate(client: clientInit, server: serverInit)
                self.negotiated = negotiated
                guard let method = KeyExchangeMethod(rawValue: negotiated.keyExchange) else {
                    throw KeyExchangeFailures.kexFailed("no method for \(negotiated.keyExchange)")
                }
                let agreement = try method.makeAgreement(negotiated)
                self.method = method
                self.agreement = agreement
                state = KexInit.serverGuessWasWrong(client: clientInit, server: serverInit) ? .skipGuess : .reply
                let first = BinaryPacket.frame(agreement.firstMessage)
                return .send(outgoing.isEmpty ? first : outgoing + first)
            case .skipGuess:
                // dispatch.c: the wrongly guessed packet is the next one handed to the dispatch
                // table (not an IGNORE or DEBUG before it, unless strict), skipped if it has a handler.
                guard let payload = try BinaryPacket.takeMessage(from: &buffer, stage: .keyExchange, strict: strict) else {
                    return .needMore
                }
                try Self.checkHandled(payload[0])
                state = .reply
            case .reply:
                guard let payload = try BinaryPacket.takeMessage(from: &buffer, stage: .keyExchange, strict: strict) else {
                    return .needMore
                }
                guard let agreement else { throw KeyExchangeFailures.kexFailed("a reply before the negotiation") }
                if let interim = agreement.interimMessage {
                    guard payload[0] == interim else {
                        try dispatchUnexpected(payload[0])
                        continue
                    }
                    return .send(BinaryPacket.frame(try agreement.answer(payload)))
                }
                guard payload[0] == agreement.replyMessage else {
                    try dispatchUnexpected(payload[0])
                    continue
                }
                state = .finished
                return .proved(try verify(ExchangeReply(payload)))
            case .finished:
                throw KeyExchangeFailures.kexFailed("the exchange is over")
            }
        }
    }

    /// A message the exchange does not wait for, as OpenSSH's client dispatches it during its first
    /// key exchange (dispatch.c, kex.c): a transport message (1-49, a second KEXINIT too since the
    /// kex-strict change) goes to `kex_protocol_error`, which answers UNIMPLEMENTED and goes on, or
    /// under kex-strict ends the exchange; anything else has no handler and ends it.
    private func dispatchUnexpected(_ type: UInt8) throws(ProbeFailure) {
        try Self.checkHandled(type)
        if strict {
            throw KeyExchangeFailures.kexFailed("strict KEX violation: unexpected packet type \(type)")
        }
    }

    /// dispatch.c: a type without a handler ends the connection ("protocol error: rcvd type");
    /// during the key exchange messages 1-49 have one.
    private static func checkHandled(_ type: UInt8) throws(ProbeFailure) {
        guard (1...49).contains(type) else {
            throw KeyExchangeFailures.kexFailed("protocol error: unexpected message \(type) during the key exchange")
        }
    }

    /// Checks the server's reply: the key decodes, matches the negotiated algorithm, and signed
    /// the exchange hash.
    private func verify(_ reply: ExchangeReply) throws(ProbeFailure) -> DiscoveredKey {
        guard let negotiated, let identification, let clientInit, let serverInit, let agreement, let method else {
            throw KeyExchangeFailures.kexFailed("a reply before the negotiation")
        }
        let hash = { () throws(ProbeFailure) -> [UInt8] in
            method.exchangeHash.exchangeHash(
                clientVersion: IdentificationExchange.clientVersion, serverVersion: identification.version,
                clientKexInit: clientInit.payload, serverKexInit: serverInit.payload, hostKeyBlob: reply.hostKeyBlob,
                methodValues: try agreement.hashedValues(serverValue: reply.serverValue))
        }
        let key: HostKey
        do {
            key = try HostKey(blob: reply.hostKeyBlob)
        } catch {
            // A certificate whose body does not decode may still carry a key the server signs
            // with: if it proves that key, keep the certificate as evidence of a broken or hostile server.
            if let certified = Self.certifiedKey(inMalformed: reply.hostKeyBlob, algorithm: negotiated.hostKey),
               let hash = try? hash(),
               (try? Self.checkSignature(reply.signature, over: hash, key: certified, hostKeyAlgorithm: negotiated.hostKey)) != nil {
                report.malformedKey = MalformedHostKey(algorithm: negotiated.hostKey, blob: reply.hostKeyBlob, reason: "\(error)")
            }
            throw KeyExchangeFailures.kexFailed("the server's host key is malformed (\(error))")
        }
        guard key.type == KeyType.canonicalName(negotiated.hostKey) else {
            throw KeyExchangeFailures.kexFailed("the server sent a \(Sanitizer.clean(key.type, limit: 64)) key for \(negotiated.hostKey)")
        }
        let digest = try hash()
        try Self.checkSignature(reply.signature, over: digest, key: key, hostKeyAlgorithm: negotiated.hostKey)
        return DiscoveredKey(key: key, algorithms: negotiated)
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

    /// OpenSSH requires the signature algorithm to be the one the host-key algorithm implies
    /// (`rsa-sha2-512` for `rsa-sha2-512-cert-v01@openssh.com`, the plain key's name for other
    /// certificates), so a server cannot downgrade to SHA-1; as its verifiers do, a security
    /// key's ECDSA signature may also be the WebAuthn form, and under SHA-1's
    /// `ssh-rsa-cert-v01@openssh.com` any RSA signature is taken (`ssh_rsa_verify` checks the hash
    /// only against another name). The name is read as `sshbuf_get_cstring` reads it (a NUL at its
    /// very end ends it).
    private static func checkSignature(_ signature: [UInt8], over hash: [UInt8], key: HostKey,
                                       hostKeyAlgorithm: String) throws(ProbeFailure) {
        let certificateSuffix = "-cert-v01@openssh.com"
        let kind = KeyType(name: KeyType.canonicalName(hostKeyAlgorithm))
        let expected = hostKeyAlgorithm.hasPrefix("rsa-sha2-") && hostKeyAlgorithm.hasSuffix(certificateSuffix)
            ? String(hostKeyAlgorithm.dropLast(certificateSuffix.count))
            : kind.map { $0.isCertificate ? $0.plain.name : hostKeyAlgorithm } ?? hostKeyAlgorithm
        let accepted: Set<String> = switch expected {
        case "sk-ecdsa-sha2-nistp256@openssh.com": [expected, "webauthn-sk-ecdsa-sha2-nistp256@openssh.com"]
        case "ssh-rsa" where hostKeyAlgorithm == "ssh-rsa-cert-v01@openssh.com": ["ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"]
        default: [expected]
        }
        var reader = SSHWireReader(signature)
        let algorithm = (try? reader.readCString(limit: 65)) ?? ""
        guard accepted.contains(algorithm) else {
            throw KeyExchangeFailures.badSignature("signature algorithm \(Sanitizer.clean(algorithm, limit: 64)) instead of \(expected)")
        }
        guard SignatureVerifier.verify(signatureBlob: signature, data: hash, key: key) else {
            throw KeyExchangeFailures.badSignature("the signature over the exchange hash does not verify")
        }
    }
}

/// The server's reply of every method (KEX_ECDH_REPLY of RFC 5656 §4, KEXDH_REPLY of RFC 4253 §8,
/// KEX_DH_GEX_REPLY of RFC 4419 §3): K_S, the server's public value (a string or an mpint, both
/// length-prefixed) and the signature over H.
private struct ExchangeReply {
    var hostKeyBlob: [UInt8]
    var serverValue: [UInt8]
    var signature: [UInt8]

    init(_ payload: [UInt8]) throws(ProbeFailure) {
        // kexecdh.c, kexdh.c, kexgexc.c: each field is as large as the packet allows (a host
        // certificate of over 16 KiB is a certificate).
        var reader = SSHWireReader(payload)
        do {
            _ = try reader.readByte()
            hostKeyBlob = try reader.readString(limit: BinaryPacket.maximumLength)
            serverValue = try reader.readString(limit: BinaryPacket.maximumLength)
            signature = try reader.readString(limit: BinaryPacket.maximumLength)
        } catch {
            throw KeyExchangeFailures.kexFailed("malformed key-exchange reply (message \(payload.first ?? 0))")
        }
        // `sshpkt_get_end` (kexgen.c, kexgexc.c): nothing may follow the signature.
        guard reader.isAtEnd else {
            throw KeyExchangeFailures.kexFailed("bytes after the signature of the key-exchange reply")
        }
    }
}
