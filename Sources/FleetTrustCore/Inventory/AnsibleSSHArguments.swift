/// How Ansible's ssh connection plugin passes extra settings to `ssh`, read once as `ssh` reads its
/// command line: `ansible_ssh_args`, then the `-o Port=` Ansible adds for `ansible_port`, then
/// `ansible_ssh_common_args`, then `ansible_ssh_extra_args` (the order of the plugin's
/// `_build_command`), each split as Python's `shlex.split` splits it and walked with `ssh`'s own
/// option letters, so a cluster (`-CoProxyCommand=…`, `-4J gate`), a quote inside a word
/// (`-o"ProxyJump gate"`) or `-p 2222` means to fleettrust what it means to `ssh`.
///
/// One reader for every setting (the proxy, `HostName`, `Port`, the host-key options): a second,
/// looser reader for any of them would let an inventory send `ssh` one way and fleettrust another.
struct AnsibleSSHArguments {
    /// `-o Keyword=value` settings, keywords lower-cased, first value winning as in `ssh`; `-p`
    /// counts as `port`.
    private(set) var options: [String: String] = [:]
    /// The first proxy setting (`-J`, `-o ProxyJump`, `-o ProxyCommand`) as a directive
    /// (`ProxyJump a,b`, `ProxyCommand …`); nil when there is none or it says `none`.
    private(set) var proxy: String?
    private var proxySeen = false

    /// `ssh`'s option letters (OpenSSH 9.2 `ssh.c`); those followed by `:` take an argument.
    private static let letters = "1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:PQ:R:S:TVw:W:XYy"
    private static let takingArgument: Set<Character> = {
        let characters = Array(letters)
        return Set(characters.indices.filter { $0 + 1 < characters.count && characters[$0 + 1] == ":" }.map { characters[$0] })
    }()

    init(vars: [String: String]) {
        read(vars["ansible_ssh_args"])
        let portKey = vars["ansible_ssh_port"] != nil ? "ansible_ssh_port" : "ansible_port"
        if let port = vars[portKey] { set("port", port) }
        for key in ["ansible_ssh_common_args", "ansible_ssh_extra_args"] { read(vars[key]) }
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

    private mutating func read(_ text: String?) {
        guard let text else { return }
        let words = Self.words(text)
        var index = 0
        while index < words.count {
            let word = Array(words[index])
            index += 1
            guard word.count > 1, word[0] == "-", word != ["-", "-"] else { continue }
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
                option(letter, argument)
                break
            }
        }
    }

    private mutating func option(_ letter: Character, _ argument: String) {
        switch letter {
        case "o":
            let keyword = argument.prefix { $0 != " " && $0 != "\t" && $0 != "=" }.lowercased()
            let value = argument.dropFirst(keyword.count).drop { $0 == " " || $0 == "\t" || $0 == "=" }
            switch keyword {
            case "proxyjump": setProxy("ProxyJump", String(value))
            case "proxycommand": setProxy("ProxyCommand", String(value))
            default: set(keyword, String(value).trimmingCharacters(in: .whitespaces))
            }
        case "J": setProxy("ProxyJump", argument)
        case "p": set("port", argument)
        default: break
        }
    }

    private mutating func set(_ keyword: String, _ value: String) {
        if !keyword.isEmpty, options[keyword] == nil { options[keyword] = value }
    }

    private mutating func setProxy(_ keyword: String, _ value: String) {
        guard !proxySeen else { return }
        proxySeen = true
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        proxy = trimmed.lowercased() == "none" ? nil : "\(keyword) \(trimmed)"
    }

    static func files(_ value: String) -> [String] {
        value.split(separator: " ").map(String.init)
    }
}
