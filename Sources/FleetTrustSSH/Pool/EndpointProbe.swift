import FleetTrustCore

/// One protocol's probe of one endpoint: what it proves at one address, or at the host behind
/// its route, with the stages and failure codes that are its own (SSH: the server's
/// identification, the key exchanges, the host keys; TLS: the STARTTLS upgrade and the
/// handshake).
///
/// What comes before a protocol's first byte is the same for every protocol and is written once,
/// in `probeEndpoint`: the inventory's refusal, the route (through the pool's bastions for a
/// protocol that follows it, reported `proxied` for one that does not: a direct probe could reach
/// another machine), name resolution (of the host's `AddressFamily` only), and each address in turn until one answers. Every
/// connection of every protocol goes through the scan's `TargetPoliteness` (one server's limit,
/// the scan's window, the retries load explains), as a `PoliteAttempt`.
///
/// A new protocol is one `Endpoint` case, one probe conforming here (chosen in
/// `InventoryHost.probe`), and one renderer of its proof; docs/DESIGN.md lists the files.
protocol EndpointProbe: Sendable {
    var host: InventoryHost { get }
    /// Bound on each connection attempt (the first counts from when the pool had a thread free).
    var timeout: Duration { get }
    /// The pool's bastion connections, for a protocol probed through a host's route; nil when
    /// the protocol is not, and a host with a route is then reported `proxied`.
    var routes: BastionConnections? { get }

    /// Probes one address (or the host behind its route) into `result`; false when it could not
    /// even be connected to, and the next address is tried.
    func probe(_ address: ProbeEndpoint, firstDeadline: ContinuousClock.Instant, into result: inout ProbeResult,
               cancellation: ProbeCancellation) -> Bool
}

extension EndpointProbe {
    /// Probes the endpoint. `due` is when the pool had a thread free for it: the first attempt's
    /// timeout (name lookup, connect, the server's first answer) counts from then, as
    /// `ssh-keyscan`'s counts from when it opens the connection, so the OS being slow to run a
    /// new thread on a busy machine does not stretch it. Every later address gets the full timeout.
    func probeEndpoint(cancellation: ProbeCancellation, due: ContinuousClock.Instant) -> ProbeResult {
        var result = ProbeResult(host: host.name, port: host.port)
        if let refusal = host.refusal {
            result.failures = [refusal.failure]
            return result
        }
        var deadline = Self.firstDeadline(due: due, timeout: timeout)
        if !host.route.isDirect {
            guard let routes else {
                result.failures = [ProbeFailures.proxied(host.route)]
                return result
            }
            _ = probe(.routed(RoutedTarget(host: host, connections: routes)), firstDeadline: deadline, into: &result,
                      cancellation: cancellation)
            return result
        }
        switch Resolver.resolve(host.address, port: host.port, family: host.sshOptions.addressFamily ?? .any,
                                deadline: deadline, cancellation: cancellation) {
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
}

extension EndpointProbe {
    /// The deadline of the first connection attempt: `timeout` after `due`, but never less than
    /// a second (or the whole timeout, if shorter) from now, so a thread that started very late
    /// still gives the host a fair chance to answer.
    static func firstDeadline(due: ContinuousClock.Instant, timeout: Duration,
                              now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
        max(min(due, now) + timeout, now + min(timeout, .seconds(1)))
    }
}

extension InventoryHost {
    /// The probe the pool runs for this row, chosen by its endpoint.
    func probe(timeout: Duration, scheduler: AttemptScheduler, routes: BastionConnections,
               sshHostKeyAlgorithms: [String]? = nil) -> any EndpointProbe {
        switch endpoint {
        case .ssh: return HostProbe(host: self, timeout: timeout, scheduler: scheduler, routes: routes,
                                    sshHostKeyAlgorithms: sshHostKeyAlgorithms)
        case .tls(let tls): return TLSProbe(host: self, endpoint: tls, timeout: timeout, politeness: scheduler.politeness)
        }
    }
}
