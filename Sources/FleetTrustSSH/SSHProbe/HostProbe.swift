import FleetTrustCore
import Synchronization

/// Everything we can prove about one endpoint: every host key and host certificate it holds.
///
/// The SSH probe of an `EndpointProbe`: for the first address that answers (or the host behind
/// its route, through the pool's bastions), one connection shaped byte for byte and moment for
/// moment like `ssh`'s (its KEXINIT, for this host, sent as soon as the server's identification
/// is read), whose key is the key `ssh` meets: a server or relay that tells clients apart before
/// it commits to a host key shows that connection what it shows `ssh`. When it proved a key and
/// read the server's host-key algorithms, only the exchanges still needed follow, all at once:
/// those of `ExchangeBoard.exchanges(for:)` whose offer would not negotiate what it negotiated
/// (three handshakes for a usual server's three keys). Otherwise, one `CertificateFirstProbe` (a
/// certificate or a plain key, and the server's host-key algorithms), then one handshake per key
/// type still missing, following a `HostKeyPlan`: all at once when the server's list is known,
/// one by one otherwise. Each is our own key-exchange client's; libssh takes over a key type our
/// client cannot negotiate (a server without curve25519); when both fail, the failure that got
/// further with the server is the key type's (`ProbeFailures.furthest`). A failure before the key exchange (no
/// address, no connection, no SSH) or a stalled exchange ends the probe: the other key types
/// would fail the same way, one timeout each. Every connection goes through the scan's
/// `TargetPoliteness`. Runs on the calling (dedicated) thread.
public struct HostProbe: EndpointProbe {
    public var host: InventoryHost
    /// Bound on each connection attempt: on the TCP connect and the server's identification, and
    /// again on the key exchange.
    public var timeout: Duration
    let scheduler: AttemptScheduler
    /// The pool's bastion connections, which a host with a route is probed through; without
    /// them such a host is not probed (`proxied`).
    let routes: BastionConnections?
    /// The host-key algorithms `ssh` offers this host, in its order: `HostKeyAlgorithms.offered`
    /// with the known_hosts lines recorded for it (`order_hostkeyalgs`), which the caller knows;
    /// nil: `ssh`'s order with nothing recorded.
    let sshHostKeyAlgorithms: [String]?

    public init(host: InventoryHost, timeout: Duration, sshHostKeyAlgorithms: [String]? = nil) {
        self.init(host: host, timeout: timeout, scheduler: AttemptScheduler(helperThreads: 4), routes: nil,
                  sshHostKeyAlgorithms: sshHostKeyAlgorithms)
    }

    init(host: InventoryHost, timeout: Duration, scheduler: AttemptScheduler, routes: BastionConnections?,
         sshHostKeyAlgorithms: [String]? = nil) {
        self.host = host
        self.timeout = timeout
        self.scheduler = scheduler
        self.routes = routes
        self.sshHostKeyAlgorithms = sshHostKeyAlgorithms
    }

    /// Probes the host (see `EndpointProbe.probeEndpoint`).
    public func run(cancellation: ProbeCancellation, due: ContinuousClock.Instant = .now) -> ProbeResult {
        probeEndpoint(cancellation: cancellation, due: due)
    }

    /// Connections opened to a server at once: one per key type of a usual server (Ed25519,
    /// ECDSA, RSA), so all of them are asked for in the same round trips. Through a bastion or
    /// ProxyCommand, one: each connection there also costs the bastion a channel and a connection
    /// onwards, so the others open once the server has said how many exchanges it needs.
    static func connectionsAtOnce(to address: ProbeEndpoint) -> Int {
        if case .direct = address { return 3 }
        return 1
    }

    /// The key exchange methods `ssh` offers this host: what our client and libssh offer.
    private var keyExchange: [String] { KeyExchangeAlgorithms.offered(host.sshOptions.kexAlgorithms) }

    /// The ciphers and MACs `ssh` offers the host (its `Ciphers` and `MACs`).
    private var transport: (ciphers: [String], macs: [String]) {
        (TransportAlgorithms.ciphers(host.sshOptions.ciphers), TransportAlgorithms.macs(host.sshOptions.macs))
    }

