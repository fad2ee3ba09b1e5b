import Foundation

/// TLS endpoints as inventories name them: a plain-list line `https://host[:port]` (port 443 by
/// default), `tls://host:port`, or a STARTTLS service `smtp://`, `submission://`, `imap://`,
/// `pop3://`, `ldap://`, `postgres://host[:port]` (each with its protocol's port by default);
/// and the Ansible variables `fleettrust_tls_ports` (a comma list of ports) and
/// `fleettrust_starttls` (a comma list of `protocol[:port]`) on a host or group, which add one
/// endpoint per entry at the host's address.
///
/// Each endpoint is an `InventoryHost` of its own, named `host:port/tls` (`host:port/smtp` for
/// STARTTLS), whose `endpoint` carries the SNI: the inventory's name for the host, or none when that
/// is an IP literal. The certificate is checked against that name, read back from the row name; a
/// name no certificate can carry makes the endpoint refused (`InventoryHost.refusal`).
enum TLSInventoryEndpoints {
    /// The schemes a plain-list line may start with, their default ports and STARTTLS protocols.
    static let schemes: [(prefix: String, defaultPort: Int?, startTLS: StartTLSProtocol?)] = {
        var schemes: [(prefix: String, defaultPort: Int?, startTLS: StartTLSProtocol?)] = [("https://", 443, nil), ("tls://", nil, nil)]
        for service in StartTLSProtocol.allCases { schemes.append((service.rawValue + "://", service.defaultPort, service)) }
        schemes.append(("postgresql://", StartTLSProtocol.postgres.defaultPort, .postgres))
        return schemes
    }()

    /// The endpoint a plain-list word names, nil when the word has no scheme (`scheme://`). Its
    /// host passes the same check as a plain-list SSH host.
    static func plain(_ word: Substring) -> Result<InventoryHost, HostPattern.PatternError>? {
        let lowered = word.lowercased()
        guard let scheme = schemes.first(where: { lowered.hasPrefix($0.prefix) }) else {
            guard let separator = word.range(of: "://") else { return nil }
            let known = schemes.map { String($0.prefix.dropLast(3)) }.joined(separator: ", ")
            return .failure(.message("\(InventoryDiagnostic.quote(word)): scheme \(InventoryDiagnostic.quote(word[..<separator.lowerBound])) "
                                     + "is not one fleettrust probes (\(known))"))
        }
        var rest = word.dropFirst(scheme.prefix.count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("@") else {
            return .failure(.message("\(InventoryDiagnostic.quote(word)): a TLS endpoint is \(scheme.prefix)host\(scheme.defaultPort == nil ? ":port" : "[:port]"), without path or user"))
        }
        switch HostPattern.endpoint(rest) {
        case .failure(let error): return .failure(error)
        case .success(let endpoint) where !PlainListReader.isHostName(endpoint.host):
            return .failure(.message("\(InventoryDiagnostic.quote(word)): \(InventoryDiagnostic.quote(endpoint.host)) is neither a host name "
                                     + "(letters, digits, '.', '-', '_') nor an IP address"))
        case .success(let endpoint):
            guard let port = endpoint.port ?? scheme.defaultPort else {
                return .failure(.message("\(InventoryDiagnostic.quote(word)): tls:// needs a port (tls://host:port)"))
            }
            let address = PlainListReader.rowAddress(endpoint.host)
            return .success(host(name: address, address: address, port: port, startTLS: scheme.startTLS))
        }
    }

    /// The endpoints `fleettrust_tls_ports` adds for an SSH host.
    static func ports(_ text: String, for base: InventoryHost) -> Result<[InventoryHost], HostPattern.PatternError> {
        var endpoints: [(port: Int, startTLS: StartTLSProtocol?)] = []
        for field in text.split(separator: ",", omittingEmptySubsequences: false) {
            switch HostPattern.port(field.trimmingCharacters(in: .whitespaces)) {
            case .failure:
                return .failure(.message("fleettrust_tls_ports \(InventoryDiagnostic.quote(text)) is not a comma list of ports"))
            case .success(let port): endpoints.append((port, nil))
            }
        }
        return .success(derived(endpoints, from: base))
    }

    /// The endpoints `fleettrust_starttls` (`smtp:25,postgres`, a port defaulting to the
    /// protocol's) adds for an SSH host.
    static func startTLS(_ text: String, for base: InventoryHost) -> Result<[InventoryHost], HostPattern.PatternError> {
        var endpoints: [(port: Int, startTLS: StartTLSProtocol?)] = []
        for field in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = field.trimmingCharacters(in: .whitespaces).split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let known = StartTLSProtocol.allCases.map(\.rawValue).joined(separator: ", ")
            guard let name = parts.first, let startTLS = StartTLSProtocol(inventoryName: name) else {
                return .failure(.message("fleettrust_starttls \(InventoryDiagnostic.quote(text)): \(InventoryDiagnostic.quote(parts.first ?? "")) "
                                         + "is not a STARTTLS protocol (\(known))"))
            }
            var port = startTLS.defaultPort
            if parts.count == 2 {
                guard case .success(let given) = HostPattern.port(String(parts[1])) else {
                    return .failure(.message("fleettrust_starttls \(InventoryDiagnostic.quote(text)): \(InventoryDiagnostic.quote(parts[1])) is not a port"))
                }
                port = given
            }
            endpoints.append((port, startTLS))
        }
        return .success(derived(endpoints, from: base))
    }

    /// One endpoint per distinct port and protocol, at the SSH host's address, in its groups.
    private static func derived(_ wanted: [(port: Int, startTLS: StartTLSProtocol?)], from base: InventoryHost) -> [InventoryHost] {
        var endpoints: [InventoryHost] = []
        for (port, startTLS) in wanted {
            var endpoint = host(name: base.name, address: base.address, port: port, startTLS: startTLS)
            guard !endpoints.contains(where: { $0.port == port && $0.endpoint == endpoint.endpoint }) else { continue }
            endpoint.groups = base.groups
            endpoint.inheritedGroups = base.inheritedGroups
            endpoint.source = base.source
            endpoint.format = base.format
            endpoint.policy = base.policy
            // The host's route goes with its endpoints: a host `ssh` reaches through a proxy
            // (or whose proxy setting does not parse) is never probed directly, TLS included.
            endpoint.routing = base.routing
            endpoints.append(endpoint)
        }
        return endpoints
    }

    private static func host(name: String, address: String, port: Int, startTLS: StartTLSProtocol?) -> InventoryHost {
        var host = InventoryHost(name: TLSEndpoint.rowName(host: name, port: port, startTLS: startTLS), address: address, port: port)
        host.endpoint = .tls(TLSEndpoint(serverName: TLSEndpoint.serverName(for: name), startTLS: startTLS))
        return host
    }
}
