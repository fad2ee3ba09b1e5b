import FleetTrustCore

/// Fetches one host key or host certificate through a real key exchange, with proof of possession.
///
/// libssh 0.10 cannot negotiate `*-cert-v01@openssh.com` host-key algorithms, and
/// `ssh-keyscan -c` fetches certificates without checking anything. This minimal, read-only SSH
/// client (RFC 4253 transport read with OpenSSH's limits; the key exchanges of `KeyExchangeMethod`)
/// runs the exchange itself and checks the server's signature over the exchange hash with the host
/// key (for a certificate, the certified key), then disconnects before NEWKEYS: no session keys,
/// no authentication, nothing encrypted. Whether a certificate's CA signature is valid and trusted is the trust engine's
/// question (`HostCertificate.isSignatureValid`). Synchronous: run it on a dedicated thread.
public enum KeyExchangeProbe {
    public static let certificateAlgorithms = [
        "ssh-ed25519-cert-v01@openssh.com", "ecdsa-sha2-nistp256-cert-v01@openssh.com",
        "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521-cert-v01@openssh.com",
        "sk-ssh-ed25519-cert-v01@openssh.com", "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
        "rsa-sha2-512-cert-v01@openssh.com", "rsa-sha2-256-cert-v01@openssh.com",
    ]
    public static let plainAlgorithms = [
        "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", "rsa-sha2-512", "rsa-sha2-256",
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
    /// `identificationSent`: the caller already sent our identification on `fd` (see
    /// `TCPConnection.awaitServer`). `keyExchange` is what `ssh` offers the host
    /// (`KeyExchangeAlgorithms.offered`); this client offers the methods of it that it implements.
    public static func run(host: String, port: Int, hostKeyAlgorithms: [String], timeout: Double,
                           fd: Int32? = nil, identificationSent: Bool = false,
                           keyExchange: [String] = KeyExchangeAlgorithms.openSSHDefault) -> KeyExchangeReport {
        var offered: [String] = []
        for name in hostKeyAlgorithms where supportedAlgorithms.contains(name) && !offered.contains(name) {
            offered.append(name)
        }
        return perform(host: host, port: port, offer: .upFront(offered), keyExchange: keyExchange, timeout: timeout, fd: fd,
                       identificationSent: identificationSent)
    }

    /// Runs one key exchange over the connected socket `fd` (which stays the caller's) with
    /// `offer`. An `.afterServer` offer decides what to offer only once the server's KEXINIT has
    /// named its host-key algorithms (nil: this connection is not needed, and it disconnects):
    /// OpenSSH sends its KEXINIT only after our identification arrives, so waiting for it before
    /// sending ours costs no round trip, and lets several connections to one server each ask for
    /// a different key type from the start.
    static func run(fd: Int32, host: String, timeout: Double, identificationSent: Bool = false,
                    keyExchange: [String] = KeyExchangeAlgorithms.openSSHDefault, offer: ExchangeSession.Offer) -> KeyExchangeReport {
        perform(host: host, port: 0, offer: offer, keyExchange: keyExchange, timeout: timeout, fd: fd,
                identificationSent: identificationSent)
    }

    private typealias Offer = ExchangeSession.Offer

    /// Drives one `ExchangeSession` on the calling thread, which blocks in `poll` until the deadline.
    private static func perform(host: String, port: Int, offer: Offer, keyExchange: [String], timeout: Double, fd: Int32?,
                                identificationSent: Bool = false) -> KeyExchangeReport {
        let started = ContinuousClock.now
        let seconds = timeout.isNaN ? 0 : min(max(timeout, 0), 86_400)
        let deadline = started + .milliseconds(Int64(seconds * 1000))
        let session: ExchangeSession
        do {
            session = try ExchangeSession(offer: offer, keyExchange: keyExchange)
        } catch {
            return KeyExchangeReport(outcome: .failure(error))
        }
        var peer: String?
        let outcome: Result<DiscoveredKey, ProbeFailure>
        do throws(ProbeFailure) {
            var socket = if let fd { TransportSocket(adopting: fd, deadline: deadline) }
                         else { try TransportSocket.connect(host: host, port: port, deadline: deadline) }
            peer = socket.peerAddress
            var key = try drive(session, over: &socket, identificationSent: identificationSent)
            try? socket.write(BinaryPacket.goodbye)
            key.handshakeMilliseconds = (ContinuousClock.now - started).milliseconds
            outcome = .success(key)
        } catch {
            outcome = .failure(error)
        }
        var report = session.report
        report.outcome = outcome
        report.peerAddress = peer
        return report
    }

    private static func drive(_ session: ExchangeSession, over socket: inout TransportSocket,
                              identificationSent: Bool) throws(ProbeFailure) -> DiscoveredKey {
        do {
            let identification = IdentificationExchange.clientVersion.count + 2
            try socket.write(identificationSent ? Array(session.opening.dropFirst(identification)) : session.opening)
        } catch {
            throw KeyExchangeFailures.transport(error, stage: .banner)
        }
        while true {
            let step: ExchangeSession.Step
            do {
                step = try session.advance()
            } catch {
                if error == KeyExchangeFailures.notNeeded { try? socket.write(BinaryPacket.goodbye) }
                throw error
            }
            switch step {
            case .needMore:
                do {
                    try socket.fill(into: &session.buffer)
                } catch {
                    throw session.failure(error)
                }
            case .send(let bytes):
                do {
                    try socket.write(bytes)
                } catch {
                    throw KeyExchangeFailures.transport(error, stage: .keyExchange)
                }
            case .proved(let key):
                return key
            }
        }
    }

    /// `run`, when only the key or the failure matters.
    public static func fetchHostKey(host: String, port: Int, hostKeyAlgorithms: [String], timeout: Double,
                                    fd: Int32? = nil) -> Result<DiscoveredKey, ProbeFailure> {
        run(host: host, port: port, hostKeyAlgorithms: hostKeyAlgorithms, timeout: timeout, fd: fd).outcome
    }
}
