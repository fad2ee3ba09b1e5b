import FleetTrustCore

/// The first exchange with a host, through our own key-exchange client, offering host certificates
/// first and then every plain key type.
///
/// The server picks the first offered algorithm it has, so this one exchange yields its
/// certificate if it has one, else a plain key, and its KEXINIT names every host-key algorithm it
/// offers: the exchanges that follow (`HostKeyPlan`) ask for exactly the types still missing, and
/// no handshake is wasted. Our client verifies the server's signature (for a certificate, with the
/// certified key); libssh 0.10, the fallback, could not negotiate a certificate at all.
struct CertificateFirstProbe: Sendable {
    var endpoint: ProbeEndpoint
    var port: Int
    var timeout: Duration
    /// What the connection offers: by default every certificate type first, up front; chosen
    /// from the server's host-key algorithms (see `ExchangeBoard`), where nil means the
    /// connection is not needed; or `ssh`'s own KEXINIT for the host.
    var offer = ExchangeSession.Offer.upFront(CertificateFirstProbe.certificatesFirst)
    /// The key exchange methods `ssh` offers the host.
    var keyExchange = KeyExchangeAlgorithms.openSSHDefault

    static let certificatesFirst = KeyExchangeProbe.certificateAlgorithms + KeyExchangeProbe.plainAlgorithms

    /// `connectDeadline` bounds the connect and the server's identification; the key exchange
    /// then gets the full timeout.
    func run(cancellation: ProbeCancellation, connectDeadline: ContinuousClock.Instant) -> AttemptOutcome {
        let connection: TCPConnection
        do {
            connection = try endpoint.open(deadline: connectDeadline, cancellation: cancellation,
                                           greeting: IdentificationExchange.clientVersion + [0x0d, 0x0a])
        } catch {
            return AttemptOutcome(failure: error)
        }
        cancellation.enter(.keyExchange)
        let report = KeyExchangeProbe.run(fd: connection.fd, host: endpoint.hostName, timeout: timeout.seconds,
                                          identificationSent: true, keyExchange: keyExchange, offer: offer)
        connection.close(cancellation: cancellation)
        return AttemptOutcome(report, report.outcome, cancellation: cancellation)
    }
}
