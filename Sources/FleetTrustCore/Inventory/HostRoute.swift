/// How `ssh` reaches a host: directly, or through hops in order (`ProxyJump a,b`, or one
/// `ProxyCommand`), parsed once, by the reader, from what the inventory says (`InventoryHost.routing`).
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
    /// the ssh_config and Ansible readers record them) or `ansible_ssh_common_args=ARGS` (`-J LIST`,
    /// `-o ProxyJump=…`/`-o ProxyCommand=…` read from Ansible's ssh arguments).
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
        self = try Self.sshArguments(variable: String(proxy[..<equals]), String(proxy[proxy.index(after: equals)...]))
    }

    /// The route the proxy text describes, or why `ssh` would refuse it: what a reader stores on
    /// the host (`InventoryHost.routing`), so nothing parses the text again.
    public static func parse(_ proxy: String?) -> Result<HostRoute, RouteError> {
        Result { () throws(RouteError) in try HostRoute(proxy: proxy) }
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

    /// The route in one of Ansible's ssh argument variables (`ansible_ssh_common_args=-J a,b`),
    /// read by the one reader of Ansible's ssh arguments, as `ssh` reads them.
    static func sshArguments(variable: String, _ text: String) throws(RouteError) -> HostRoute {
        guard let directive = AnsibleSSHArguments(vars: [variable: text]).proxy else { return .direct }
        return try HostRoute(proxy: directive)
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