    /// An offer of these host-key algorithms, sent at once, with the ciphers and MACs `ssh`
    /// offers the host (its `Ciphers` and `MACs`): a server that takes only what the user enabled
    /// (CBC on an old switch) answers every connection, not only the one shaped like `ssh`'s.
    private func upFront(_ offered: [String]) -> ExchangeSession.Offer {
        let (ciphers, macs) = transport
        return .upFront(offered, ciphers: ciphers, macs: macs)
    }

    /// The offer of the connection shaped like `ssh`'s; none when the host's `HostKeyAlgorithms`
    /// selects nothing (`ssh` does not start).
    private var likeSSH: [ExchangeSession.Offer] {
        let offered = sshHostKeyAlgorithms ?? (try? HostKeyAlgorithms.offered(host.sshOptions.hostKeyAlgorithms, recorded: [])) ?? []
        let (ciphers, macs) = transport
        return offered.isEmpty ? [] : [.likeSSH(offered, ciphers: ciphers, macs: macs)]
    }

    func probe(_ address: ProbeEndpoint, firstDeadline: ContinuousClock.Instant, into result: inout ProbeResult,
               cancellation: ProbeCancellation) -> Bool {
        // The connection that decides goes first, alone, and the others only once it has ended:
        // a relay that routes a lone connection (what `ssh` opens) one way and a burst another,
        // or that waits to see whether more follow, treats it as it treats `ssh`'s.
        // It is never replaced by a new connection after a timeout (`AttemptOutcome.load(decides:)`):
        // where the scan's load may explain one, it waits one timeout more (`EngineConnection`).
        // The key types not fetched are worked out last (this defer runs after the next one),
        // once the deciding connection's key is in the result too.
        var ledger = FetchLedger()
        defer { ledger.note(into: &result) }
        let shaped = likeSSH
        let sshsOwn = shaped.isEmpty ? nil
            : ours(shaped, at: address, firstDeadline: firstDeadline, decides: true, cancellation: cancellation)[0]
        defer { if let sshsOwn { Self.record(likeSSH: sshsOwn, into: &result) } }
        if let sshsOwn, sshsOwn.serverVersion == nil, let failure = sshsOwn.failure {
            // Not even the server's identification: the others would fail as it did, one
            // timeout each. Not connected at all, the next address is tried, as `ssh` tries it.
            result.failures.append(failure)
            return failure.stage != .connect
        }
        if let sshsOwn, let met = sshsOwn.key?.algorithms?.hostKey, let offered = sshsOwn.serverHostKeyAlgorithms, !offered.isEmpty {
            follow(sshsOwn, negotiated: met, offered: offered, at: address, into: &result, ledger: &ledger, cancellation: cancellation)
            return true
        }
        let board = ExchangeBoard()
        let opening = Self.connectionsAtOnce(to: address)
        let claims = (0..<opening).map { _ in Claim() }
        let early = EarlyExchanges()
        let (ciphers, macs) = transport
        let opened = ours(claims.map { claim in
            .afterServer({ offered in
                // A retry (the exchange timed out under load) asks again for what it claimed.
                if claim.claimed { return claim.exchange?.offered }
                claim.claimed = true
                claim.exchange = board.claim(serverAlgorithms: offered)
                let surplus = board.claimSurplus(beyond: opening)
                if !surplus.isEmpty { start(surplus, at: address, into: early, cancellation: cancellation) }
                return claim.exchange?.offered
            }, ciphers: ciphers, macs: macs)
        }, at: address, firstDeadline: sshsOwn == nil ? firstDeadline : nil, cancellation: cancellation)
        let round = withLibssh(zip(claims, opened).map { ClaimedExchange(exchange: $0.exchange, ours: $1) } + early.wait(),
                               at: address, cancellation: cancellation)
        let claimed = round.filter { $0.exchange != nil }.sorted { $0.exchange!.index < $1.exchange!.index }
        guard let opening = claimed.first, let offered = board.serverAlgorithms else {
            return probeOneByOne(address, opening: round[0].ours, into: &result, ledger: &ledger, cancellation: cancellation)
        }
        complete(claimed, leftover: board.unclaimed, offered: offered, serverVersion: opening.ours.serverVersion, at: address,
                 into: &result, ledger: &ledger, cancellation: cancellation)
        return true
    }

