import Glibc

/// The strings `ssh` looks up in known_hosts for one connection
/// (`ssh.c` host canonicalisation, `sshconnect.c:get_hostfile_hostname_ipaddr`).
///
/// Getting these exactly right is what makes our verdict equal `ssh`'s: `ssh` lowercases
/// names, canonicalises address literals, and adds `[host]:port` for ports other than 22.
public struct LookupName: Sendable, Hashable {
    /// The host name as `ssh` holds it after canonicalisation, without port; certificates'
    /// principals are checked against this (or the alias).
    public let name: String
    /// The canonical host itself, even when an alias is in use.
    public let host: String
    /// The string looked up for the host (`host` or `[host]:port`, or the alias).
    public let hostString: String
    /// The bare string for the retry without port, when `ssh` would retry.
    public let retryString: String?
    /// Set when `HostKeyAlias` is in use.
    public let isAlias: Bool

    public init(host: String, port: Int = 22, hostKeyAlias: String? = nil) {
        let canonical = LookupName.canonicalHost(host)
        self.host = canonical
        if let alias = hostKeyAlias {
            let lowered = String(decoding: KnownHostsPattern.lowercased(Array(alias.utf8)), as: UTF8.self)
            self.name = lowered
            self.hostString = lowered
            self.retryString = nil
            self.isAlias = true
        } else {
            self.name = canonical
            self.hostString = LookupName.hostPort(canonical, port: port)
            self.retryString = (port == 22 || port == 0) ? nil : canonical
            self.isAlias = false
        }
    }

    /// `put_host_port`: the bare host for port 22 (or 0), `[host]:port` otherwise.
    public static func hostPort(_ host: String, port: Int) -> String {
        port == 22 || port == 0 ? host : "[\(host)]:\(port)"
    }

    /// Lowercases names and canonicalises address literals as `ssh` does: `127.1` becomes
    /// `127.0.0.1`, IPv6 addresses take their compressed form. Names `ssh` takes for
    /// addresses (with `:` or `%`, or only digits and dots) are not lowercased.
    public static func canonicalHost(_ host: String) -> String {
        if let address = canonicalAddress(host) { return address }
        let bytes = Array(host.utf8)
        let looksLikeAddress = bytes.contains(UInt8(ascii: ":")) || bytes.contains(UInt8(ascii: "%"))
            || bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ".") }
        if looksLikeAddress { return host }
        return String(decoding: KnownHostsPattern.lowercased(bytes), as: UTF8.self)
    }

    /// The numeric form of an IPv4 (any `inet_aton` syntax) or IPv6 literal, or nil.
    public static func canonicalAddress(_ text: String) -> String? {
        guard !text.isEmpty, !text.utf8.contains(UInt8(ascii: "%")) else { return nil }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return nil }
        var v4 = in_addr()
        if inet_aton(text, &v4) != 0 {
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            guard inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }
}

extension LookupName {
    /// `ssh` switches CheckHostIP off for loopback peers (`sockaddr_is_local`).
    public static func isLoopback(_ address: String) -> Bool {
        guard let canonical = canonicalAddress(address) else { return false }
        return canonical.hasPrefix("127.") || canonical == "::1"
    }
}
