import FleetTrustCore
import Synchronization

/// Hands out the key exchanges one server needs to the connections opened to it side by side.
///
/// A probe opens a few connections to a server at once; each, once the server's KEXINIT has
/// named its host-key algorithms, claims the next exchange still to do: first the one that
/// offers every certificate type before every plain one (`CertificateFirstProbe`'s order), then
/// each other certificate type, then one per plain key type the server has (`HostKeyPlan`).
/// The list is made from the first KEXINIT that arrives, so no key type is asked for twice and
/// all of them are asked for in the first round trips; what the connections could not take is
/// left for the probe to ask afterwards.
final class ExchangeBoard: Sendable {
    /// One exchange to do: what to offer, and the plain list to ask libssh for if our client
    /// cannot negotiate with this server (nil for certificates, which libssh cannot negotiate).
    struct Exchange: Sendable {
        var index: Int
        var offered: [String]
        var libsshFallback: String?

        /// The host-key algorithm this exchange's offer negotiates with a server offering
        /// `serverAlgorithms`: the first of the offer the server has (`match_list`'s rule for the
        /// client's list).
        func negotiates(with serverAlgorithms: [String]) -> String? {
            offered.first(where: serverAlgorithms.contains)
        }
    }

    private struct State {
        var serverAlgorithms: [String]?
        var queue: [Exchange] = []
        var next = 0
        var surplusTaken = false
    }

    private let state = Mutex(State())

    /// Claims the next exchange, given the server's host-key algorithms; nil when none is left.
    func claim(serverAlgorithms offered: [String]) -> Exchange? {
        state.withLock { state in
            if state.serverAlgorithms == nil {
                state.serverAlgorithms = offered
                state.queue = Self.exchanges(for: offered)
            }
            guard state.next < state.queue.count else { return nil }
            defer { state.next += 1 }
            return state.queue[state.next]
        }
    }

    /// Takes, once, the exchanges past the first `connections`: a server that needs more exchanges
    /// than the probe opened connections for (one with a host certificate needs four) gets them on
    /// connections of their own as soon as its list is known, not a round trip later.
    func claimSurplus(beyond connections: Int) -> [Exchange] {
        state.withLock { state in
            guard !state.surplusTaken, state.queue.count > connections, state.next <= connections else { return [] }
            state.surplusTaken = true
            defer { state.queue.removeSubrange(connections...) }
            return Array(state.queue[connections...])
        }
    }

    /// The exchanges not claimed by any connection.
    var unclaimed: [Exchange] {
        state.withLock { Array($0.queue[min($0.next, $0.queue.count)...]) }
    }

    /// The server's list, once a connection learned it.
    var serverAlgorithms: [String]? { state.withLock { $0.serverAlgorithms } }

    /// Every exchange a server offering `offered` needs, in the order the probe reports them.
    static func exchanges(for offered: [String]) -> [Exchange] {
        let first = CertificateFirstProbe.certificatesFirst.first(where: offered.contains)
        var exchanges = [Exchange(index: 0, offered: CertificateFirstProbe.certificatesFirst,
                                  libsshFallback: first.flatMap(plainFallback))]
        for algorithm in KeyExchangeProbe.certificateAlgorithms where offered.contains(algorithm) {
            let type = KeyType.canonicalName(algorithm)
            guard first.map(KeyType.canonicalName) != type,
                  !exchanges.contains(where: { $0.offered.count == 1 && KeyType.canonicalName($0.offered[0]) == type }) else { continue }
            exchanges.append(Exchange(index: exchanges.count, offered: [algorithm], libsshFallback: nil))
        }
        var plan = HostKeyPlan()
        plan.learn(serverAlgorithms: offered)
        if let first, !first.hasSuffix("-cert-v01@openssh.com") { plan.found(keyType: KeyType.canonicalName(first)) }
        while let list = plan.next() {
            let ours = list.split(separator: ",").map(String.init).filter(KeyExchangeProbe.plainAlgorithms.contains)
            exchanges.append(Exchange(index: exchanges.count, offered: ours, libsshFallback: list))
        }
        return exchanges
    }

    /// The exchanges a server offering `offered` needs beside a connection that already
    /// negotiated `negotiated` with it and proved its key: `standIns`, whose offer would negotiate
    /// that same algorithm (the same key, or the same certificate), which that connection's
    /// outcome answers, and `followers`, the ones still to do; each in `exchanges(for:)`'s order.
    static func followers(of negotiated: String, for offered: [String]) -> (standIns: [Exchange], followers: [Exchange]) {
        var standIns: [Exchange] = [], followers: [Exchange] = []
        for exchange in exchanges(for: offered) {
            if exchange.negotiates(with: offered) == negotiated { standIns.append(exchange) } else { followers.append(exchange) }
        }
        return (standIns, followers)
    }

    /// The libssh list for a plain algorithm our client negotiated first; nil for a certificate.
    private static func plainFallback(_ algorithm: String) -> String? {
        algorithm.hasSuffix("-cert-v01@openssh.com") ? nil : algorithm
    }
}
