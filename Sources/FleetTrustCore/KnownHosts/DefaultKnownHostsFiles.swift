/// The known_hosts files `ssh` reads when its configuration names none (OpenSSH's
/// `_PATH_SSH_USER_HOSTFILE`, `_PATH_SSH_USER_HOSTFILE2`, `_PATH_SSH_SYSTEM_HOSTFILE`,
/// `_PATH_SSH_SYSTEM_HOSTFILE2`): one list, so every command judges against the same files.
public enum DefaultKnownHostsFiles {
    /// `~/.ssh/known_hosts`, `~/.ssh/known_hosts2` under `home`; new entries go to the first.
    public static func user(home: String) -> [String] {
        [home + "/.ssh/known_hosts", home + "/.ssh/known_hosts2"]
    }

    public static let global = ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]

    /// All four, user files first, as `ssh` merges them.
    public static func all(home: String) -> [String] { user(home: home) + global }

    /// The files to judge against: `given` (`--known-hosts`, `~` expanded) replaces all four; else
    /// the user files then the global ones. Every command chooses here, so `verify`, `scan`, `sync`,
    /// `tidy` and the dashboard read the same files for the same arguments.
    public static func chosen(given: [String], home: String) -> (user: [String], global: [String]) {
        given.isEmpty ? (user(home: home), global) : (given, [])
    }

    /// The four, as help texts name them.
    public static let described = "~/.ssh/known_hosts, ~/.ssh/known_hosts2, /etc/ssh/ssh_known_hosts, /etc/ssh/ssh_known_hosts2"
}
