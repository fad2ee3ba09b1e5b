/// How `ssh` reaches a host: directly, or through hops in order (`ProxyJump a,b`, or one
/// `ProxyCommand`), parsed once from what the inventory says (`InventoryHost.proxy`).
///
/// It is a fact of the judged host (`JudgedHost.route`), rendered in every output, and the plan
/// the prober follows: each `jump` hop is reached by the real `ssh` (so it is resolved through
/// ssh_config and its host key checked exactly as `ssh` does), a `command` hop is run as `ssh`
/// runs a ProxyCommand. A proxy setting that does not parse is a `RouteError`, never a shorter or
/// an empty (direct) route: a direct probe could reach another machine than the one `ssh` reaches.
public struct HostRoute: Hashable, Sendable, Codable {
    public enum Hop: Hashable, Sendable, Codable, CustomStringConvertible {
        /// A `ProxyJump` hop: `[user@]host[:port]` (or `ssh://…`).
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
    /// Nil (or `none`) is direct; a list `ssh` would refuse ("Invalid ProxyJump") throws.
    public init(proxy: String?) throws(RouteError) {
        guard let proxy else { self = .direct; return }
        if let space = proxy.firstIndex(of: " "), !proxy.hasPrefix("ansible_") {
            let keyword = proxy[..<space].lowercased()
            let value = String(proxy[proxy.index(after: space)...]).trimmingCharacters(in: .whitespaces)
            self = try Self.option(keyword, value) ?? .direct
            return
        }
        guard let equals = proxy.firstIndex(of: "=") else { self = .direct; return }
        self = try Self.sshArguments(String(proxy[proxy.index(after: equals)...]))
    }

    /// The ProxyJump / ProxyCommand text that gives this route back (what replay restores).
    public var proxyDirective: String? {
        if hops.isEmpty { return nil }
        if case .command(let command) = hops[0] { return "ProxyCommand \(command)" }
        return "ProxyJump " + jumpHosts.map(\.description).joined(separator: ",")
    }

    private static func option(_ keyword: String, _ value: String) throws(RouteError) -> HostRoute? {
        guard value.lowercased() != "none" else { return nil }
        switch keyword {
        case "proxyjump":
            guard !value.isEmpty else { throw RouteError.missingArgument("ProxyJump") }
            var hops: [Hop] = []
            for text in value.split(separator: ",", omittingEmptySubsequences: false) {
                do {
                    hops.append(.jump(try JumpHost(String(text))))
                } catch {
                    throw RouteError(setting: "ProxyJump", value: value, problem: error)
                }
            }
            return HostRoute(hops: hops)
        case "proxycommand":
            guard !value.isEmpty else { throw RouteError.missingArgument("ProxyCommand") }
            return HostRoute(hops: [.command(value)])
        default:
            return nil
        }
    }

    /// The route in an `ssh` argument string (`-J a,b`, `-o ProxyJump=a`, `-oProxyCommand="…"`):
    /// the first proxy option wins, as the first value of an option does for `ssh`.
    static func sshArguments(_ text: String) throws(RouteError) -> HostRoute {
        let words = (try? InventoryLines.words(text)) ?? text.split(separator: " ").map(String.init)
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word.hasPrefix("-J") {
                let value = word.count > 2 ? String(word.dropFirst(2)) : (index < words.count ? words[index] : "")
                if word.count == 2 { index += 1 }
                return try option("proxyjump", value) ?? .direct
            }
            guard word.hasPrefix("-o") else { continue }
            var setting = word.count > 2 ? String(word.dropFirst(2)) : (index < words.count ? words[index] : "")
            if word.count == 2 { index += 1 }
            setting = setting.trimmingCharacters(in: .whitespaces)
            guard let cut = setting.firstIndex(where: { $0 == "=" || $0 == " " }) else { continue }
            let keyword = setting[..<cut].lowercased()
            guard keyword == "proxyjump" || keyword == "proxycommand" else { continue }
            let value = setting[setting.index(after: cut)...].drop { $0 == "=" || $0 == " " }
            return try option(keyword, String(value)) ?? .direct
        }
        return .direct
    }
}

/// A proxy setting `ssh` refuses ("Invalid ProxyJump", "Missing argument"): the host it was given
/// for is refused at stage `proxy`, never probed directly.
public struct RouteError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    /// `ProxyJump` or `ProxyCommand` (`-J` reads as `ProxyJump`).
    public var setting: String
    /// The value as written (untrusted).
    public var value: String
    /// Why it does not parse, in words.
    public var reason: String

    public init(setting: String, value: String, problem: JumpHost.Problem) {
        self.init(setting: setting, value: value, reason: problem.description)
    }

    static func missingArgument(_ setting: String) -> RouteError {
        RouteError(setting: setting, value: "", reason: "it has no value")
    }

    init(setting: String, value: String, reason: String) {
        self.setting = setting
        self.value = value
        self.reason = reason
    }

    public var description: String {
        "\(setting) \"\(Sanitizer.clean(value, limit: 120))\" is invalid: \(reason); ssh refuses it (Invalid \(setting))"
    }
}
