/// Whose each line of an ssh_config is, so that only the user's own lines name a command
/// fleettrust runs (`Match exec`, `ProxyCommand`, `KnownHostsCommand`).
///
/// Decided per line, from the file the line was read from, never from where a host was declared:
/// an inventory that `Include`s the user's configuration gets the user's lines run as the user's,
/// and its own lines (before or after the `Include`, in any block) stay the inventory's. A file is
/// the user's when it is one of the user's configuration files (`--ssh-config`, `~/.ssh/config`,
/// `/etc/ssh/ssh_config`) or one of them `Include`s it; a line without a file (Ansible's `-o`) is the
/// inventory's.
struct SSHLineOwnership {
    private let everyLine: SSHHostSettings.Origin?
    private let userFiles: Set<String>

    /// Every line is the user's own configuration.
    static let userConfiguration = SSHLineOwnership(everyLine: .userConfiguration, userFiles: [])
    /// No line is the user's.
    static let inventory = SSHLineOwnership(everyLine: .inventory, userFiles: [])

    private init(everyLine: SSHHostSettings.Origin?, userFiles: Set<String>) {
        self.everyLine = everyLine
        self.userFiles = userFiles
    }

    /// The lines of an ssh_config inventory whose `layout` was read: `userConfigurationFiles` are
    /// the user's own configuration files.
    init(layout: SSHConfigLayout, userConfigurationFiles: [String]) {
        let own = Set(userConfigurationFiles.map(FileSystemCalls.canonicalPath))
        guard !own.isEmpty else {
            self.init(everyLine: .inventory, userFiles: [])
            return
        }
        let files = Set(layout.includers.keys).union([layout.file])
        var userFiles = Set(files.filter { own.contains(FileSystemCalls.canonicalPath($0)) })
        // A file included by one of the user's files is the user's too.
        var grew = true
        while grew {
            let more = layout.includers.filter { !userFiles.contains($0.key) && !$0.value.isDisjoint(with: userFiles) }.map(\.key)
            userFiles.formUnion(more)
            grew = !more.isEmpty
        }
        self.init(everyLine: nil, userFiles: userFiles)
    }

    func origin(of location: SourceLocation?) -> SSHHostSettings.Origin {
        if let everyLine { return everyLine }
        guard let location else { return .inventory }
        return userFiles.contains(location.file) ? .userConfiguration : .inventory
    }
}
