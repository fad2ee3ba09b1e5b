import Foundation
import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Runs a probed host's `KnownHostsCommand` the way OpenSSH 9.2 runs it for a connection
/// (`sshconnect.c:load_hostkeys_command`, `sshconnect2.c:order_hostkeyalgs`): once with
/// `%I=ORDER` and no key where `ssh` reorders its host-key algorithms, once per presented key with `%I=HOSTNAME`, and once more per plain key
/// with `%I=ADDRESS` where `CheckHostIP` applies. `ssh` asks only about the key it meets; the
/// probe proved several, and each is judged, so each is asked about.
///
/// As `ssh` runs it: an argument vector (never a shell), stdin `/dev/null`, this process's
/// environment, stderr discarded (it must not reach a dashboard's screen). Bounded as `ssh` is
/// not: `timeout` per run and `outputLimit` bytes of output, the child's whole process group
/// killed at the deadline. Every `%` value that comes from the inventory is one checked as `ssh`
/// checks a command-line value (`SSHDestination`).
///
/// Blocks the calling thread until the runs are over: call it from a dedicated thread (the probe
/// workers), never from Swift's cooperative pool. The child runs under swift-subprocess on the
/// child-process executor's own threads.
public struct KnownHostsCommandRunner: Sendable {
    public static let outputLimit = 1 << 20
    public var timeout: Duration

    public init(timeout: Duration = .seconds(10)) {
        self.timeout = timeout
    }

    /// The command's lines for this probe; nil when the host has no runnable command, the probe
    /// proved no key (nothing to judge), or `stopped` turned true between runs (a stopped scan).
    public func run(for host: InventoryHost, result: ProbeResult, stopped: () -> Bool = { false }) -> KnownHostsCommandOutput? {
        guard let command = host.sshOptions.knownHostsCommand, command.isRunnable, !result.keys.isEmpty else { return nil }
        let lookup = LookupName(host: host.address, port: host.port, hostKeyAlias: host.hostKeyAlias)
        let values: [Character: String]
        do {
            values = try Self.clientValues(host, command: command, remoteHost: lookup.host)
        } catch {
            let refused = KnownHostsCommandRun(invocation: .order, arguments: [command.template],
                                               failure: "was not run: its \(error.description)")
            return KnownHostsCommandOutput(order: refused, hostName: [], address: [])
        }
        func run(_ invocation: KnownHostsCommand.Invocation, _ key: HostKey?, _ name: String) -> KnownHostsCommandRun {
            if stopped() { return KnownHostsCommandRun(invocation: invocation, arguments: [command.template], failure: "was not run: the scan stopped") }
            return once(command, invocation, key: key, hostString: name, values: values, fingerprintHash: host.sshOptions.fingerprintHash)
        }
        // `ssh_kex2` calls `order_hostkeyalgs` only when HostKeyAlgorithms is unset, `+` or `-`.
        let reorders = [nil, .append, .remove].contains(host.sshOptions.hostKeyAlgorithms?.form)
        let order = reorders ? run(.order, nil, lookup.host) : nil
        let addressString = Self.checkHostIPString(host, peer: result.peerAddress, lookup: lookup)
        let keys = result.keys.map(\.key)
        let output = KnownHostsCommandOutput(order: order, hostName: keys.map { run(.hostName, $0, lookup.hostString) },
                                             address: keys.map { key in
                                                 addressString.flatMap { key.isCertificate ? nil : run(.address, key, $0) }
                                             })
        return stopped() ? nil : output
    }

    /// The address string `ssh` looks up with `CheckHostIP`, or nil where it does not (off, a
    /// proxy, a loopback peer, or the name is that string), as `check_host_key` decides.
    static func checkHostIPString(_ host: InventoryHost, peer: String?, lookup: LookupName) -> String? {
        guard host.sshOptions.checkHostIP == true, host.routing == .success(.direct), let peer, !LookupName.isLoopback(peer) else { return nil }
        let ipString = LookupName.hostPort(LookupName.canonicalHost(peer), port: host.port)
        return ipString == lookup.host ? nil : ipString
    }

    /// `DEFAULT_CLIENT_PERCENT_EXPAND_ARGS` for this host, from checked names and this account.
    static func clientValues(_ host: InventoryHost, command: KnownHostsCommand, remoteHost: String) throws(SSHNameError) -> [Character: String] {
        let destination = try SSHDestination(host)
        let argument = try SSHHostName(command.hostArgument)
        let alias = try host.hostKeyAlias.map { text throws(SSHNameError) in try SSHHostName(text) }
        let account = getpwuid(getuid())
        let localUser = account.map { String(cString: $0.pointee.pw_name) } ?? NSUserName()
        return SSHConfigTokens.clientValues(
            remoteHost: remoteHost, port: host.port, remoteUser: destination.user?.value ?? localUser, originalHost: argument.value,
            keyAlias: alias.map { String(decoding: KnownHostsPattern.lowercased(Array($0.value.utf8)), as: UTF8.self) } ?? argument.value,
            home: account.map { String(cString: $0.pointee.pw_dir) } ?? NSHomeDirectory(), localUser: localUser)
    }