    /// The rest of the probe once the deciding connection proved a key and read the server's
    /// list (`offered`): the exchanges the list needs, but those whose offer negotiates the
    /// algorithm it negotiated (`negotiated`), whose outcome is its own, all at once, up front (a
    /// route's rule holds: the server has said how many exchanges it needs). Three handshakes,
    /// not four, prove a usual server's three keys; every sshd handshake costs the server a fork.
    private func follow(_ deciding: AttemptOutcome, negotiated: String, offered: [String], at address: ProbeEndpoint,
                        into result: inout ProbeResult, ledger: inout FetchLedger, cancellation: ProbeCancellation) {
        let (standIns, followers) = FollowerPlans.shared.plan(negotiated: negotiated, offered: offered)
        let fetched = ours(followers.map { upFront($0.offered) }, at: address, firstDeadline: nil, cancellation: cancellation)
        let done = withLibssh(zip(followers, fetched).map { ClaimedExchange(exchange: $0, ours: $1) }, at: address,
                              cancellation: cancellation)
        let claimed = (standIns.map { ClaimedExchange(exchange: $0, ours: deciding) } + done)
            .sorted { $0.exchange!.index < $1.exchange!.index }
        complete(claimed, leftover: [], offered: offered, serverVersion: deciding.serverVersion, at: address,
                 into: &result, ledger: &ledger, cancellation: cancellation)
    }

    /// Takes the exchanges done so far, once the server's list (`offered`) is known, and does
    /// the `leftover` ones: our client first, libssh where ours cannot negotiate. A failure that
    /// ends the probe stops new connections; every outcome already in is still taken. What each
    /// planned exchange came to goes into `ledger`.
    private func complete(_ claimed: [ClaimedExchange], leftover unclaimed: [ExchangeBoard.Exchange], offered: [String],
                          serverVersion: String?, at address: ProbeEndpoint, into result: inout ProbeResult,
                          ledger: inout FetchLedger, cancellation: ProbeCancellation) {
        var plan = HostKeyPlan()
        plan.learn(serverAlgorithms: offered)
        result.peerAddress = address.peerAddress
        result.serverVersion = serverVersion
        result.gatherSSH {
            $0.serverHostKeyAlgorithms = offered
            $0.serverKeyExchangeAlgorithms = claimed.lazy.compactMap(\.ours.serverKeyExchangeAlgorithms).first
        }
        var refused = false
        var leftover = unclaimed
        for exchange in claimed {
            if !take(exchange, into: &result, plan: &plan, refused: &refused) { leftover = [] }
        }
        // Certificates libssh cannot fetch are ours; a plain type with a libssh list is tried by
        // ours first too, and handed to libssh only when ours cannot negotiate.
        let fetched = ours(leftover.map { upFront($0.offered) }, at: address, firstDeadline: nil, cancellation: cancellation)
        let later = withLibssh(zip(leftover, fetched).map { ClaimedExchange(exchange: $0, ours: $1) },
                               at: address, cancellation: cancellation)
        for exchange in later { _ = take(exchange, into: &result, plan: &plan, refused: &refused) }
        finish(&result, plan: plan, refused: refused)
        // What each exchange came to, those never made included.
        let made = claimed + later
        for exchange in claimed.compactMap(\.exchange) + unclaimed {
            let outcome = made.first { $0.exchange?.index == exchange.index }
            ledger.asked(exchange, offered: offered, outcome: outcome.map { ($0.ours, $0.libssh) })
        }
    }

