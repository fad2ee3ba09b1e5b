/// What the host's `KnownHostsCommand` printed for this probe, gathered right after the probe (the
/// command's answer depends on the keys presented: `%K`, `%f`, `%t`) so that the judge, which
/// never runs anything, can read the lines as `ssh` reads them: a known_hosts source merged with
/// the files, for one lookup string only.
public struct KnownHostsCommandOutput: Hashable, Sendable {
    /// `%I=ORDER`, no key: lines for the bare host name, which order `ssh`'s host-key algorithms;
    /// nil where `ssh` does not reorder them (`HostKeyAlgorithms` set as a list or with `^`).
    public var order: KnownHostsCommandRun?
    /// `%I=HOSTNAME`, one per probed key (same order as `ProbeResult.keys`).
    public var hostName: [KnownHostsCommandRun]
    /// `%I=ADDRESS`, one per probed key; nil where `ssh` would not call it (no `CheckHostIP`, a
    /// certificate, a loopback peer, a name that is the address).
    public var address: [KnownHostsCommandRun?]

    public init(order: KnownHostsCommandRun?, hostName: [KnownHostsCommandRun], address: [KnownHostsCommandRun?]) {
        self.order = order
        self.hostName = hostName
        self.address = address
    }

    /// Every run, for the first failure.
    public var runs: [KnownHostsCommandRun] { [order].compactMap { $0 } + hostName + address.compactMap { $0 } }

    /// The first run that failed: `ssh` would fail the connection (or, for a command it cannot
    /// start, report it and go on without it; fleettrust reports it as the host's error).
    public var failure: KnownHostsCommandRun? { runs.first { $0.failure != nil } }
}

/// One run of the command: the argument vector it was given and what it printed, or why it failed.
public struct KnownHostsCommandRun: Hashable, Sendable {
    public var invocation: KnownHostsCommand.Invocation
    /// The argument vector (cleaned for messages).
    public var arguments: [String]
    /// Standard output, at most `KnownHostsCommandRunner.outputLimit` bytes; empty on failure.
    public var output: [UInt8]
    /// Why it gave no usable lines, and what `ssh` does then, as one clause.
    public var failure: String?

    public init(invocation: KnownHostsCommand.Invocation, arguments: [String], output: [UInt8] = [], failure: String? = nil) {
        self.invocation = invocation
        self.arguments = arguments.map { CleanText($0, limit: 200).value }
        self.output = output
        self.failure = failure.map { CleanText($0, limit: 300).value }
    }

    /// `ssh`'s name for the source of these lines, as in its debug messages.
    public var tag: String { "KnownHostsCommand-\(invocation.rawValue)" }

    /// The lines as a known_hosts source (parsed like a file, as `load_hostkeys_file` reads them).
    public var lines: KnownHostsFile { KnownHostsFile(path: tag, bytes: output) }

    /// One sentence for the host's error.
    public var failureSentence: String {
        let command = arguments.first ?? ""
        return "KnownHostsCommand \(command) (%I=\(invocation.rawValue)) \(failure ?? "failed")"
    }
}
