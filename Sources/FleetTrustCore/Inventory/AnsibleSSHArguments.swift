/// How Ansible's ssh connection plugin passes extra settings to `ssh`: the `-o` options and
/// proxies in `ansible_ssh_common_args` and `ansible_ssh_extra_args`, read as `ssh` reads them.
enum AnsibleSSHArguments {
    /// The `-o Keyword=value` options (and `-oKeyword=value`, `-o Keyword value`) in Ansible's ssh
    /// arguments, in command-line order, keywords lowercased, the value split into words as `ssh`
    /// splits an `-o` line. Common args come first, then extra args, the order in which Ansible
    /// puts them on ssh's command line.
    static func sshOptions(in vars: [String: String]) -> [(keyword: String, arguments: [String], raw: String)] {
        var options: [(keyword: String, arguments: [String], raw: String)] = []
        for key in ["ansible_ssh_common_args", "ansible_ssh_extra_args"] {
            guard let value = vars[key] else { continue }
            let tokens = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { token -> String in
                let quote: (Character) -> Bool = { $0 == "'" || $0 == "\"" }
                return String(token.drop(while: quote).reversed().drop(while: quote).reversed())
            }
            var index = 0
            while index < tokens.count {
                var option: String?
                if tokens[index] == "-o", index + 1 < tokens.count {
                    option = tokens[index + 1]
                    index += 1
                } else if tokens[index].hasPrefix("-o") {
                    option = String(tokens[index].dropFirst(2))
                }
                index += 1
                guard let option else { continue }
                let parts = option.split(maxSplits: 1, whereSeparator: { $0 == "=" || $0 == " " })
                let keyword = (parts.first.map { String($0).lowercased() } ?? "").trimmingCharacters(in: .whitespaces)
                var argument = parts.count > 1 ? String(parts[1]) : nil
                if argument == nil, index < tokens.count, !tokens[index].hasPrefix("-") {
                    argument = tokens[index]
                    index += 1
                }
                if let argument, !keyword.isEmpty {
                    options.append((keyword, argument.split(separator: " ").map(String.init), argument))
                }
            }
        }
        return options
    }

    /// The proxy Ansible's ssh would go through: a `ProxyJump`/`ProxyCommand` option or `-J`
    /// in `ansible_ssh_common_args` or `ansible_ssh_extra_args`, described as written.
    static func proxy(in vars: [String: String]) -> String? {
        for key in ["ansible_ssh_common_args", "ansible_ssh_extra_args"] {
            guard let value = vars[key] else { continue }
            let tokens = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { token -> String in
                let quote: (Character) -> Bool = { $0 == "'" || $0 == "\"" }
                return String(token.drop(while: quote).reversed().drop(while: quote).reversed())
            }
            for (index, token) in tokens.enumerated() {
                let lower = token.lowercased()
                let option = lower.hasPrefix("-o") ? String(lower.dropFirst(2)) : lower
                for name in ["proxyjump", "proxycommand"] where option.hasPrefix(name) {
                    var argument = option.dropFirst(name.count).drop { $0 == "=" || $0 == " " }
                    if argument.isEmpty, index + 1 < tokens.count { argument = Substring(tokens[index + 1].lowercased()) }
                    if argument != "none" { return "\(key)=\(value)" }
                }
                if token.hasPrefix("-J") { return "\(key)=\(value)" }
            }
        }
        return nil
    }
}