    /// Starts the exchanges the first round has no connection for, without waiting: on the
    /// engine for a direct address, on helper threads through a route.
    private func start(_ exchanges: [ExchangeBoard.Exchange], at address: ProbeEndpoint, into early: EarlyExchanges,
                       cancellation: ProbeCancellation) {
        let gathered = early.begin(exchanges)
        guard case .direct(let socketAddress) = address else {
            scheduler.start(exchanges.map { routedAttempt(upFront($0.offered), at: address, firstDeadline: nil,
                                                          cancellation: cancellation) }) { gathered.put($1, at: $0) }
            return
        }
        for (index, exchange) in exchanges.enumerated() {
            let request = ExchangeRequest(address: socketAddress, port: host.port, offer: upFront(exchange.offered),
                                          keyExchange: keyExchange, timeout: timeout, connectDeadline: .now + timeout, cancellation: cancellation,
                                          politeness: scheduler.politeness)
            scheduler.engine.start(request) { gathered.put($0, at: index) }
        }
    }

    /// Runs our key-exchange client once per offer, all at once, each on a connection of its
    /// own: a direct address on the scan's event loops (`ExchangeEngine`), a routed one on
    /// threads (opening a channel through a bastion blocks). `firstDeadline` bounds the connect
    /// and identification of an attempt that starts at once; nil gives each a full timeout.
    /// `decides`: the connections decide which key `ssh` meets (`ExchangeRequest.decides`).
    private func ours(_ offers: [ExchangeSession.Offer], at address: ProbeEndpoint, firstDeadline: ContinuousClock.Instant?,
                      decides: Bool = false, cancellation: ProbeCancellation) -> [AttemptOutcome] {
        guard !offers.isEmpty else { return [] }
        if let empty = offers.firstIndex(where: { if case .upFront(let offered, _, _) = $0 { offered.isEmpty } else { false } }) {
            // Nothing this client can verify was asked for: no connection is needed to know.
            var outcomes = ours(offers.enumerated().filter { $0.offset != empty }.map(\.element), at: address,
                                firstDeadline: firstDeadline, decides: decides, cancellation: cancellation)
            outcomes.insert(AttemptOutcome(failure: KeyExchangeFailures.noCommonAlgorithm("host key", server: [])), at: empty)
            return outcomes
        }
        if case .direct(let socketAddress) = address {
            return scheduler.engine.run(offers.map { offer in
                ExchangeRequest(address: socketAddress, port: host.port, offer: offer, keyExchange: keyExchange, timeout: timeout,
                                connectDeadline: firstDeadline ?? .now + timeout, cancellation: cancellation,
                                politeness: scheduler.politeness, decides: decides)
            })
        }
        return scheduler.all(offers.map {
            routedAttempt($0, at: address, firstDeadline: firstDeadline, decides: decides, cancellation: cancellation)
        })
    }

    /// One attempt of our client through a route, run on the thread that calls it.
    private func routedAttempt(_ offer: ExchangeSession.Offer, at address: ProbeEndpoint, firstDeadline: ContinuousClock.Instant?,
                               decides: Bool = false, cancellation: ProbeCancellation) -> @Sendable () -> AttemptOutcome {
        { @Sendable in
            scheduler.politeness.run(address, port: host.port, cancellation: cancellation) { fresh in
                var probe = CertificateFirstProbe(endpoint: address, port: host.port, timeout: timeout)
                probe.keyExchange = keyExchange
                probe.offer = offer
                let deadline = fresh ? .now + timeout : firstDeadline ?? .now + timeout
                return RoutedAttempt(outcome: probe.run(cancellation: cancellation, connectDeadline: deadline), decides: decides)
            }.outcome
        }
    }

    /// Asks libssh for each exchange our client could not negotiate (a server without
    /// curve25519), side by side on threads: libssh blocks.
    private func withLibssh(_ exchanges: [ClaimedExchange], at address: ProbeEndpoint,
                            cancellation: ProbeCancellation) -> [ClaimedExchange] {
        let needing = exchanges.indices.filter { index in
            exchanges[index].exchange?.libsshFallback != nil && needsLibssh(exchanges[index].ours, cancellation: cancellation)
        }
        guard !needing.isEmpty else { return exchanges }
        let fetched = scheduler.all(needing.map { index in
            let list = exchanges[index].exchange!.libsshFallback!
            return { @Sendable in libssh(list, at: address, cancellation: cancellation) }
        })
        var result = exchanges
        for (index, outcome) in zip(needing, fetched) { result[index].libssh = outcome }
        return result
    }

