/// Which protocol an endpoint speaks: an SSH host or a TLS endpoint (HTTPS, LDAPS, a BMC console,
/// or a plain-text service upgraded with STARTTLS). Both are rows of the same fleet, judged by the same `FleetJudge` into the same `JudgedHost`.
public enum EndpointProtocol: String, Hashable, Sendable, Codable, CaseIterable {
    case ssh, tls
}

/// What makes an inventory host a TLS endpoint: the SNI it sends and its STARTTLS protocol.
///
/// The name is the inventory's (the host's DNS name, sent as SNI and checked against the
/// certificate), never the address it is reached at; an endpoint named only by an IP literal
/// sends no SNI and its certificate must carry that IP address. The checked name is not stored
/// here but read back from the row's name (`hostName(ofRow:)`, `referenceIdentity(for:)`), so a
/// replayed document checks the name the live scan checked, whatever SNI it says was sent.
public struct TLSEndpoint: Hashable, Sendable, Codable {
    /// The DNS name sent as SNI and checked against the certificate; nil when the endpoint has
    /// no name but its address.
    public var serverName: String?
    /// For a service that starts in plain text: the protocol whose upgrade precedes the
    /// handshake; nil for an endpoint that speaks TLS from the first byte.
    public var startTLS: StartTLSProtocol?

    public init(serverName: String?, startTLS: StartTLSProtocol? = nil) {
        self.serverName = serverName
        self.startTLS = startTLS
    }

    /// `name` when it can be a DNS name in SNI (not an IP literal, only LDH labels and dots).
    public static func serverName(for name: String) -> String? {
        guard !name.isEmpty, name.utf8.count <= 253, CIDRPattern.addressBytes(name) == nil else { return nil }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard (1...63).contains(label.utf8.count), label.first != "-", label.last != "-",
                  label.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") })
            else { return nil }
        }
        return name.lowercased()
    }

    /// The reference identity a certificate is checked against for a host the inventory names
    /// `name`: the name itself, lowercased, when it is a DNS name (a trailing dot kept, as OpenSSL
    /// checks it: `mail.example.com.` matches no certificate for `mail.example.com`), or the IP
    /// literal it is; nil when it can be neither (`web;id`, `mäil.example.com` not in its `xn--`
    /// form), and then the endpoint is refused: the address it is reached at is never the name.
    public static func referenceIdentity(for name: String) -> String? {
        if CIDRPattern.addressBytes(name) != nil { return name }
        let dotless = name.hasSuffix(".") ? String(name.dropLast()) : name
        return serverName(for: dotless).map { name.hasSuffix(".") ? $0 + "." : $0 }
    }

    /// The inventory's name for the host of the row `rowName` (`rowName(host:port:startTLS:)`
    /// read back): what a live scan and a replayed one both check the certificate against.
    public static func hostName(ofRow rowName: String) -> String {
        var text = Substring(rowName)
        if let slash = text.lastIndex(of: "/") { text = text[..<slash] }
        if text.hasPrefix("["), let close = text.lastIndex(of: "]") { return String(text[text.index(after: text.startIndex)..<close]) }
        if let colon = text.lastIndex(of: ":") { text = text[..<colon] }
        return String(text)
    }

    /// The row name of a TLS endpoint: `host:port/tls` (`[v6]:port/tls`), or with the STARTTLS
    /// protocol in place of `tls` (`host:25/smtp`).
    public static func rowName(host: String, port: Int, startTLS: StartTLSProtocol? = nil) -> String {
        (host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)") + "/" + (startTLS?.rawValue ?? "tls")
    }
}

/// What one TLS handshake established, as recorded values: enough to judge it again later
/// (`scan --replay`) at another clock against other CA files and pins.
public struct TLSHandshake: Hashable, Sendable {
    /// Certificates the server sends beyond this are not kept (a real chain has 2 to 4).
    public static let maximumCertificates = 10
    /// A certificate larger than this is not kept.
    public static let maximumCertificateBytes = 64 * 1024

    /// `TLSv1.3`, `TLSv1.2`.
    public var version: String
    /// OpenSSL's name of the negotiated cipher suite.
    public var cipher: String
    /// The SNI sent, if any.
    public var serverName: String?
    /// The chain the server sent, leaf first, as DER.
    public var chain: [[UInt8]]
    /// Whether the server stapled an OCSP response.
    public var ocspStapled: Bool
    /// Round trip of connect and handshake, in milliseconds.
    public var handshakeMilliseconds: Double?

    public init(version: String, cipher: String, serverName: String?, chain: [[UInt8]], ocspStapled: Bool,
                handshakeMilliseconds: Double? = nil) {
        self.version = CleanText(version, limit: 32).value
        self.cipher = CleanText(cipher, limit: 96).value
        self.serverName = serverName
        // Kept in place even when too large to read: dropping one would make the next certificate
        // the leaf (the judge refuses a leaf it cannot read).
        self.chain = Array(chain.prefix(Self.maximumCertificates))
        self.ocspStapled = ocspStapled
        self.handshakeMilliseconds = handshakeMilliseconds
    }
}
