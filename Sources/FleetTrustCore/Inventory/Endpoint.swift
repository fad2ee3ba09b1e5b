/// What one inventory row is, as a probe and the judge need it: an SSH host, or a TLS endpoint
/// with the name its certificate must carry and, for a service that starts in plain text, the
/// protocol of its upgrade (`TLSEndpoint.startTLS`).
///
/// One sum rather than optional fields, so that every place that treats the protocols apart
/// (the probe chosen for a row, the judge, the renderers, what `ssh` may be handed) switches on
/// it and a new protocol is a new case the compiler points each of them at. How the host is
/// reached (its route) is not part of it: every protocol is reached, or refused, the same way.
public enum Endpoint: Hashable, Sendable {
    case ssh
    case tls(TLSEndpoint)

    /// The protocol's name in outputs and recorded documents (`protocol`).
    public var endpointProtocol: EndpointProtocol {
        switch self {
        case .ssh: return .ssh
        case .tls: return .tls
        }
    }
}
