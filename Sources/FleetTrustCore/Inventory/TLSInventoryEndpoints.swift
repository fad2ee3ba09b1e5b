import Foundation

/// TLS endpoints as inventories name them: a plain-list line `https://host[:port]` (port 443 by
/// default) or `tls://host:port`, and the Ansible variable `fleettrust_tls_ports` (a comma list
/// of ports) on a host or group, which adds one endpoint per port at the host's address.
///
/// Each endpoint is an `InventoryHost` of its own, named `host:port/tls`, whose `tls` carries the
/// server name: the inventory's name for the host (sent as SNI and checked against the
/// certificate), or none when that is an IP literal.
enum TLSInventoryEndpoints {
    /// The schemes a plain-list line may start with, and their default ports.
    static let schemes: [(prefix: String, defaultPort: Int?)] = [("https://", 443), ("tls://", nil)]

    /// The endpoint a plain-list word names, nil when the word has no TLS scheme.
    static func plain(_ word: Substring) -> Result<InventoryHost, HostPattern.PatternError>? {
        guard let scheme = schemes.first(where: { word.lowercased().hasPrefix($0.prefix) }) else { return nil }
        var rest = word.dropFirst(scheme.prefix.count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("@") else {
            return .failure(.message("\(InventoryDiagnostic.quote(word)): a TLS endpoint is \(scheme.prefix)host\(scheme.defaultPort == nil ? ":port" : "[:port]"), without path or user"))
        }
        switch HostPattern.endpoint(rest) {
        case .failure(let error): return .failure(error)
        case .success(let endpoint):
            guard let port = endpoint.port ?? scheme.defaultPort else {
                return .failure(.message("\(InventoryDiagnostic.quote(word)): tls:// needs a port (tls://host:port)"))
            }
            return .success(host(name: endpoint.host, address: endpoint.host, port: port))
        }
    }

    /// The endpoints `fleettrust_tls_ports` adds for an SSH host.
    static func ports(_ text: String, for base: InventoryHost) -> Result<[InventoryHost], HostPattern.PatternError> {
        var endpoints: [InventoryHost] = []
        for field in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = field.trimmingCharacters(in: .whitespaces)
            switch HostPattern.port(trimmed) {
            case .failure:
                return .failure(.message("fleettrust_tls_ports \(InventoryDiagnostic.quote(text)) is not a comma list of ports"))
            case .success(let port):
                guard !endpoints.contains(where: { $0.port == port }) else { continue }
                var endpoint = host(name: base.name, address: base.address, port: port)
                endpoint.groups = base.groups
                endpoint.inheritedGroups = base.inheritedGroups
                endpoint.source = base.source
                endpoint.format = base.format
                endpoint.policy = base.policy
                // The host's route goes with its endpoints: a host `ssh` reaches through a proxy
                // (or whose proxy setting does not parse) is never probed directly, TLS included.
                endpoint.proxy = base.proxy
                endpoints.append(endpoint)
            }
        }
        return .success(endpoints)
    }

    private static func host(name: String, address: String, port: Int) -> InventoryHost {
        var host = InventoryHost(name: TLSEndpoint.rowName(host: name, port: port), address: address, port: port)
        host.tls = TLSEndpoint(serverName: TLSEndpoint.serverName(for: name))
        return host
    }
}
