import Glibc
import FleetTrustCore

/// A command-line target: `host`, `host:port`, `[host]:port`, `[v6addr]:port`, or a bare IPv6 address.
public struct ProbeTarget: Hashable, Sendable {
    public var host: String
    public var port: Int

    public struct SyntaxError: Error, CustomStringConvertible {
        public var target: String
        public var reason: String
        public var description: String { "bad target \"\(Sanitizer.clean(target, limit: 80))\": \(reason)" }
    }

    public init(parsing text: String, defaultPort: Int = 22) throws(SyntaxError) {
        func fail(_ reason: String) -> SyntaxError { SyntaxError(target: text, reason: reason) }
        var host = Substring(text)
        var port = defaultPort
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw fail("missing \"]\"") }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw fail("expected \":PORT\" after \"]\"") }
                port = try Self.port(rest.dropFirst(), or: fail("bad port"))
            }
        } else if let colon = host.firstIndex(of: ":"), host.lastIndex(of: ":") == colon {
            port = try Self.port(host[host.index(after: colon)...], or: fail("bad port"))
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw fail("empty host") }
        if host.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(host), &address) == 1 else { throw fail("not an IPv6 address; write [HOST]:PORT") }
        }
        guard host.utf8.count <= 255, !host.contains(where: { $0.isWhitespace || $0 == "/" || $0.asciiValue.map { $0 < 0x20 } ?? false })
        else { throw fail("not a host name or address") }
        self.host = String(host)
        self.port = port
    }

    private static func port(_ text: Substring, or error: SyntaxError) throws(SyntaxError) -> Int {
        guard let port = Int(text), (1...65535).contains(port), text.allSatisfy(\.isASCII) else { throw error }
        return port
    }

    public var inventoryHost: InventoryHost { InventoryHost(name: host, address: host, port: port) }
}
