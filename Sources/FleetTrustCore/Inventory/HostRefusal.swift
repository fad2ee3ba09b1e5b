/// Why fleettrust neither probes a host nor runs anything for it, decided from the inventory alone:
/// a name `ssh` would refuse on its command line (`SSHNameError`), or a proxy setting that does
/// not parse (`RouteError`).
///
/// The host stays in every output, refused at stage `proxy` with its own code and the inventory
/// `file:line`, judged like any host whose route failed (`JudgedHost`, status `error`; a refused
/// ProxyCommand, which `ssh` would run, is `unverified` for a host with recorded keys), so a
/// report shows it rather than silently leaving it out; the loader also reports it as a warning.
public struct HostRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        case unsafeName(SSHNameError)
        case invalidRoute(RouteError)
        /// A ProxyCommand from an inventory, not allowed to run.
        case proxyCommandFromInventory
    }

    public var reason: Reason
    /// Where the host was defined.
    public var source: SourceLocation?

    public init(reason: Reason, source: SourceLocation?) {
        self.reason = reason
        self.source = source
    }

    public var code: FailureCode {
        switch reason {
        case .unsafeName: return .unsafeName
        case .invalidRoute: return .invalidRoute
        case .proxyCommandFromInventory: return .proxyCommandNotAllowed
        }
    }

    public var description: String {
        let why: String
        switch reason {
        case .unsafeName(let error): why = "its \(error.description)"
        case .invalidRoute(let error): why = "its \(error.description)"
        case .proxyCommandFromInventory:
            why = "its ProxyCommand is written in the inventory, and fleettrust runs a ProxyCommand only from your own ssh "
                + "configuration or with --allow-inventory-proxy-command"
        }
        return (source.map { "\($0): " } ?? "") + why + "; not probed, and nothing is run for it"
    }

    /// The probe failure the host is reported with, in place of a probe.
    public var failure: ProbeFailure {
        ProbeFailure(stage: .proxy, code: code, message: description)
    }
}

extension InventoryHost {
    /// Why this host must not be probed nor handed to `ssh`; nil when it may be. A TLS endpoint is
    /// never handed to `ssh`, so only its route is checked.
    public var refusal: HostRefusal? {
        if case .failure(let routeError) = routing { return HostRefusal(reason: .invalidRoute(routeError), source: source) }
        if case .ssh = endpoint {
            do { _ = try SSHDestination(self) } catch { return HostRefusal(reason: .unsafeName(error), source: source) }
        }
        if proxyCommandNotAllowed, route.hops.contains(where: { if case .command = $0 { true } else { false } }) {
            return HostRefusal(reason: .proxyCommandFromInventory, source: source)
        }
        return nil
    }
}

extension Inventory {
    /// Adds a `file:line` warning for each host that will be refused: it stays in the inventory
    /// (and so in every output, refused at stage `proxy`), and the reader learns why at once.
    mutating func noteRefusals() {
        for host in hosts {
            guard let refusal = host.refusal, let location = host.source else { continue }
            let why = HostRefusal(reason: refusal.reason, source: nil).description
            diagnostics.append(InventoryDiagnostic(.warning, location, "host \(InventoryDiagnostic.quote(host.name)): \(why)"))
        }
    }
}
