import FleetTrustCore

/// One key exchange offering only host-certificate algorithms, through our own exchange client.
///
/// libssh 0.10 cannot negotiate certificates, so `KeyExchangeProbe` does this exchange (and
/// verifies the server's signature with the certified key). It runs first for every host: when the
/// server has no certificate it fails right after the algorithm lists are exchanged (no
/// Diffie-Hellman), and either way the server's KEXINIT names every host-key algorithm it offers,
/// so the libssh attempts that follow ask for exactly those.
struct CertificateProbe: Sendable {
    var address: SocketAddress
    var port: Int
    var timeout: Duration

    struct Outcome: Sendable {
        var key: DiscoveredKey?
        var failure: ProbeFailure?
        var serverVersion: String?
        var serverHostKeyAlgorithms: [String] = []
    }

    func run(cancellation: ProbeCancellation) -> Outcome {
        let deadline = ContinuousClock.now + timeout
        let connection: TCPConnection
        do {
            connection = try TCPConnection.open(to: address, deadline: deadline, cancellation: cancellation)
        } catch {
            return Outcome(failure: error)
        }
        let remaining = max(deadline - ContinuousClock.now, .milliseconds(1))
        let report = KeyExchangeProbe.run(host: address.numeric, port: port,
                                          hostKeyAlgorithms: KeyExchangeProbe.certificateAlgorithms,
                                          timeout: remaining.seconds, fd: connection.fd)
        connection.close(cancellation: cancellation)
        var outcome = Outcome(serverVersion: report.serverVersion, serverHostKeyAlgorithms: report.serverHostKeyAlgorithms)
        switch report.outcome {
        case .success(let key): outcome.key = key
        case .failure(let failure): outcome.failure = cancellation.isCancelled ? ProbeFailures.cancelled : failure
        }
        return outcome
    }
}
