import FleetTrustCore

/// Everything we can prove about one endpoint: every host key it holds, one handshake per type.
///
/// Resolves once, then follows a `HostKeyPlan`. A failure before the key exchange (no address,
/// no connection, no SSH) or a stalled exchange ends the probe at once: the other key types
/// would fail the same way, one timeout each. Runs on the calling (dedicated) thread.
public struct HostProbe: Sendable {
    public var host: InventoryHost
    /// Bound on each connection attempt: TCP connect, identification and key exchange together.
    public var timeout: Duration

    public init(host: InventoryHost, timeout: Duration) {
        self.host = host
        self.timeout = timeout
    }

    public func run(cancellation: ProbeCancellation) -> ProbeResult {
        var result = ProbeResult(host: host.name, port: host.port)
        let addresses: [SocketAddress]
        switch Resolver.resolve(host.address, port: host.port, deadline: .now + timeout, cancellation: cancellation) {
        case .success(let resolved): addresses = resolved
        case .failure(let failure):
            result.failures = [failure]
            return result
        }
        var plan = HostKeyPlan()
        var candidates = addresses[...]
        var refused = false
        while let algorithms = plan.next() {
            guard let address = candidates.first else { break }
            let outcome = HostKeyProbe(address: address, port: host.port, hostKeyAlgorithms: algorithms,
                                       timeout: timeout).run(cancellation: cancellation)
            if result.serverVersion == nil { result.serverVersion = outcome.serverVersion }
            if let key = outcome.key {
                result.peerAddress = address.numeric
                result.keys.append(key)
                plan.found(keyType: key.key.type)
                candidates = [address]
                continue
            }
            guard let failure = outcome.failure else { continue }
            if let offered = outcome.serverHostKeyAlgorithms {
                result.peerAddress = address.numeric
                candidates = [address]
                plan.learn(serverAlgorithms: offered)
                refused = true
                continue
            }
            if failure.stage == .connect && result.peerAddress == nil && candidates.count > 1 {
                candidates = candidates.dropFirst()
                plan = HostKeyPlan()
                result.failures.append(failure)
                continue
            }
            result.failures.append(failure)
            if Self.endsProbe(failure) { break }
        }
        if result.keys.isEmpty && result.failures.isEmpty && refused {
            let offered = plan.serverAlgorithms?.joined(separator: ",") ?? "?"
            result.failures = [ProbeFailure(stage: .keyExchange, code: "no-common-algorithm",
                                            message: "the server offers no host-key algorithm that can be verified here (it offers \(offered))")]
        }
        return result
    }

    static func endsProbe(_ failure: ProbeFailure) -> Bool {
        switch failure.stage {
        case .resolve, .connect, .banner, .cancelled: return true
        case .keyExchange: return failure.code == "kex-timeout"
        }
    }
}
