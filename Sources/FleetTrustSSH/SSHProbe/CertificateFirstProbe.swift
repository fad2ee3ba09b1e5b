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
    /// The algorithms offered, in preference order (by default every certificate type first).
    var offered = CertificateFirstProbe.certificatesFirst

    /// When set, the offer is chosen from the server's host-key algorithms (see `ExchangeBoard`)
    /// instead of `offered`; nil from it means the connection is not needed.
    var choose: (@Sendable ([String]) -> [String]?)?
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
        let report = if let choose {
            KeyExchangeProbe.run(fd: connection.fd, host: endpoint.hostName, timeout: timeout.seconds,
                                 identificationSent: true, keyExchange: keyExchange, choosing: choose)
        } else {
            KeyExchangeProbe.run(host: endpoint.hostName, port: port, hostKeyAlgorithms: offered,
                                 timeout: timeout.seconds, fd: connection.fd, identificationSent: true, keyExchange: keyExchange)
        }
        connection.close(cancellation: cancellation)
        return AttemptOutcome(report, report.outcome, cancellation: cancellation)
    }
}