    /// One run, with what `ssh` does when it cannot be made.
    private func once(_ command: KnownHostsCommand, _ invocation: KnownHostsCommand.Invocation, key: HostKey?,
                      hostString: String, values client: [Character: String], fingerprintHash: String?) -> KnownHostsCommandRun {
        func failed(_ arguments: [String], _ why: String) -> KnownHostsCommandRun {
            KnownHostsCommandRun(invocation: invocation, arguments: arguments, failure: why)
        }
        let goesOn = "; ssh reports it and judges without the command"
        guard let words = KnownHostsCommand.split(command.template) else { return failed([command.template], "has unbalanced quotes" + goesOn) }
        guard !words.isEmpty else { return failed([command.template], "has no words" + goesOn) }
        var values = client
        values["H"] = hostString
        values["I"] = invocation.rawValue
        values["t"] = key?.type ?? "NONE"
        values["f"] = key.map { Self.fingerprint($0, digest: fingerprintHash) } ?? "NONE"
        values["K"] = key?.base64 ?? "NONE"
        let arguments: [String]
        do {
            arguments = try KnownHostsCommand.arguments(words, values: values, environment: ProcessInfo.processInfo.environment)
        } catch {
            return failed(words, "cannot be expanded (\(error.text)), and ssh stops there")
        }
        guard arguments[0].hasPrefix("/") else { return failed(arguments, "is not an absolute path" + goesOn) }
        var status = stat()
        guard stat(arguments[0], &status) == 0 else { return failed(arguments, "cannot be found (\(String(cString: strerror(errno))))" + goesOn) }
        switch Self.blocking(arguments, timeout: timeout, limit: Self.outputLimit) {
        case .output(let bytes): return KnownHostsCommandRun(invocation: invocation, arguments: arguments, output: bytes)
        case .failed(let why): return failed(arguments, why)
        }
    }

    /// `sshkey_fingerprint` with `FingerprintHash` (SHA256 by default): `MD5:` and colon-separated
    /// hex, else the digest's name and unpadded base64; a certificate is fingerprinted by its key.
    static func fingerprint(_ key: HostKey, digest: String?) -> String {
        let blob = key.fingerprintedBlob
        switch digest ?? "SHA256" {
        case "MD5": return key.md5Fingerprint
        case "SHA1": return "SHA1:" + Base64.encode(Digest.sha1(blob), padded: false)
        case "SHA384": return "SHA384:" + Base64.encode(Digest.sha384(blob), padded: false)
        case "SHA512": return "SHA512:" + Base64.encode(Digest.sha512(blob), padded: false)
        default: return key.sha256Fingerprint
        }
    }

    enum Collected: Sendable {
        case output([UInt8])
        case failed(String)
    }

    /// Waits on this (dedicated) thread for `collect`, which runs on the child-process executor.
    private static func blocking(_ arguments: [String], timeout: Duration, limit: Int) -> Collected {
        let box = CollectedBox()
        Task.detached(executorPreference: ChildTaskExecutor.shared) {
            box.set(await collect(arguments, timeout: timeout, limit: limit))
        }
        return box.wait()
    }

    private static func collect(_ arguments: [String], timeout: Duration, limit: Int) async -> Collected {
        let fails = ", and ssh fails the connection for it"
        return await withTaskGroup(of: Collected?.self) { group in
            group.addTask {
                var options = PlatformOptions()
                options.processGroupID = 0
                options.teardownSequence = [.send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .milliseconds(200))]
                do {
                    let run = try await Subprocess.run(.path(FilePath(arguments[0])), arguments: Arguments(Array(arguments.dropFirst())),
                                                       environment: .inherit, platformOptions: options, input: .none,
                                                       output: .bytes(limit: limit), error: .discarded)
                    switch run.terminationStatus {
                    case .exited(0): return .output(run.standardOutput)
                    case .exited(let code): return .failed("exited with status \(code)" + fails)
                    case .signaled(let signal): return .failed("was ended by signal \(signal)" + fails)
                    }
                } catch let error as SubprocessError where error.code == .outputLimitExceeded {
                    return .failed("printed more than \(limit) bytes (fleettrust reads at most that)")
                } catch {
                    return Task.isCancelled ? nil : .failed("could not be run (\(error))" + fails)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .failed("did not finish within \(timeout.components.seconds) s (fleettrust waits no longer)")
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failed("was stopped")
        }
    }
}

/// The one result a detached run hands to the thread waiting for it.
private final class CollectedBox: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: KnownHostsCommandRunner.Collected?

    func set(_ collected: KnownHostsCommandRunner.Collected) {
        condition.lock()
        value = collected
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> KnownHostsCommandRunner.Collected {
        condition.lock()
        defer { condition.unlock() }
        while value == nil { condition.wait() }
        return value!
    }
}
