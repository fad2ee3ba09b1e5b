import COpenSSL
import FleetTrustCore
import Glibc

/// The TLS probe of an `EndpointProbe`: one TLS handshake with the first address that takes a
/// connection, through OpenSSL's libssl, on the calling (dedicated) thread, within the scan's
/// `TargetPoliteness`, after the plain-text upgrade for a STARTTLS service (`StartTLSExchange`): the chain
/// the server sends, the negotiated version and cipher, and whether it stapled
/// an OCSP response. Nothing is verified here (the judge does that from the recorded DER), and
/// nothing is sent after the handshake: not even a close_notify.
///
/// The socket is ours and non-blocking; each wait is a `poll` bounded by the deadline, and a
/// cancel shuts the socket down, which wakes it (see `ProbeCancellation`).
public struct TLSProbe: EndpointProbe {
    public var host: InventoryHost
    /// The name sent as SNI and the plain-text upgrade, if any.
    public var endpoint: TLSEndpoint
    public var timeout: Duration
    let politeness: TargetPoliteness
    /// A TLS endpoint behind a route is not probed (`proxied`): the route is for `ssh`.
    var routes: BastionConnections? { nil }

    /// The probe of `host`, a TLS endpoint (nil for an SSH host).
    public init?(host: InventoryHost, timeout: Duration) {
        guard case .tls(let endpoint) = host.endpoint else { return nil }
        self.init(host: host, endpoint: endpoint, timeout: timeout, politeness: TargetPoliteness())
    }

    init(host: InventoryHost, endpoint: TLSEndpoint, timeout: Duration, politeness: TargetPoliteness) {
        self.host = host
        self.endpoint = endpoint
        self.timeout = timeout
        self.politeness = politeness
    }

    /// Probes the endpoint (see `EndpointProbe.probeEndpoint`).
    public func run(cancellation: ProbeCancellation, due: ContinuousClock.Instant = .now) -> ProbeResult {
        probeEndpoint(cancellation: cancellation, due: due)
    }

    func probe(_ address: ProbeEndpoint, firstDeadline: ContinuousClock.Instant, into result: inout ProbeResult,
               cancellation: ProbeCancellation) -> Bool {
        guard case .direct(let socketAddress) = address else {
            result.failures = [ProbeFailures.proxied(host.route)]
            return true
        }
        let attempt = politeness.run(address, port: host.port, cancellation: cancellation) { fresh in
            TLSAttempt(connect(socketAddress, deadline: fresh ? .now + timeout : firstDeadline, cancellation: cancellation))
        }
        switch attempt.outcome {
        case .success(let handshake):
            result.peerAddress = socketAddress.numeric
            result.proof = .tls(handshake)
            result.failures = []
            return true
        case .failure(let failure) where attempt.connected:
            result.peerAddress = socketAddress.numeric
            result.failures = [failure]
            return true
        case .failure(let failure):
            // Not connected: the next address is tried, unless the attempt ended for another reason.
            result.failures.append(failure)
            return failure.stage != .connect
        }
    }

    /// One connection: connect, the plain-text upgrade of a STARTTLS service, the handshake.
    private func connect(_ address: SocketAddress, deadline: ContinuousClock.Instant,
                         cancellation: ProbeCancellation) -> (connected: Bool, Result<TLSHandshake, ProbeFailure>) {
        let start = ContinuousClock.now
        let connection: TCPConnection
        do {
            connection = try TCPConnection.connect(to: address, deadline: deadline, cancellation: cancellation)
        } catch {
            return (false, .failure(error))
        }
        cancellation.enter(.tlsHandshake)
        // A STARTTLS service's plain-text prelude and the handshake share one timeout.
        let handshakeDeadline = ContinuousClock.now + timeout
        let outcome: Result<TLSHandshake, ProbeFailure>
        if let service = endpoint.startTLS,
           let refusal = StartTLSExchange(service: service).run(fd: connection.fd, deadline: handshakeDeadline, cancellation: cancellation) {
            outcome = .failure(refusal)
        } else {
            let handshake = handshake(fd: connection.fd, start: start, deadline: handshakeDeadline, cancellation: cancellation)
            // A STARTTLS server that answered the whole prelude and then stalls is no silent port.
            if endpoint.startTLS != nil, case .failure(let failure) = handshake, failure == TLSProbeFailures.timeout {
                outcome = .failure(TLSProbeFailures.stalledAfterUpgrade)
            } else {
                outcome = handshake
            }
        }
        connection.close(cancellation: cancellation)
        return (true, outcome)
    }