    /// Takes one exchange's outcome into the result, as the one-by-one probe would have; false
    /// when it ends the probe.
    private func take(_ claimed: ClaimedExchange, into result: inout ProbeResult, plan: inout HostKeyPlan,
                      refused: inout Bool) -> Bool {
        guard let exchange = claimed.exchange else { return true }
        let ours = claimed.ours
        if let key = ours.key {
            Self.add(key, to: &result)
            plan.found(keyType: key.key.type)
        }
        if let malformed = ours.malformedKey { result.gatherSSH { $0.malformedKeys.append(malformed) } }
        if let failure = ours.failure, failure != KeyExchangeFailures.notNeeded {
            let recorded = if exchange.index == 0 {
                // The opening exchange: a server our client cannot talk to is libssh's to try.
                failure.code == .badSignature || failure.code == .kexTimeout
            } else if exchange.libsshFallback == nil {
                ours.malformedKey == nil
            } else {
                claimed.libssh == nil
            }
            if recorded {
                result.failures.append(failure)
                if Self.endsProbe(failure) { return false }
            }
        }
        if let libssh = claimed.libssh {
            return take(libssh.afterFallback(from: ours), into: &result, plan: &plan, refused: &refused)
        }
        return true
    }

    /// The probe of a server no connection of the first round could learn the algorithms of:
    /// the first connection's outcome decides; a server that said nothing of its list gets the
    /// certificates-first offer up front, then the rest of its list; otherwise the usual key
    /// types are asked for one by one (our client, and libssh where ours cannot negotiate).
    private func probeOneByOne(_ address: ProbeEndpoint, opening: AttemptOutcome, into result: inout ProbeResult,
                               ledger: inout FetchLedger, cancellation: ProbeCancellation) -> Bool {
        if let failure = opening.failure {
            // Only a failure in the key exchange leaves the server to try otherwise; one that did
            // not connect ends the host.
            guard failure.stage == .keyExchange else {
                result.failures.append(failure)
                return failure.stage != .connect
            }
            // A server our exchange client cannot talk to: libssh may still. One that never sent
            // its KEXINIT may wait for the client's first, as `ssh` sends it: the one-by-one
            // offers below are sent up front.
            let stalled = failure.code == .kexTimeout && !(opening.serverHostKeyAlgorithms ?? []).isEmpty
            if failure.code == .badSignature || stalled { result.failures.append(failure) }
            if stalled { return true }
        }
        if (opening.serverHostKeyAlgorithms ?? []).isEmpty {
            // The server said nothing of its list (it sends its KEXINIT only after the client's):
            // the first round's certificates-first offer, sent up front, fetches its certificate
            // and learns the list the rest is planned from.
            let first = ours([upFront(CertificateFirstProbe.certificatesFirst)], at: address, firstDeadline: nil,
                             cancellation: cancellation)[0]
            if let offered = first.serverHostKeyAlgorithms, !offered.isEmpty {
                var exchanges = ExchangeBoard.exchanges(for: offered)
                let claimed = withLibssh([ClaimedExchange(exchange: exchanges.removeFirst(), ours: first)], at: address,
                                         cancellation: cancellation)
                complete(claimed, leftover: exchanges, offered: offered, serverVersion: first.serverVersion ?? opening.serverVersion,
                         at: address, into: &result, ledger: &ledger, cancellation: cancellation)
                return true
            }
        }
        result.peerAddress = address.peerAddress
        result.serverVersion = opening.serverVersion
        result.gatherSSH { $0.serverKeyExchangeAlgorithms = opening.serverKeyExchangeAlgorithms }
        var plan = HostKeyPlan()
        var refused = false
        while let algorithms = plan.next() {
            let outcome = fetch(algorithms, at: address, cancellation: cancellation)
            if outcome.key == nil, outcome.serverHostKeyAlgorithms == nil, let failure = outcome.failure {
                ledger.asked(plan.offeredFirst(of: algorithms), failure: failure)
            }
            if !take(outcome, into: &result, plan: &plan, refused: &refused) { break }
        }
        // The types still to ask for when a failure ended the probe were never asked for.
        while let algorithms = plan.next() { ledger.asked(plan.offeredFirst(of: algorithms), failure: nil) }
        finish(&result, plan: plan, refused: refused)
        return true
    }

