/// The ciphers and MACs `ssh` offers a host: OpenSSH 9.2's defaults, as the host's `Ciphers` and
/// `MACs` shape them (`kex_assemble_names`, as for `KexAlgorithms`).
///
/// They never decide which key `ssh` accepts, but they are in the KEXINIT a server or a man in the
/// middle reads before it commits to a host key: the probe's connection shaped like `ssh`'s lists
/// what `ssh` lists, and where `ssh` can agree no cipher or MAC with the server, neither does it.
public enum TransportAlgorithms {
    /// `KEX_CLIENT_ENCRYPT` of the installed OpenSSH 9.2 (Debian 12), as `ssh -G` prints it.
    public static let openSSHDefaultCiphers = [
        "chacha20-poly1305@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com",
    ]

    /// `ssh -Q cipher`: the names a setting may use.
    public static let openSSHKnownCiphers = [
        "3des-cbc", "aes128-cbc", "aes192-cbc", "aes256-cbc", "aes128-ctr", "aes192-ctr", "aes256-ctr",
        "aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com",
    ]

    /// `KEX_CLIENT_MAC`, as `ssh -G` prints it.
    public static let openSSHDefaultMACs = [
        "umac-64-etm@openssh.com", "umac-128-etm@openssh.com", "hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com",
        "hmac-sha1-etm@openssh.com", "umac-64@openssh.com", "umac-128@openssh.com", "hmac-sha2-256", "hmac-sha2-512", "hmac-sha1",
    ]

    /// `ssh -Q mac`.
    public static let openSSHKnownMACs = [
        "hmac-sha1", "hmac-sha1-96", "hmac-sha2-256", "hmac-sha2-512", "hmac-md5", "hmac-md5-96", "umac-64@openssh.com",
        "umac-128@openssh.com", "hmac-sha1-etm@openssh.com", "hmac-sha1-96-etm@openssh.com", "hmac-sha2-256-etm@openssh.com",
        "hmac-sha2-512-etm@openssh.com", "hmac-md5-etm@openssh.com", "hmac-md5-96-etm@openssh.com", "umac-64-etm@openssh.com",
        "umac-128-etm@openssh.com",
    ]

    /// The ciphers `ssh` offers under `setting` (nil: the default), in its order.
    public static func ciphers(_ setting: SSHAlgorithmList?) -> [String] {
        setting.map { $0.assemble(defaults: openSSHDefaultCiphers, known: openSSHKnownCiphers) } ?? openSSHDefaultCiphers
    }

    /// The MACs `ssh` offers under `setting` (nil: the default), in its order.
    public static func macs(_ setting: SSHAlgorithmList?) -> [String] {
        setting.map { $0.assemble(defaults: openSSHDefaultMACs, known: openSSHKnownMACs) } ?? openSSHDefaultMACs
    }
}
