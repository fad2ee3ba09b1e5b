/// How Ansible's ssh connection plugin passes extra settings to `ssh`, read once as `ssh` reads its
/// command line: `ansible_ssh_args`, then `ansible_ssh_common_args`, then `ansible_ssh_extra_args`
/// (the order of the plugin's `_build_command`), each split as Python's `shlex.split` splits it and walked with `ssh`'s own
/// option letters, so a cluster (`-CoProxyCommand=…`, `-4J gate`), a quote inside a word
/// (`-o"ProxyJump gate"`) or `-p 2222` means to fleettrust what it means to `ssh`.
///
/// One reader for every setting (the proxy, `-p`, every `-o` keyword): a second,
/// looser reader for any of them would let an inventory send `ssh` one way and fleettrust another.
struct AnsibleSSHArguments {
    /// One `-o Keyword=value` (or `-p PORT`, as `port`) in command-line order: the keyword
    /// lower-cased, the value split into words as `ssh` splits an `-o` line, the value as written,
    /// and the variable it came from (for `file:line`).
    typealias Option = (keyword: String, arguments: [String], raw: String, variable: String)

    /// Every `-o` setting (and `-p` as `port`), in the order `ssh` reads them; `ssh` keeps the
    /// first value of each keyword.
    private(set) var options: [Option] = []
    /// The first proxy setting (`-J`, `-o ProxyJump`, `-o ProxyCommand`) as a directive
    /// (`ProxyJump a,b`, `ProxyCommand …`); nil when there is none or it says `none`.
    private(set) var proxy: String?
    private(set) var proxySeen = false
    private var proxyCommandSeen = false
    /// What makes `ssh` decide under something fleettrust does not judge: another configuration
    /// file (`-F`), a word `ssh` would take as the host to connect to, `-J` after a ProxyCommand
    /// (which `ssh` refuses). Such a host is `unchecked`, never judged as if they were not there.
    private(set) var unjudged: [(keyword: String, why: String, variable: String)] = []

    /// `ssh`'s option letters (OpenSSH 9.2 `ssh.c`); those followed by `:` take an argument.
    private static let letters = "1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:PQ:R:S:TVw:W:XYy"
    private static let takingArgument: Set<Character> = {
        let characters = Array(letters)
        return Set(characters.indices.filter { $0 + 1 < characters.count && characters[$0 + 1] == ":" }.map { characters[$0] })
    }()

    init(vars: [String: String]) {
        for key in ["ansible_ssh_args", "ansible_ssh_common_args", "ansible_ssh_extra_args"] { read(vars[key], from: key) }
    }

    /// The `-o` settings of Ansible's ssh arguments, in command-line order.
    static func sshOptions(in vars: [String: String]) -> [Option] { AnsibleSSHArguments(vars: vars).options }

    /// What the arguments make `ssh` decide under that fleettrust does not judge.
    static func unjudged(in vars: [String: String]) -> [(keyword: String, why: String, variable: String)] {
        AnsibleSSHArguments(vars: vars).unjudged
    }

    /// The proxy Ansible's ssh goes through, as a directive (`ProxyJump a,b`, `ProxyCommand …`);
    /// `.some(nil)` when the arguments say `none`, nil when they name no proxy (then the user's
    /// ssh configuration may, as it does for `ssh`).
    static func proxy(in vars: [String: String]) -> String?? {
        let arguments = AnsibleSSHArguments(vars: vars)
        return arguments.proxySeen ? .some(arguments.proxy) : nil
    }

    /// The words of an argument string, split as `shlex.split` splits it (no comments).
    static func words(_ text: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in text {
            if escaped {
                if let open = quote, character != open, character != "\\" { current.append("\\") }
                current.append(character)
                escaped = false
            } else if let open = quote {
                if character == open { quote = nil } else if character == "\\" && open == "\"" { escaped = true } else { current.append(character) }
            } else if character == " " || character == "\t" || character == "\n" || character == "\r" {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == "\\" {
                escaped = true
                inWord = true
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }

    private mutating func read(_ text: String?, from variable: String) {
        guard let text else { return }
        let words = Self.words(text)
        var index = 0
        while index < words.count {
            let word = Array(words[index])
            index += 1
            guard word.count > 1, word[0] == "-", word != ["-", "-"] else {
                // ssh stops reading options at the first other word and takes it as the host.
                unjudged.append(("destination", "ssh would take \(InventoryDiagnostic.quote(String(word))) in \(variable) as the host to connect to", variable))
                return
            }
            var position = 1
            while position < word.count {
                let letter = word[position]
                position += 1
                guard Self.takingArgument.contains(letter) else { continue }
                var argument = String(word[position...])
                if argument.isEmpty, index < words.count {
                    argument = words[index]
                    index += 1
                }
                option(letter, argument, from: variable)
                break
            }
        }
    }

    private mutating func option(_ letter: Character, _ argument: String, from variable: String) {
        switch letter {
        case "o":
            let keyword = argument.prefix { $0 != " " && $0 != "\t" && $0 != "=" }.lowercased()
            let value = argument.dropFirst(keyword.count).drop { $0 == " " || $0 == "\t" || $0 == "=" }
            switch keyword {
            case "proxyjump": setProxy("ProxyJump", String(value))
            case "proxycommand": setProxy("ProxyCommand", String(value))
            default: add(keyword, String(value).trimmingCharacters(in: .whitespaces), from: variable)
            }
        case "J":
            // ssh 9.2 stops on `-J` after any ProxyCommand (even `none`): "Cannot specify -J with ProxyCommand".
            if proxyCommandSeen { unjudged.append(("ProxyJump", "ssh refuses -J after a ProxyCommand", variable)) }
            setProxy("ProxyJump", argument)
        case "p": add("port", argument, from: variable)
        case "l": add("user", argument, from: variable)
        case "F": unjudged.append(("-F", "ssh would read \(InventoryDiagnostic.quote(argument)) instead of your ssh configuration", variable))
        default: break
        }
    }

    private mutating func add(_ keyword: String, _ value: String, from variable: String) {
        guard !keyword.isEmpty else { return }
        options.append((keyword, value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init), value, variable))
    }

    private mutating func setProxy(_ keyword: String, _ value: String) {
        if keyword == "ProxyCommand" { proxyCommandSeen = true }
        guard !proxySeen else { return }
        proxySeen = true
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        proxy = trimmed.lowercased() == "none" ? nil : "\(keyword) \(trimmed)"
    }

}
