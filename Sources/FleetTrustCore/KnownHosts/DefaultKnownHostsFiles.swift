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

    /// The four, as help texts name them.
    public static let described = "~/.ssh/known_hosts, ~/.ssh/known_hosts2, /etc/ssh/ssh_known_hosts, /etc/ssh/ssh_known_hosts2"
}
