/// The plain-text protocols whose servers upgrade a connection to TLS in place (STARTTLS), as
/// `openssl s_client -starttls` names them: a mail relay on 25, submission on 587, IMAP on 143,
/// POP3 on 110, LDAP on 389 (the StartTLS extended operation), PostgreSQL on 5432 (SSLRequest).
///
/// Read once at the inventory boundary (a plain-list scheme, an Ansible `fleettrust_starttls`
/// entry); after it the endpoint is a TLS endpoint like any other, with this protocol saying how
/// its probe asks for the upgrade before the handshake.
public enum StartTLSProtocol: String, Hashable, Sendable, Codable, CaseIterable {
    case smtp, submission, imap, pop3, ldap, postgres

    /// The port the protocol's servers listen on unless told otherwise.
    public var defaultPort: Int {
        switch self {
        case .smtp: return 25
        case .submission: return 587
        case .imap: return 143
        case .pop3: return 110
        case .ldap: return 389
        case .postgres: return 5432
        }
    }

    /// The dialogue spoken before the handshake: submission is SMTP on another port.
    public var dialect: StartTLSProtocol { self == .submission ? .smtp : self }

    /// How people name the protocol in a sentence (`SMTP`, `PostgreSQL`).
    public var displayName: String {
        switch self {
        case .smtp: return "SMTP"
        case .submission: return "SMTP submission"
        case .imap: return "IMAP"
        case .pop3: return "POP3"
        case .ldap: return "LDAP"
        case .postgres: return "PostgreSQL"
        }
    }

    /// The protocol an inventory word names (`smtp`, `SMTP`, `postgresql`), nil when none.
    public init?(inventoryName: some StringProtocol) {
        let lowered = inventoryName.lowercased()
        if lowered == "postgresql" { self = .postgres; return }
        guard let known = StartTLSProtocol(rawValue: lowered) else { return nil }
        self = known
    }
}
