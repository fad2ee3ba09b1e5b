import FleetTrustCore

/// Where one connection attempt of a probe goes: an address we connect to ourselves, or the host
/// behind its route (see `RoutedTarget`). Every attempt (our key exchange, each libssh handshake)
/// opens it the same way and gets a connected descriptor, so nothing else of the probe changes.
enum ProbeEndpoint: Sendable {
    case direct(SocketAddress)
    case routed(RoutedTarget)

    /// The host as the SSH layer names it (libssh's host option, messages).
    var hostName: String {
        switch self {
        case .direct(let address): return address.numeric
        case .routed(let target): return target.host.address
        }
    }

    /// The numeric address connected to; unknown behind a route (and `ssh` skips CheckHostIP there too).
    var peerAddress: String? {
        if case .direct(let address) = self { return address.numeric }
        return nil
    }

    /// `greeting` goes out before the wait for the server's first bytes (our client's
    /// identification; libssh sends its own, so its attempts pass none).
    func open(deadline: ContinuousClock.Instant, cancellation: ProbeCancellation,
              greeting: [UInt8] = []) throws(ProbeFailure) -> TCPConnection {
        switch self {
        case .direct(let address):
            return try TCPConnection.open(to: address, deadline: deadline, cancellation: cancellation, greeting: greeting)
        case .routed(let target):
            cancellation.enter(.proxy)
            return try target.open(deadline: deadline, cancellation: cancellation, greeting: greeting)
        }
    }
}