    /// Adds a proved key, once: two connections to an address with two servers behind it (a
    /// load-balanced pool) may prove the same key.
    private static func add(_ key: DiscoveredKey, to result: inout ProbeResult) {
        result.gatherSSH { proof in if !proof.keys.contains(where: { $0.key == key.key }) { proof.keys.append(key) } }
    }

    /// Takes the outcome of the connection shaped like `ssh`'s: its key is the key `ssh` meets
    /// (added to the others when none of them is the same key), or its failure leaves that key
    /// unproved; the server's lists it read are the ones `ssh` is shown.
    private static func record(likeSSH outcome: AttemptOutcome, into result: inout ProbeResult) {
        if let key = outcome.key {
            result.gatherSSH { proof in if !proof.keys.contains(where: { $0.key == key.key }) { proof.keys.append(key) } }
            result.sshConnection = .proved(key)
        } else if let failure = outcome.failure {
            result.sshConnection = .failed(failure)
        }
        result.gatherSSH { proof in
            if let malformed = outcome.malformedKey, !proof.malformedKeys.contains(malformed) { proof.malformedKeys.append(malformed) }
            if let offered = outcome.serverHostKeyAlgorithms, !offered.isEmpty { proof.serverHostKeyAlgorithms = offered }
            if let methods = outcome.serverKeyExchangeAlgorithms { proof.serverKeyExchangeAlgorithms = methods }
        }
        if result.serverVersion == nil { result.serverVersion = outcome.serverVersion }
    }

    private func finish(_ result: inout ProbeResult, plan: HostKeyPlan, refused: Bool) {
        if result.serverHostKeyAlgorithms == nil, let offered = plan.serverAlgorithms { result.gatherSSH { $0.serverHostKeyAlgorithms = offered } }
        if result.keys.isEmpty && result.failures.isEmpty && (refused || plan.serverAlgorithms != nil) {
            let offered = plan.serverAlgorithms?.joined(separator: ",") ?? "?"
            result.failures = [ProbeFailure(stage: .keyExchange, code: .noCommonAlgorithm,
                                            message: "the server offers no host-key algorithm that can be verified here (it offers \(offered))")]
        }
    }

    /// Whether our client's outcome leaves the key type to libssh: it failed in the key exchange
    /// itself (not by the clock), as with a server without curve25519, and the server's methods
    /// (when our client read them) include one `ssh` offers the host, which libssh may implement.
    /// Never a cipher, MAC or compression in common with none of the host's (our client offers
    /// `ssh`'s, so `ssh` would fail too, and libssh would negotiate outside them). Never a
    /// signature our client checked and refused: it reads signatures as `ssh` does, and
    /// libssh accepts some `ssh` refuses (a negative mpint, bytes after the signature), so its key
    /// would be a key `ssh` would not take, and the refusal would leave no trace.
    private func needsLibssh(_ outcome: AttemptOutcome, cancellation: ProbeCancellation) -> Bool {
        guard outcome.key == nil, let failure = outcome.failure, failure.code != .badSignature,
              !KeyExchangeFailures.isTransportMismatch(failure) else { return false }
        if let methods = outcome.serverKeyExchangeAlgorithms, !methods.contains(where: keyExchange.contains) { return false }
        return failure.stage == .keyExchange && failure.code != .kexTimeout && !cancellation.isCancelled
    }

