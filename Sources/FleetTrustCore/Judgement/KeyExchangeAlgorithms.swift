/// Which key exchange methods `ssh` offers a host: OpenSSH 9.2's default `KexAlgorithms`, as a
/// per-host setting shapes it (`kex.c:kex_assemble_names`).
///
/// It decides two things. Whether `ssh` can agree a method with a server at all: only when its own
/// offer has nothing in common with the server's list is a probe's "no common key exchange" a
/// failure `ssh` shares. And what our key-exchange client and its libssh fallback offer: what
/// `ssh` offers and nothing else, so a server reachable only through a method the user enabled is
/// reached, one the user's setting removes is not, and a server that tells clients apart by
/// their offer shows us what it shows `ssh`.
public enum KeyExchangeAlgorithms {
    /// `KEX_CLIENT_KEX` of the installed OpenSSH 9.2 (Debian 12), as `ssh -G` prints it.
    public static let openSSHDefault = [
        "sntrup761x25519-sha512", "sntrup761x25519-sha512@openssh.com", "curve25519-sha256", "curve25519-sha256@libssh.org",
        "ecdh-sha2-nistp256", "ecdh-sha2-nistp384", "ecdh-sha2-nistp521", "diffie-hellman-group-exchange-sha256",
        "diffie-hellman-group16-sha512", "diffie-hellman-group18-sha512", "diffie-hellman-group14-sha256",
    ]

    /// Every method OpenSSH 9.2 knows (`ssh -Q kex`), in its order: the names a setting may use.
    public static let openSSHKnown = [
        "diffie-hellman-group1-sha1", "diffie-hellman-group14-sha1", "diffie-hellman-group14-sha256",
        "diffie-hellman-group16-sha512", "diffie-hellman-group18-sha512", "diffie-hellman-group-exchange-sha1",
        "diffie-hellman-group-exchange-sha256", "ecdh-sha2-nistp256", "ecdh-sha2-nistp384", "ecdh-sha2-nistp521",
        "curve25519-sha256", "curve25519-sha256@libssh.org", "sntrup761x25519-sha512", "sntrup761x25519-sha512@openssh.com",
    ]

    /// The methods `ssh` offers under `setting` (nil: the default), in its order. Empty when the
    /// setting removes every method: `ssh` then starts, and fails every key exchange.
    public static func offered(_ setting: SSHAlgorithmList?) -> [String] {
        guard let setting else { return openSSHDefault }
        return setting.assemble(defaults: openSSHDefault, known: openSSHKnown)
    }
}
