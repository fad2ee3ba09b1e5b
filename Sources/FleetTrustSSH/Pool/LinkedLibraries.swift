import CLibSSH
import COpenSSL

/// The C libraries this process runs on, as they report themselves at run time: the shared
/// objects actually loaded, which a distribution upgrade can change under an unchanged binary.
public enum LinkedLibraries {
    /// libssh's version and crypto back end, e.g. `0.10.6/openssl/zlib`.
    public static var libssh: String { String(cString: ssh_version(0)) }
    /// OpenSSL's version line, e.g. `OpenSSL 3.0.17 1 Jul 2025`.
    public static var openSSL: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
}