    private func handshake(fd: Int32, start: ContinuousClock.Instant, deadline: ContinuousClock.Instant,
                           cancellation: ProbeCancellation) -> Result<TLSHandshake, ProbeFailure> {
        ERR_clear_error()
        guard let ssl = SSL_new(TLSClientContext.shared.context) else {
            return .failure(TLSProbeFailures.handshake("cannot create a TLS session"))
        }
        defer { SSL_free(ssl) }
        SSL_set_fd(ssl, fd)
        SSL_set_connect_state(ssl)
        let serverName = endpoint.serverName
        if let serverName { _ = fleettrust_ssl_set_sni(ssl, serverName) }
        _ = fleettrust_ssl_request_ocsp(ssl)
        while true {
            if cancellation.isCancelled { return .failure(ProbeFailures.cancelled) }
            let status = SSL_do_handshake(ssl)
            if status == 1 { break }
            let error = SSL_get_error(ssl, status)
            let events: Int16
            switch error {
            case SSL_ERROR_WANT_READ: events = Int16(POLLIN)
            case SSL_ERROR_WANT_WRITE: events = Int16(POLLOUT)
            default:
                if cancellation.isCancelled { return .failure(ProbeFailures.cancelled) }
                return .failure(TLSProbeFailures.fromOpenSSL(sslError: error))
            }
            guard TCPConnection.wait(fd, for: events, until: deadline) else {
                return .failure(cancellation.isCancelled ? ProbeFailures.cancelled : TLSProbeFailures.timeout)
            }
        }
        let chain = SSL_get_peer_cert_chain(ssl).map { TLSCertificate.derChain($0, limit: TLSHandshake.maximumCertificates) } ?? []
        let version = SSL_get_version(ssl).map { String(cString: $0) } ?? "?"
        let cipher = SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? "?"
        let stapled = fleettrust_ssl_ocsp_response_length(ssl) > 0
        let elapsed = ContinuousClock.now - start
        ERR_clear_error()
        guard !chain.isEmpty else {
            return .failure(ProbeFailure(stage: .tlsHandshake, code: .noCertificate, message: "the server sent no certificate"))
        }
        return .success(TLSHandshake(version: version, cipher: cipher, serverName: serverName, chain: chain, ocspStapled: stapled,
                                     handshakeMilliseconds: Double(elapsed.components.attoseconds) / 1e15
                                        + Double(elapsed.components.seconds) * 1000))
    }
}

/// The one client context every TLS probe's session is made from. Verification is off on
/// purpose (the judge verifies the recorded chain), and the security level is 0 so that a weak
/// key or a SHA-1 signature is recorded and reported (`weak-key`, `sha1-signature`) rather than
/// turned into a handshake failure that hides what the endpoint presents.
final class TLSClientContext: @unchecked Sendable {
    static let shared = TLSClientContext()
    let context: OpaquePointer

    private init() {
        context = SSL_CTX_new(TLS_client_method())!
        _ = fleettrust_ssl_ctx_min_tls12(context)
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        SSL_CTX_set_security_level(context, 0)
        _ = SSL_CTX_set_cipher_list(context, "DEFAULT:@SECLEVEL=0")
    }
}

/// One TLS connection's outcome, as `TargetPoliteness` runs it: whether the TCP connection was
/// made, and the handshake or why not.
struct TLSAttempt: PoliteAttempt {
    var connected: Bool
    var outcome: Result<TLSHandshake, ProbeFailure>

    init(_ attempt: (connected: Bool, outcome: Result<TLSHandshake, ProbeFailure>)) {
        connected = attempt.connected
        outcome = attempt.outcome
    }

    var load: AttemptLoad {
        switch outcome {
        case .success: return AttemptLoad(failure: nil, answered: true, succeeded: true)
        case .failure(let failure): return AttemptLoad(failure: failure, answered: false, succeeded: false)
        }
    }

    static var cancelled: TLSAttempt { TLSAttempt((false, .failure(ProbeFailures.cancelled))) }
}

/// The typed failures of a TLS handshake.
enum TLSProbeFailures {
    static let timeout = ProbeFailure(stage: .tlsHandshake, code: .tlsTimeout, message: "the TLS handshake did not complete in time")
    static let stalledAfterUpgrade = ProbeFailure(stage: .tlsHandshake, code: .startTLSTimeout,
                                                  message: "the server accepted the upgrade to TLS, then did not complete the handshake in time")

    static func handshake(_ why: String) -> ProbeFailure {
        ProbeFailure(stage: .tlsHandshake, code: .tlsHandshakeFailed, message: "TLS handshake failed: \(why)")
    }

    /// OpenSSL's reason for a failed handshake; a peer that answers with something other than
    /// TLS (an SSH banner, plain HTTP) is `not-tls`.
    static func fromOpenSSL(sslError: Int32) -> ProbeFailure {
        let errorNumber = errno
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            if let text = ERR_reason_error_string(code) { reasons.append(String(cString: text)) }
        }
        if reasons.isEmpty {
            if sslError == SSL_ERROR_SYSCALL {
                return errorNumber == 0 ? handshake("the server closed the connection")
                    : handshake(String(cString: strerror(errorNumber)))
            }
            return handshake("error \(sslError)")
        }
        let text = reasons.joined(separator: "; ")
        let notTLS = ["wrong version number", "packet length too long", "unknown protocol", "http request"]
        if reasons.contains(where: { notTLS.contains($0) }) {
            return ProbeFailure(stage: .tlsHandshake, code: .notTLS, message: "the server does not speak TLS (\(text))")
        }
        return handshake(text)
    }
}
