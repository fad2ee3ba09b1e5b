import FleetTrustCore

/// `discover`'s probing, as `ssh-keyscan` goes about a target list: each target's addresses are
/// tried in order, the next one only when the one before could not be resolved or connected to;
/// each key is reported under the target's names (the answering address's port for names
/// without one). Kept out of the command so the command only prints.
public struct KeyscanRun {
    /// What happened to one target: its keys, or why it failed.
    public enum Event {
        case answered(host: InventoryHost, names: [String], result: ProbeResult)
        case failed(host: InventoryHost, failure: ProbeFailure)
    }

    public let targets: [KeyscanTarget]
    /// Per target, the address that answered (or was tried last).
    public private(set) var attempt: [Int]
    /// Per target, the probe that answered; nil for a target that failed.
    public private(set) var results: [ProbeResult?]

    public init(_ targets: [KeyscanTarget]) {
        self.targets = targets
        attempt = Array(repeating: 0, count: targets.count)
        results = Array(repeating: nil, count: targets.count)
    }

    /// The address of target `index` that answered, as a host.
    public func host(_ index: Int) -> InventoryHost { targets[index].addresses[attempt[index]].inventoryHost }

    /// Probes every target through `pool`, calling `each` as each one ends.
    public mutating func run(pool: ProbePool, each: (Event) -> Void) async {
        var pending = Array(targets.indices)
        while !pending.isEmpty {
            var retry: [Int] = []
            for await event in pool.probe(pending.map(host)) {
                let index = pending[event.index]
                if let failure = event.result.failure {
                    if event.result.keys.isEmpty, failure.stage == .resolve || failure.stage == .connect,
                       attempt[index] + 1 < targets[index].addresses.count {
                        attempt[index] += 1
                        retry.append(index)
                    } else {
                        each(.failed(host: host(index), failure: failure))
                    }
                    continue
                }
                results[index] = event.result
                each(.answered(host: host(index), names: targets[index].lookupNames(answeredBy: targets[index].addresses[attempt[index]]),
                               result: event.result))
            }
            pending = retry
        }
    }

    /// What one event prints: key lines for standard output (the keys `selection` includes),
    /// failures and warnings for standard error, and whether the target counts as failed.
    public static func report(_ event: Event, selection: KeyTypeSelection, knownHosts: Bool, hashed: Bool)
        -> (output: [String], errors: [String], failed: Bool) {
        switch event {
        case .failed(let host, let failure):
            return ([], ["\(host.endpointLabel): \(failure.stage.rawValue) failed: \(failure.message) (\(failure.code.rawValue))"], true)
        case .answered(let host, let names, let result):
            var report: (output: [String], errors: [String], failed: Bool) = ([], [], false)
            for discovered in result.keys where selection.includes(discovered.key) {
                do {
                    report.output += try lines(for: discovered.key, of: host, names: names, knownHosts: knownHosts, hashed: hashed)
                } catch {
                    report.failed = true
                    report.errors.append("\(host.endpointLabel): \(error)")
                }
                report.errors += WeakKeys.weaknesses(of: discovered).map {
                    "\(host.endpointLabel): warning: \(discovered.key.type): \($0.sentence)"
                }
            }
            return report
        }
    }

    /// One warning for each set of targets presenting the same host keys.
    public var sharedKeyWarnings: [String] {
        let groups = SharedKeys.groups(in: results)
        var reported: Set<[Int]> = []
        return groups.filter { reported.insert($0.hosts).inserted }.map { group in
            // With -f, each target's file:line, so the duplicate lines can be found.
            let names = group.hosts.map { index in
                host(index).endpointLabel + (targets[index].place.isEmpty ? "" : " (\(targets[index].place))")
            }.joined(separator: ", ")
            let keys = groups.filter { $0.hosts == group.hosts }.map(\.key.sha256Fingerprint).joined(separator: ", ")
            return "warning: \(names) present the same host keys (\(keys))"
        }
    }

    /// The output lines for one key: `ENDPOINT TYPE BITS FINGERPRINT KEYLINE`, or known_hosts lines
    /// under `names`. Certificates have no place in known_hosts (they are trusted through
    /// `@cert-authority` lines naming their CA), and `ssh` refuses RSA keys under 1024 bits, so
    /// known_hosts lines leave both out.
    public static func lines(for key: HostKey, of host: InventoryHost, names: [String], knownHosts: Bool, hashed: Bool) throws -> [String] {
        guard knownHosts else { return ["\(host.endpointLabel) \(key.type) \(key.bits) \(key.sha256Fingerprint) \(key.openSSHLine)"] }
        guard !key.isCertificate, !(key.kind == .rsa && key.bits < 1024) else { return [] }
        return try KnownHostsLines.render(key, names: names, hashed: hashed)
    }
}