    private func libssh(_ algorithms: String, at address: ProbeEndpoint, cancellation: ProbeCancellation) -> AttemptOutcome {
        scheduler.politeness.run(address, port: host.port, cancellation: cancellation) { _ in
            HostKeyProbe(endpoint: address, port: host.port, hostKeyAlgorithms: algorithms, timeout: timeout,
                         keyExchange: keyExchange).run(cancellation: cancellation)
        }
    }

    /// One key type (`algorithms`, comma-separated) through our own client, and through libssh
    /// when ours cannot negotiate with this server.
    private func fetch(_ algorithms: String, at address: ProbeEndpoint, cancellation: ProbeCancellation) -> AttemptOutcome {
        let offered = algorithms.split(separator: ",").map(String.init).filter(KeyExchangeProbe.plainAlgorithms.contains)
        guard !offered.isEmpty else { return libssh(algorithms, at: address, cancellation: cancellation) }
        var outcome = ours([upFront(offered)], at: address, firstDeadline: nil, cancellation: cancellation)[0]
        guard needsLibssh(outcome, cancellation: cancellation) else {
            // Only libssh's refusal names the server's list; ours learned it from the opening.
            outcome.serverHostKeyAlgorithms = nil
            return outcome
        }
        return libssh(algorithms, at: address, cancellation: cancellation).afterFallback(from: outcome)
    }

    /// Takes one key type's outcome into the result; false when it ends the probe.
    private func take(_ outcome: AttemptOutcome, into result: inout ProbeResult, plan: inout HostKeyPlan,
                      refused: inout Bool) -> Bool {
        if result.serverVersion == nil { result.serverVersion = outcome.serverVersion }
        if let key = outcome.key {
            Self.add(key, to: &result)
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

    /// Whether an attempt's failure ends the host's probe: every common stage (nothing reached
    /// it, or the scan stopped), a server that did not identify itself, an exchange out of time.
    static func endsProbe(_ failure: ProbeFailure) -> Bool {
        if case .common = failure.stage { return true }
        return failure.stage == .banner || (failure.stage == .keyExchange && failure.code == .kexTimeout)
    }
}

/// What one exchange of a host's probe came to: the exchange its connection claimed (nil when it
/// claimed none), our client's outcome, and libssh's when it took over.
private struct ClaimedExchange: Sendable {
    var exchange: ExchangeBoard.Exchange?
    var ours: AttemptOutcome
    var libssh: AttemptOutcome?
}

/// Exchanges started as soon as the server's list showed the first round could not take them all.
private final class EarlyExchanges: Sendable {
    private let started = Mutex<(exchanges: [ExchangeBoard.Exchange], outcomes: Gathered<AttemptOutcome>)?>(nil)

    func begin(_ exchanges: [ExchangeBoard.Exchange]) -> Gathered<AttemptOutcome> {
        let outcomes = Gathered<AttemptOutcome>(count: exchanges.count)
        started.withLock { $0 = (exchanges, outcomes) }
        return outcomes
    }

    /// Their outcomes, once all have ended; none when none was started. Called after the first
    /// round, whose connections start them, has ended.
    func wait() -> [ClaimedExchange] {
        guard let (exchanges, outcomes) = started.withLock({ $0 }) else { return [] }
        return zip(exchanges, outcomes.wait()).map { ClaimedExchange(exchange: $0, ours: $1) }
    }
}

/// The exchange one connection claimed, set on that connection's own thread.
private final class Claim: @unchecked Sendable {
    var exchange: ExchangeBoard.Exchange?
    /// Whether the connection has claimed (nil when nothing was left to claim).
    var claimed = false
}

/// An attempt through a route as the scan's politeness sees it: the deciding connection's
/// timeout is not retried on a new connection (`AttemptOutcome.load(decides:)`).
private struct RoutedAttempt: PoliteAttempt {
    var outcome: AttemptOutcome
    var decides: Bool
    var load: AttemptLoad { outcome.load(decides: decides) }
    static var cancelled: RoutedAttempt { RoutedAttempt(outcome: .cancelled, decides: false) }
}
