/// The inventory file formats fleettrust reads, so it can be pointed at what a team already keeps.
///
/// `detect` guesses from the content; `--inventory-format` overrides the guess (see `init(argument:)`).
public enum InventoryFormat: String, Sendable, Codable, CaseIterable {
    /// One `[user@]host[:port]` per line.
    case plain
    /// Ansible INI inventory (`[group]`, `[group:children]`, `[group:vars]`).
    case ansibleINI = "ini"
    /// Ansible YAML inventory (`all: hosts: / children: / vars:`).
    case ansibleYAML = "yaml"
    /// OpenSSH client configuration (`~/.ssh/config` style).
    case sshConfig = "ssh-config"
    /// What `ansible-inventory --list` and dynamic inventory scripts print: a JSON object of groups
    /// (`hosts` and `children` as lists of names, `vars`) with host variables under `_meta.hostvars`.
    case ansibleJSON = "json"

    /// The format in words, for messages.
    public var label: String {
        switch self {
        case .plain: return "a plain list"
        case .ansibleINI: return "an Ansible INI inventory"
        case .ansibleYAML: return "an Ansible YAML inventory"
        case .sshConfig: return "an ssh_config file"
        case .ansibleJSON: return "ansible-inventory JSON"
        }
    }

    /// Accepts the names a user may type after `--inventory-format`.
    public init?(argument: String) {
        switch argument.lowercased() {
        case "plain", "list", "text": self = .plain
        case "ini", "ansible-ini", "ansible": self = .ansibleINI
        case "yaml", "yml", "ansible-yaml": self = .ansibleYAML
        case "ssh-config", "ssh_config", "sshconfig", "ssh": self = .sshConfig
        case "json", "ansible-json", "ansible-inventory": self = .ansibleJSON
        default: return nil
        }
    }

    /// Guesses the format from the first meaningful lines of a file.
    ///
    /// JSON is recognised by a `{` first; ssh_config by its keywords (`Host`, `Match`, `Include`,
    /// `HostName`…), YAML by a `---` marker or a top-level `key:` with nothing after it, INI by a
    /// `[section]` header or a `key=value` host variable, a plain list by a TLS endpoint line
    /// (`smtp://host:25`); everything else is a plain list.
    public static func detect(_ contents: String) -> InventoryFormat {
        if contents.utf8.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }) == UInt8(ascii: "{") {
            return .ansibleJSON
        }
        var examined = 0
        for rawLine in InventoryLines.split(contents, limit: 200_000) {
            let line = rawLine.text.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if let format = detect(line: line) { return format }
            examined += 1
            if examined >= 200 { break }
        }
        return .plain
    }

    private static let sshKeywords: Set<String> = [
        "host", "match", "include", "hostname", "port", "user", "hostkeyalias", "userknownhostsfile",
        "identityfile", "proxyjump", "proxycommand", "stricthostkeychecking", "forwardagent",
        "serveraliveinterval", "controlmaster", "controlpath", "controlpersist", "addkeystoagent",
        "identitiesonly", "loglevel", "compression", "globalknownhostsfile", "hashknownhosts",
        "ignoreunknown", "pubkeyauthentication", "passwordauthentication", "connecttimeout",
        "canonicalizehostname", "sendenv", "setenv", "localforward", "remoteforward", "dynamicforward",
    ]

    private static func detect(line: Substring) -> InventoryFormat? {
        if line == "---" || line.hasPrefix("--- ") { return .ansibleYAML }
        // `smtp://host:25` is a plain-list endpoint, however YAML-like its colons look.
        let lowered = line.lowercased()
        if TLSInventoryEndpoints.schemes.contains(where: { lowered.hasPrefix($0.prefix) }) { return .plain }
        let keyword = line.prefix { $0 != " " && $0 != "\t" && $0 != "=" }
        let rest = line.dropFirst(keyword.count)
        if sshKeywords.contains(keyword.lowercased()), rest.first == " " || rest.first == "\t" || rest.first == "=" {
            return .sshConfig
        }
        if AnsibleINIReader.sectionHeader(line) != nil { return .ansibleINI }
        if line.hasSuffix(":"), !line.contains(" "), !line.hasPrefix("[") { return .ansibleYAML }
        // A trailing comment (`web1  # role: db`) says nothing about the format.
        let content = line.firstRange(of: " #").map { line[..<$0.lowerBound] } ?? line
        if line.hasPrefix("- ") || content.contains(": ") && !content.contains("=") { return .ansibleYAML }
        if line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().contains(where: { $0.contains("=") }) {
            return .ansibleINI
        }
        return nil
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> SubSequence {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\u{0C}" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return self[endIndex...] }
        let end = lastIndex(where: { !isSpace($0) })!
        return self[start...end]
    }
}
