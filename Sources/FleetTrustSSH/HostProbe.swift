import FleetTrustCore

/// Everything we can prove about one endpoint: every host key and host certificate it holds.
///
/// Resolves once, then for the first address that answers: one `CertificateFirstProbe` (a
/// certificate or a plain key, and the server's host-key algorithms), then one handshake per key
/// type still missing, following a `HostKeyPlan`: all at once when the server's list is known,
/// one by one otherwise. Each is our own key-exchange client's; libssh takes over a key type our
/// client cannot negotiate (a server without curve25519). A failure before the key exchange (no
/// address, no connection, no SSH) or a stalled exchange ends the probe: the other key types
/// would fail the same way, one timeout each. Every connection goes through the scan's
/// `TargetPoliteness`. Runs on the calling (dedicated) thread.
public struct HostProbe: Sendable {
    public var host: InventoryHost
    /// Bound on each connection attempt: on the TCP connect and the server's identification, and
    /// again on the key exchange.
    public var timeout: Duration
    let scheduler: AttemptScheduler
    /// The scan's bastion connections, which a host with a route is probed through; without
    /// them such a host is not probed (`proxied`).
    let routes: BastionConnections?

    public init(host: InventoryHost, timeout: Duration) {
        self.init(host: host, timeout: timeout, scheduler: AttemptScheduler(helperThreads: 4), routes: nil)
    }

    init(host: InventoryHost, timeout: Duration, scheduler: AttemptScheduler, routes: BastionConnections?) {
        self.host = host
        self.timeout = timeout
        self.scheduler = scheduler
        self.routes = routes
    }

    /// Probes the host. `due` is when the pool had a thread free for it: the first attempt's
    /// timeout (name lookup, connect, the server's identification) counts from then, as
    /// `ssh-keyscan`'s counts from when it opens the connection, so the OS being slow to run a
    /// new thread on a busy machine does not stretch it. Every later stage gets the full timeout.
    public func run(cancellation: ProbeCancellation, due: ContinuousClock.Instant = .now) -> ProbeResult {
        var result = ProbeResult(host: host.name, port: host.port)
        var deadline = Self.firstDeadline(due: due, timeout: timeout)
        if let refusal = host.refusal {
            result.failures = [refusal.failure]
            return result
        }
        if let proxy = host.proxy, !host.route.isDirect {
            guard let routes else {
                result.failures = [ProbeFailures.proxied(proxy)]
                return result
            }
            _ = probe(.routed(RoutedTarget(host: host, connections: routes)), firstDeadline: deadline, into: &result,
                      cancellation: cancellation)
            return result
        }
        switch Resolver.resolve(host.address, port: host.port, deadline: deadline, cancellation: cancellation) {
        case .success(let addresses):
            for address in addresses {
                if probe(.direct(address), firstDeadline: deadline, into: &result, cancellation: cancellation) { break }
                deadline = .now + timeout
            }
        case .failure(let failure):
            result.failures = [failure]
        }
        return result
    }

    /// The deadline of the first connection attempt: `timeout` after `due`, but never less than
    /// a second (or the whole timeout, if shorter) from now, so a thread that started very late
    /// still gives the host a fair chance to answer.
    static func firstDeadline(due: ContinuousClock.Instant, timeout: Duration,
                              now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
        max(min(due, now) + timeout, now + min(timeout, .seconds(1)))
    }

    /// Probes one address (or the host behind its route); false when it could not even be
    /// connected to (try the next address).
    private func probe(_ address: ProbeEndpoint, firstDeadline: ContinuousClock.Instant, into result: inout ProbeResult,
                       cancellation: ProbeCancellation) -> Bool {
        var plan = HostKeyPlan()
        let opening = scheduler.politeness.run(address, cancellation: cancellation) { fresh in
            CertificateFirstProbe(endpoint: address, port: host.port, timeout: timeout)
                .run(cancellation: cancellation, connectDeadline: fresh ? .now + timeout : firstDeadline)
        }
        if let failure = opening.failure {
            switch failure.stage {
            case .connect:
                result.failures.append(failure)
                return false
            case .resolve, .banner, .cancelled, .hostKey, .proxy, .tlsHandshake:
                result.failures.append(failure)
                return true
            case .keyExchange:
                // A server our exchange client cannot talk to: libssh may still.
                if failure.code == .badSignature || failure.code == .kexTimeout { result.failures.append(failure) }
                if failure.code == .kexTimeout { return true }
            }
        }
        result.peerAddress = address.peerAddress
        result.serverVersion = opening.serverVersion
        if let key = opening.key {
            result.keys.append(key)
            plan.found(keyType: key.key.type)
        }
        if let malformed = opening.malformedKey { result.malformedKeys.append(malformed) }
        if let offered = opening.serverHostKeyAlgorithms, !offered.isEmpty {
            plan.learn(serverAlgorithms: offered)
            result.serverHostKeyAlgorithms = offered
        }
        fetchOtherCertificates(address, into: &result, cancellation: cancellation)

        var refused = false
        if plan.serverAlgorithms != nil {
            // The server said which types it has: ask for all of them at once, one connection each.
            var lists: [String] = []
            while let algorithms = plan.next() { lists.append(algorithms) }
            let outcomes = scheduler.all(lists.map { algorithms in { fetch(algorithms, at: address, cancellation: cancellation) } })
            for outcome in outcomes where !take(outcome, into: &result, plan: &plan, refused: &refused) { break }
        } else {
            while let algorithms = plan.next() {
                let outcome = fetch(algorithms, at: address, cancellation: cancellation)
                if !take(outcome, into: &result, plan: &plan, refused: &refused) { break }
            }
        }
        if result.serverHostKeyAlgorithms == nil, let offered = plan.serverAlgorithms { result.serverHostKeyAlgorithms = offered }
        if result.keys.isEmpty && result.failures.isEmpty && (refused || plan.serverAlgorithms != nil) {
            let offered = plan.serverAlgorithms?.joined(separator: ",") ?? "?"
            result.failures = [ProbeFailure(stage: .keyExchange, code: .noCommonAlgorithm,
                                            message: "the server offers no host-key algorithm that can be verified here (it offers \(offered))")]
        }
        return true
    }

