import CLibSSH
import Glibc
import FleetTrustCore

/// The libssh fallback: one complete SSH key exchange with one endpoint, offering one list of
/// host-key algorithms, for a key type our own client could not negotiate.
///
/// `ssh_connect` completes the exchange and verifies the server's signature over the exchange
/// hash, so a key returned here is one the server proved it holds (unlike `ssh-keyscan`, which
/// stops before that check). Runs entirely on the calling thread, which must be a dedicated
/// thread: every libssh call blocks. The libssh session never leaves this function.
struct HostKeyProbe: Sendable {
    var endpoint: ProbeEndpoint
    var port: Int
    /// Comma-separated, as for `SSH_OPTIONS_HOSTKEYS`.
    var hostKeyAlgorithms: String
    var timeout: Duration
    /// The key exchange methods `ssh` offers the host (`KeyExchangeAlgorithms.offered`).
    var keyExchange = KeyExchangeAlgorithms.openSSHDefault

    static let serverVersionLimit = 255

    /// Every key exchange libssh 0.10 implements, its SHA-1 ones included. It offers those of
    /// them `ssh` offers the host, in `ssh`'s order: an old switch that only a user's
    /// `KexAlgorithms +diffie-hellman-group14-sha1` lets `ssh` reach is reached here too (the key
    /// it proves is judged like any other: the exchange's strength is not the host-key verdict's
    /// concern), and a server whose methods the user's setting removes fails as it fails `ssh`.
    static let implementedKeyExchanges: Set = [
        "curve25519-sha256", "curve25519-sha256@libssh.org", "ecdh-sha2-nistp256", "ecdh-sha2-nistp384", "ecdh-sha2-nistp521",
        "diffie-hellman-group18-sha512", "diffie-hellman-group16-sha512", "diffie-hellman-group-exchange-sha256",
        "diffie-hellman-group14-sha256", "diffie-hellman-group14-sha1", "diffie-hellman-group-exchange-sha1",
        "diffie-hellman-group1-sha1",
    ]

    /// What libssh offers: the methods of `ssh`'s offer it implements.
    var offeredKeyExchanges: String { keyExchange.filter(Self.implementedKeyExchanges.contains).joined(separator: ",") }

    func run(cancellation: ProbeCancellation) -> AttemptOutcome {
        guard !offeredKeyExchanges.isEmpty else {
            return AttemptOutcome(failure: ProbeFailure(stage: .keyExchange, code: .noCommonAlgorithm,
                                                        message: "no key exchange method ssh offers this host is one libssh implements"))
        }
        let start = ContinuousClock.now
        let deadline = start + timeout
        let connection: TCPConnection
        do {
            connection = try endpoint.open(deadline: deadline, cancellation: cancellation)
        } catch {
            return AttemptOutcome(failure: error)
        }
        // libssh closes the descriptor it is given (in ssh_free, or at once when ssh_connect fails),
        // so it gets a duplicate: ours stays open, and registered for cancellation, until we close it.
        // Close-on-exec, so no route child started meanwhile inherits it.
        let libsshFD = fcntl(connection.fd, F_DUPFD_CLOEXEC, 0)
        guard libsshFD >= 0 else {
            connection.close(cancellation: cancellation)
            return AttemptOutcome(failure: ProbeFailures.connect(errno: errno))
        }
        cancellation.enter(.keyExchange)
        let outcome = handshake(fd: libsshFD, firstBytes: connection.firstBytes, start: start,
                                deadline: ContinuousClock.now + timeout, cancellation: cancellation)
        connection.close(cancellation: cancellation)
        return outcome
    }

