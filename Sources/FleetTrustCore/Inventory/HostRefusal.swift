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
        /// A TLS endpoint whose name (as written) is neither a DNS name nor an IP address, so no
        /// certificate can be checked against it.
        case noCertificateName(String)
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
        case .unsafeName, .noCertificateName: return .unsafeName
        case .invalidRoute: return .invalidRoute
        case .proxyCommandFromInventory: return .proxyCommandNotAllowed
        }
    }

    public var description: String {
        let why: String
        switch reason {
        case .unsafeName(let error): why = "its \(error.description)"
        case .invalidRoute(let error): why = "its \(error.description)"
        case .noCertificateName(let name):
            why = "name \"\(Sanitizer.clean(name, limit: 80))\" is neither a DNS name (ASCII letters, digits, '-', '_', "
                + "an IDN in its xn-- form) nor an IP address, so no certificate can be checked against it"
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
    /// never handed to `ssh`: its route is checked, its address as a host name, and its name as
    /// what the certificate must carry (so the TLS rows of a host refused for its name are refused too).
    public var refusal: HostRefusal? {
        if case .failure(let routeError) = routing { return HostRefusal(reason: .invalidRoute(routeError), source: source) }
        switch endpoint {
        case .ssh:
            do { _ = try SSHDestination(self) } catch { return HostRefusal(reason: .unsafeName(error), source: source) }
        case .tls:
            do { _ = try SSHHostName(address) } catch { return HostRefusal(reason: .unsafeName(error), source: source) }
            let hostName = TLSEndpoint.hostName(ofRow: name)
            if TLSEndpoint.referenceIdentity(for: hostName) == nil {
                return HostRefusal(reason: .noCertificateName(hostName), source: source)
            }
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
