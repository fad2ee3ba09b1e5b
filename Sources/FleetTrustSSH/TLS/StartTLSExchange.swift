import FleetTrustCore
import Glibc

/// Runs a `StartTLSDialogue` over a connected non-blocking socket, on the probe's dedicated thread
/// (as `TLSProbe` runs the handshake): each wait is a `poll` bounded by the deadline, and a cancel
/// shuts the socket down, which wakes it. Bounded in time by the deadline and in bytes by the
/// dialogue (64 KiB in all, 8 KiB a line), so a server that floods, dribbles or never upgrades
/// costs one probe's timeout at most. On success the socket is where the TLS handshake begins.
struct StartTLSExchange {
    let service: StartTLSProtocol

    /// Nil when the server permitted the upgrade; otherwise the probe's failure (stage
    /// `tls-handshake`): a port silent all along is `tls-timeout`, as for a TLS endpoint.
    func run(fd: Int32, deadline: ContinuousClock.Instant, cancellation: ProbeCancellation) -> ProbeFailure? {
        var dialogue = StartTLSDialogue(service)
        if !dialogue.opening.isEmpty, let failure = send(dialogue.opening, fd: fd, deadline: deadline, cancellation: cancellation) {
            return failure
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if cancellation.isCancelled { return ProbeFailures.cancelled }
            switch dialogue.next() {
            case .upgrade: return nil
            case .fail(let failure):
                return ProbeFailure(stage: .tlsHandshake, code: failure.kind == .notOffered ? .startTLSNotOffered : .startTLSFailed,
                                    message: failure.message)
            case .send(let bytes):
                if let failure = send(bytes, fd: fd, deadline: deadline, cancellation: cancellation) { return failure }
            case .wait:
                guard TCPConnection.wait(fd, for: Int16(POLLIN), until: deadline) else {
                    if cancellation.isCancelled { return ProbeFailures.cancelled }
                    return dialogue.heardAnything
                        ? failure(.startTLSTimeout, "stopped answering before the upgrade to TLS")
                        : failure(.tlsTimeout, "did not answer in time")
                }
                // A cancel shuts the socket down, which reads as the server's end: it is ours.
                if cancellation.isCancelled { return ProbeFailures.cancelled }
                let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count > 0 {
                    dialogue.receive(buffer[..<count])
                } else if count == 0 {
                    return failure(.startTLSFailed, "closed the connection before the upgrade to TLS")
                } else if errno != EAGAIN && errno != EINTR {
                    if cancellation.isCancelled { return ProbeFailures.cancelled }
                    return failure(.startTLSFailed, "broke the connection before the upgrade to TLS: \(String(cString: strerror(errno)))")
                }
            }
        }
    }

    /// Sends every byte, waiting for room until the deadline.
    private func send(_ bytes: [UInt8], fd: Int32, deadline: ContinuousClock.Instant, cancellation: ProbeCancellation) -> ProbeFailure? {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            if count > 0 {
                sent += count
                continue
            }
            if cancellation.isCancelled { return ProbeFailures.cancelled }
            guard count < 0, errno == EAGAIN || errno == EINTR else {
                return failure(.startTLSFailed, "broke the connection before the upgrade to TLS: \(String(cString: strerror(errno)))")
            }
            guard TCPConnection.wait(fd, for: Int16(POLLOUT), until: deadline) else {
                return cancellation.isCancelled ? ProbeFailures.cancelled : failure(.startTLSTimeout, "stopped reading before the upgrade to TLS")
            }
        }
        return nil
    }

    private func failure(_ code: FailureCode, _ what: String) -> ProbeFailure {
        ProbeFailure(stage: .tlsHandshake, code: code, message: "the \(service.displayName) server \(what)")
    }
}