    private func handshake(fd: Int32, firstBytes: [UInt8], start: ContinuousClock.Instant,
                           deadline: ContinuousClock.Instant, cancellation: ProbeCancellation) -> AttemptOutcome {
        guard let session = ssh_new() else {
            close(fd)
            return AttemptOutcome(failure: ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "libssh could not create a session"))
        }
        var connectCalled = false
        defer {
            if !connectCalled { close(fd) }
            ssh_free(session)
        }
        let remaining = max(deadline - ContinuousClock.now, .milliseconds(1))
        guard configure(session, fd: fd, remaining: remaining) else {
            return AttemptOutcome(failure: ProbeFailure(stage: .keyExchange, code: .kexFailed,
                                                 message: "libssh rejected the options: \(lastError(session))"))
        }
        if cancellation.isCancelled { return AttemptOutcome(failure: ProbeFailures.cancelled) }
        connectCalled = true
        let status = ssh_connect(session)
        let serverVersion = ssh_get_serverbanner(session).map {
            Sanitizer.clean(String(cString: $0), limit: Self.serverVersionLimit)
        }
        guard status == SSH_OK else {
            if cancellation.isCancelled { return AttemptOutcome(failure: ProbeFailures.cancelled, serverVersion: serverVersion) }
            let text = lastError(session)
            let failure = ProbeFailures.handshake(libsshError: text, serverIdentified: serverVersion != nil,
                                                  firstBytes: firstBytes)
            return AttemptOutcome(failure: failure, serverVersion: serverVersion,
                           serverHostKeyAlgorithms: ProbeFailures.serverHostKeyAlgorithms(inLibsshError: text))
        }
        let elapsed = ContinuousClock.now - start
        // No ssh_disconnect: with SSH_OPTIONS_FD it forgets the descriptor without closing it
        // (measured, libssh 0.10.6), while ssh_free closes it.
        switch serverKey(session) {
        case .success(let key):
            let algorithms = NegotiatedAlgorithms(
                hostKey: negotiatedHostKeyAlgorithm(for: key),
                keyExchange: string(ssh_get_kex_algo(session)),
                cipher: string(ssh_get_cipher_in(session)),
                mac: string(ssh_get_hmac_in(session)))
            return AttemptOutcome(key: DiscoveredKey(key: key, algorithms: algorithms,
                                              handshakeMilliseconds: elapsed.seconds * 1000),
                           serverVersion: serverVersion)
        case .failure(let failure):
            return AttemptOutcome(failure: failure, serverVersion: serverVersion)
        }
    }

    private func configure(_ session: ssh_session, fd: Int32, remaining: Duration) -> Bool {
        var zero: Int32 = 0
        var verbosity = Int32(SSH_LOG_NOLOG)
        var socket = fd
        var port = UInt32(port)
        var seconds = Int(remaining.components.seconds)
        var microseconds = Int(remaining.components.attoseconds / 1_000_000_000_000)
        if seconds == 0 && microseconds == 0 { microseconds = 1 }
        let results = [
            ssh_options_set(session, SSH_OPTIONS_PROCESS_CONFIG, &zero),
            ssh_options_set(session, SSH_OPTIONS_LOG_VERBOSITY, &verbosity),
            ssh_options_set(session, SSH_OPTIONS_HOST, endpoint.hostName),
            ssh_options_set(session, SSH_OPTIONS_PORT, &port),
            ssh_options_set(session, SSH_OPTIONS_HOSTKEYS, hostKeyAlgorithms),
            ssh_options_set(session, SSH_OPTIONS_KEY_EXCHANGE, offeredKeyExchanges),
            ssh_options_set(session, SSH_OPTIONS_TIMEOUT, &seconds),
            ssh_options_set(session, SSH_OPTIONS_TIMEOUT_USEC, &microseconds),
            ssh_options_set(session, SSH_OPTIONS_FD, &socket),
        ]
        return results.allSatisfy { $0 == SSH_OK }
    }

    private func serverKey(_ session: ssh_session) -> Result<HostKey, ProbeFailure> {
        var key: ssh_key?
        guard ssh_get_server_publickey(session, &key) == SSH_OK, let key else {
            return .failure(ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "libssh returned no server key"))
        }
        defer { ssh_key_free(key) }
        var base64: UnsafeMutablePointer<CChar>?
        guard ssh_pki_export_pubkey_base64(key, &base64) == SSH_OK, let base64 else {
            return .failure(ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "libssh could not export the server key"))
        }
        defer { ssh_string_free_char(base64) }
        guard let blob = Base64.decode(String(cString: base64)) else {
            return .failure(ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "libssh exported a key that is not base64"))
        }
        do {
            return .success(try HostKey(blob: blob))
        } catch {
            return .failure(ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "the server's key is malformed: \(error)"))
        }
    }

    /// The algorithm libssh chose (it does not say): the plan offers at most one algorithm per
    /// key type in a list, so the key's type tells which one it was.
    private func negotiatedHostKeyAlgorithm(for key: HostKey) -> String {
        let offered = hostKeyAlgorithms.split(separator: ",").map(String.init)
        return offered.first { KeyType.canonicalName($0) == key.type } ?? key.type
    }

    private func lastError(_ session: ssh_session) -> String {
        string(ssh_get_error(UnsafeMutableRawPointer(session)))
    }

    private func string(_ pointer: UnsafePointer<CChar>?) -> String {
        pointer.map { Sanitizer.clean(String(cString: $0), limit: 1024) } ?? ""
    }
}