    /// One key type (`algorithms`, comma-separated) through our own client, and through libssh
    /// when ours cannot negotiate with this server.
    private func fetch(_ algorithms: String, at address: ProbeEndpoint, cancellation: ProbeCancellation) -> AttemptOutcome {
        let ours = algorithms.split(separator: ",").map(String.init).filter(KeyExchangeProbe.plainAlgorithms.contains)
        if !ours.isEmpty {
            var outcome = scheduler.politeness.run(address, cancellation: cancellation) { _ in
                CertificateFirstProbe(endpoint: address, port: host.port, timeout: timeout, offered: ours)
                    .run(cancellation: cancellation, connectDeadline: .now + timeout)
            }
            guard outcome.key == nil, let failure = outcome.failure, failure.stage == .keyExchange, failure.code != .kexTimeout,
                  !cancellation.isCancelled else {
                // Only libssh's refusal names the server's list; ours learned it from the opening.
                outcome.serverHostKeyAlgorithms = nil
                return outcome
            }
        }
        return scheduler.politeness.run(address, cancellation: cancellation) { _ in
            HostKeyProbe(endpoint: address, port: host.port, hostKeyAlgorithms: algorithms, timeout: timeout)
                .run(cancellation: cancellation)
        }
    }

    /// Takes one key type's outcome into the result; false when it ends the probe.
    private func take(_ outcome: AttemptOutcome, into result: inout ProbeResult, plan: inout HostKeyPlan,
                      refused: inout Bool) -> Bool {
        if result.serverVersion == nil { result.serverVersion = outcome.serverVersion }
        if let key = outcome.key {
            result.keys.append(key)
            plan.found(keyType: key.key.type)
        } else if let offered = outcome.serverHostKeyAlgorithms {
            plan.learn(serverAlgorithms: offered)
            refused = true
        } else if let failure = outcome.failure {
            result.failures.append(failure)
            if Self.endsProbe(failure) { return false }
        }
        return true
    }

    /// The first exchange yields one certificate; a server may hold one per key type, and which
    /// one `ssh` meets depends on what known_hosts records, so every other one is fetched too
    /// (through our own client: libssh cannot negotiate certificates).
    private func fetchOtherCertificates(_ address: ProbeEndpoint, into result: inout ProbeResult,
                                        cancellation: ProbeCancellation) {
        guard let offered = result.serverHostKeyAlgorithms else { return }
        var have = Set(result.keys.map(\.key.type) + result.malformedKeys.map { KeyType.canonicalName($0.algorithm.value) })
        for algorithm in KeyExchangeProbe.certificateAlgorithms where offered.contains(algorithm) {
            let type = KeyType.canonicalName(algorithm)
            guard !have.contains(type), !cancellation.isCancelled else { continue }
            have.insert(type)
            let outcome = scheduler.politeness.run(address, cancellation: cancellation) { _ in
                CertificateFirstProbe(endpoint: address, port: host.port, timeout: timeout, offered: [algorithm])
                    .run(cancellation: cancellation, connectDeadline: .now + timeout)
            }
            if let key = outcome.key { result.keys.append(key) }
            if let malformed = outcome.malformedKey { result.malformedKeys.append(malformed) }
            if let failure = outcome.failure, outcome.malformedKey == nil {
                result.failures.append(failure)
                if Self.endsProbe(failure) { return }
            }
        }
    }

    static func endsProbe(_ failure: ProbeFailure) -> Bool {
        switch failure.stage {
        case .resolve, .connect, .banner, .cancelled, .proxy: return true
        case .keyExchange: return failure.code == .kexTimeout
        case .hostKey, .tlsHandshake: return false
        }
    }
}
