/// How `ssh` reaches a host: directly, or through hops in order (`ProxyJump a,b`, or one
/// `ProxyCommand`), read from what the inventory says (`InventoryHost.proxy`).
///
/// It is a fact of the judged host (`JudgedHost.route`), rendered in every output, and the plan
/// the prober follows: each `jump` hop is reached by the real `ssh` (so it is resolved through
/// ssh_config and its host key checked exactly as `ssh` does), a `command` hop is run as `ssh`
/// runs a ProxyCommand.
public struct HostRoute: Hashable, Sendable {
    public enum Hop: Hashable, Sendable, CustomStringConvertible {
        /// A `ProxyJump` hop as written: `[user@]host[:port]` (or `ssh://…`).
        case jump(JumpHost)
        /// A `ProxyCommand`, before `%` expansion.
        case command(String)

        public var description: String {
            switch self {
            case .jump(let hop): return hop.description
            case .command(let command): return "ProxyCommand \(command)"
            }
        }
    }

    /// The hops in the order the connection passes them; empty for a direct host.
    public var hops: [Hop]

    public init(hops: [Hop] = []) { self.hops = hops }

    public static let direct = HostRoute()

    public var isDirect: Bool { hops.isEmpty }

    /// The `ProxyJump` hops, in order (a chain `a,b` reaches `b` through `a`).
    public var jumpHosts: [JumpHost] {
        hops.compactMap { if case .jump(let hop) = $0 { hop } else { nil } }
    }

    /// The route the inventory's proxy text describes: `ProxyJump LIST`, `ProxyCommand CMD` (as
    /// the ssh_config reader records them) or `ansible_ssh_common_args=ARGS` (as the Ansible reader
    /// records them, `-J LIST` and `-o ProxyJump=…`/`-o ProxyCommand=…` read from the arguments).
    /// Nil (or `none`) is direct.
    public init(proxy: String?) {
        guard let proxy else { self = .direct; return }
        if let space = proxy.firstIndex(of: " "), !proxy.hasPrefix("ansible_") {
            let keyword = proxy[..<space].lowercased()
            let value = String(proxy[proxy.index(after: space)...]).trimmingCharacters(in: .whitespaces)
            self = Self.option(keyword, value) ?? .direct
            return
        }
        guard let equals = proxy.firstIndex(of: "=") else { self = .direct; return }
        self = Self.sshArguments(String(proxy[proxy.index(after: equals)...]))
    }

    /// The ProxyJump / ProxyCommand text that gives this route back (what replay restores).
    public var proxyDirective: String? {
        if hops.isEmpty { return nil }
        if case .command(let command) = hops[0] { return "ProxyCommand \(command)" }
        return "ProxyJump " + jumpHosts.map(\.description).joined(separator: ",")
    }

    private static func option(_ keyword: String, _ value: String) -> HostRoute? {
        guard value.lowercased() != "none", !value.isEmpty else { return nil }
        switch keyword {
        case "proxyjump":
            return HostRoute(hops: value.split(separator: ",").compactMap { JumpHost(String($0)) }.map(Hop.jump))
        case "proxycommand":
            return HostRoute(hops: [.command(value)])
        default:
            return nil
        }
    }

    /// The route in an `ssh` argument string (`-J a,b`, `-o ProxyJump=a`, `-oProxyCommand="…"`):
    /// the first proxy option wins, as the first value of an option does for `ssh`.
    static func sshArguments(_ text: String) -> HostRoute {
        let words = (try? InventoryLines.words(text)) ?? text.split(separator: " ").map(String.init)
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word.hasPrefix("-J") {
                let value = word.count > 2 ? String(word.dropFirst(2)) : (index < words.count ? words[index] : "")
                if word.count == 2 { index += 1 }
                return option("proxyjump", value) ?? .direct
            }
            guard word.hasPrefix("-o") else { continue }
            var setting = word.count > 2 ? String(word.dropFirst(2)) : (index < words.count ? words[index] : "")
            if word.count == 2 { index += 1 }
            setting = setting.trimmingCharacters(in: .whitespaces)
            guard let cut = setting.firstIndex(where: { $0 == "=" || $0 == " " }) else { continue }
            let keyword = setting[..<cut].lowercased()
            guard keyword == "proxyjump" || keyword == "proxycommand" else { continue }
            let value = setting[setting.index(after: cut)...].drop { $0 == "=" || $0 == " " }
            return option(keyword, String(value)) ?? .direct
        }
        return .direct
    }
}

/// One `ProxyJump` hop: `[user@]host[:port]`, `[user@][v6]:port`, or `ssh://[user@]host[:port]`.
public struct JumpHost: Hashable, Sendable, CustomStringConvertible {
    public var user: String?
    public var host: String
    public var port: Int?

    public init(user: String? = nil, host: String, port: Int? = nil) {
        self.user = user
        self.host = host
        self.port = port
    }

    /// Nil for text `ssh` would refuse (empty host, bad port, a leading `-`).
    public init?(_ text: String) {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        if rest.hasPrefix("ssh://") { rest = rest.dropFirst(6) }
        if let at = rest.lastIndex(of: "@") {
            user = String(rest[..<at])
            rest = rest[rest.index(after: at)...]
        }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let tail = rest[rest.index(after: close)...]
            if tail.hasPrefix(":") {
                guard let port = Int(tail.dropFirst()), (1...65535).contains(port) else { return nil }
                self.port = port
            } else if !tail.isEmpty {
                return nil
            }
        } else if let colon = rest.lastIndex(of: ":"), rest.firstIndex(of: ":") == colon {
            guard let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else { return nil }
            self.port = port
            host = String(rest[..<colon])
        } else {
            host = String(rest)
        }
        guard !host.isEmpty, !host.hasPrefix("-"), !(user?.hasPrefix("-") ?? false),
              !host.contains(where: { $0.isWhitespace }) else { return nil }
    }

    public var description: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return (user.map { "\($0)@" } ?? "") + name + (port.map { ":\($0)" } ?? "")
    }
}
