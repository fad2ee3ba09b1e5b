import FleetTrustCore

/// What one key-exchange attempt with one endpoint established, through libssh or our own
/// key-exchange client: a key the server proved it holds, or why not.
struct AttemptOutcome: Sendable {
    var key: DiscoveredKey?
    var failure: ProbeFailure?
    /// The server's identification string, sanitized and bounded.
    var serverVersion: String?
    /// The server's host-key algorithms, when the attempt learned them (our client reads them
    /// from the server's KEXINIT; libssh lists them in its "no match" error).
    var serverHostKeyAlgorithms: [String]?
    /// The server's key exchange methods, when our client read its KEXINIT.
    var serverKeyExchangeAlgorithms: [String]?
    /// A certificate that does not decode, whose key the server proved it holds.
    var malformedKey: MalformedHostKey?
}

extension AttemptOutcome {
    /// What our client's exchange came to, from either driver: what `report` learned, and
    /// `result`; a failure after the probe was cancelled is the cancel's.
    init(_ report: KeyExchangeReport, _ result: Result<DiscoveredKey, ProbeFailure>, cancellation: ProbeCancellation) {
        self.init(serverVersion: report.serverVersion, serverHostKeyAlgorithms: report.serverHostKeyAlgorithms,
                  serverKeyExchangeAlgorithms: report.serverKeyExchangeAlgorithms, malformedKey: report.malformedKey)
        switch result {
        case .success(let key): self.key = key
        case .failure(let failure): self.failure = cancellation.isCancelled ? ProbeFailures.cancelled : failure
        }
    }
}

extension AttemptOutcome {
    /// libssh's outcome for a key type our client failed first (`ours`): its key when it proved
    /// one, otherwise the failure that got further (`ProbeFailures.furthest`), and the server's
    /// identification when only ours read it.
    func afterFallback(from ours: AttemptOutcome) -> AttemptOutcome {
        guard key == nil, let mine = failure, let theirs = ours.failure else { return self }
        var merged = self
        merged.failure = ProbeFailures.furthest(ours: theirs, libssh: mine)
        if merged.serverVersion == nil { merged.serverVersion = ours.serverVersion }
        return merged
    }
}
