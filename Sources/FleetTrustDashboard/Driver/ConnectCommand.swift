import FleetTrustCore

/// The `--connect-command` template, expanded into an argument vector (no shell involved).
///
/// Placeholders: `{options}` (strict host-key checking with the dashboard's known_hosts files,
/// as several arguments), `{port}`, `{target}` (`user@address` or the address), `{host}` (the
/// address), `{name}` (the inventory name).
public struct ConnectCommand: Equatable, Sendable {
    public static let defaultTemplate = "ssh {options} -p {port} {target}"

    public var template: String
    public var knownHostsFiles: [String]
    public var user: String?

    public init(template: String = ConnectCommand.defaultTemplate, knownHostsFiles: [String], user: String? = nil) {
        self.template = template
        self.knownHostsFiles = knownHostsFiles
        self.user = user
    }

    public var options: [String] {
        let files = knownHostsFiles.map { $0.contains(" ") ? "\"\($0)\"" : $0 }.joined(separator: " ")
        return ["-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=\(files)"]
    }

    /// A host or user that starts with `-` would be read by `ssh` as an option (`-oProxyCommand=…`).
    public struct UnsafeTarget: Error, CustomStringConvertible {
        public var value: String
        public var description: String { "refusing to connect: '\(Sanitizer.clean(value, limit: 80))' would be read as an option" }
    }

    public func arguments(for host: InventoryHost) throws(UnsafeTarget) -> [String] {
        let login = host.user ?? user
        for value in [host.address, host.name, login ?? ""] where value.hasPrefix("-") { throw UnsafeTarget(value: value) }
        let target = login.map { "\($0)@\(host.address)" } ?? host.address
        return template.split(whereSeparator: { $0 == " " || $0 == "\t" }).flatMap { word -> [String] in
            if word == "{options}" { return options }
            return [String(word)
                .replacingAll("{port}", with: String(host.port))
                .replacingAll("{target}", with: target)
                .replacingAll("{host}", with: host.address)
                .replacingAll("{name}", with: host.name)]
        }
    }
}

extension String {
    func replacingAll(_ placeholder: String, with value: String) -> String {
        split(separator: placeholder, omittingEmptySubsequences: false).joined(separator: value)
    }
}
