import FleetTrustCore

/// The key types one host's probe set out to fetch, each on a connection of its own, and what
/// came of each: what the probe could not fetch becomes `SSHProof.unfetched`, so that a scan
/// whose follower connection was closed, timed out or failed its signature says which of the
/// server's keys it did not see, instead of reporting the others as if they were all.
struct FetchLedger {
    private var entries: [(algorithm: String, failure: ProbeFailure?)] = []

    /// One key type asked for (`algorithm`, one the server offers), and its connection's failure;
    /// nil when it fetched the key, or when the connection was never made (the probe ended first).
    mutating func asked(_ algorithm: String, failure: ProbeFailure?) {
        entries.append((algorithm, failure == KeyExchangeFailures.notNeeded ? nil : failure))
    }

    /// An exchange of the board and what came of it (nil: never made). A key of another type than
    /// the one its offer negotiates with the server's list is no key of that type.
    mutating func asked(_ exchange: ExchangeBoard.Exchange, offered: [String], outcome: (ours: AttemptOutcome, libssh: AttemptOutcome?)?) {
        guard let algorithm = Self.algorithm(of: exchange, offered: offered) else { return }
        // libssh's failure only when it got further than ours (a signature ours found bad stays).
        let ended = outcome.map { $0.libssh?.afterFallback(from: $0.ours) ?? $0.ours }
        if let proved = ended?.key?.key.type, KeyType.canonicalName(proved) != KeyType.canonicalName(algorithm) {
            asked(algorithm, failure: ProbeFailure(stage: .keyExchange, code: .otherKeyType,
                                                   message: "the connection that asked for it proved a \(proved) key instead"))
        } else {
            asked(algorithm, failure: ended?.failure)
        }
    }

    /// The host-key algorithm an exchange asks a server offering `offered` for: what its offer
    /// negotiates, or the first of its libssh list the server has.
    private static func algorithm(of exchange: ExchangeBoard.Exchange, offered: [String]) -> String? {
        exchange.negotiates(with: offered)
            ?? exchange.libsshFallback?.split(separator: ",").map(String.init).first(where: offered.contains)
    }

    /// Writes the key types `result` holds no key of into its proof: each with its connection's
    /// failure, or, never asked for, with the failure that ended the probe; a type is never left
    /// out for want of a failure. A type asked for twice is written once; nothing is written for a
    /// probe that proved nothing. Run once the probe's every key is in `result`.
    func note(into result: inout ProbeResult) {
        guard result.proof.provesSomething else { return }
        let found = Set(result.keys.map { KeyType.canonicalName($0.key.type) }
                        + result.malformedKeys.map { KeyType.canonicalName($0.algorithm.value) })
        let ending = result.failures.last(where: HostProbe.endsProbe).map { failure in
            ProbeFailure(stage: failure.stage, code: failure.code,
                         message: "not asked for: the probe ended when another connection failed (\(failure.message.value))")
        }
        let unexplained = ProbeFailure(stage: .keyExchange, code: .other, message: "no key of this type was proved")
        // Every type the server's reported list asks for, asked for or not: the probe may have
        // planned from another list (two servers behind one address, one failing).
        var asked = entries
        if let listed = result.serverHostKeyAlgorithms {
            for exchange in ExchangeBoard.exchanges(for: listed) {
                if let algorithm = Self.algorithm(of: exchange, offered: listed) { asked.append((algorithm, nil)) }
            }
        }
        var unfetched: [UnfetchedKeyType] = []
        for (algorithm, failure) in asked where !found.contains(KeyType.canonicalName(algorithm)) {
            let failure = failure ?? ending ?? unexplained
            if let known = unfetched.firstIndex(where: { $0.algorithm.value == algorithm }) {
                // Asked twice (a retry): the connection's own failure over a guess.
                if unfetched[known].failure.code == .other, failure.code != .other { unfetched[known].failure = failure }
                continue
            }
            unfetched.append(UnfetchedKeyType(algorithm: algorithm, failure: failure))
        }
        guard !unfetched.isEmpty else { return }
        result.gatherSSH { $0.unfetched = Array(unfetched.prefix(UnfetchedKeyType.limit)) }
    }
}
