import Foundation

/// Turns an earlier `scan --format json` document back into inventory hosts and probe results,
/// so they can be judged again (by the same `FleetJudge`) against today's known_hosts and pins
/// without any network. The host's recorded client settings (`HostKeyAlias`, `HostKeyAlgorithms`)
/// come back with it, so it is judged under the same names; which known_hosts files judge it is
/// this machine's choice (`--known-hosts` or OpenSSH's defaults), never the document's.
public enum ScanReplay {
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public var source: String
        public var message: String
        /// `source: message`; the message alone when it names the file already (an unreadable file).
        public var description: String { source.isEmpty ? message : "\(source): \(message)" }
    }

    /// The largest recorded scan read whole: 1 GiB, a merged estate of several 100,000 hosts.
    public static let maximumDocument = 1 << 30

    /// The recorded scan at `path` (`~` already expanded), its problems named by `source`.
    public static func load(path: String, source: String, under configuration: InventoryReadOptions? = nil) throws -> [(host: InventoryHost, result: ProbeResult)] {
        let bytes: [UInt8]
        do {
            bytes = try InputFile.read(path, role: "recorded scan", limit: ScanReplay.maximumDocument)
        } catch {
            throw Problem(source: "", message: error.description)
        }
        return try load(Data(bytes), source: source, under: configuration)
    }

    /// Each host entry is decoded on its own, in turn (`ReplayDocument` finds where each one is),
    /// so a recorded scan of 10,000 hosts is never held decoded all at once beside the hosts made
    /// from it: only the hosts and probes to judge stay.
    /// `configuration` is this machine's ssh configuration (`InventoryReadOptions.sshConfiguration`):
    /// its host-key settings apply to every recorded host, as the `ssh` run here applies them.
    public static func load(_ data: Data, source: String, under configuration: InventoryReadOptions? = nil) throws -> [(host: InventoryHost, result: ProbeResult)] {
        let document: ReplayDocument
        do {
            document = try ReplayDocument(data)
        } catch {
            throw Problem(source: source, message: "not a fleettrust scan JSON document (\(error))")
        }
        guard RecordedScan.readableVersions.contains(document.version) else {
            throw Problem(source: source, message: "scan document version \(document.version) is not supported (expected 1 to \(ScanReport.currentVersion))")
        }
        let generatedAt = document.generatedAt.flatMap(HistoryTime.date(rfc3339:))
        let decoder = JSONDecoder()
        var pairs: [(host: InventoryHost, result: ProbeResult)] = []
        pairs.reserveCapacity(document.hosts.count)
        for (index, range) in document.hosts.enumerated() {
            let entry: RecordedScan.Host
            do {
                entry = try decoder.decode(RecordedScan.Host.self, from: data[range])
            } catch {
                throw Problem(source: source, message: "not a fleettrust scan JSON document (\(describe(error, at: ".hosts[\(index)]")))")
            }
            var (host, result) = try pair(entry, index: index, source: source)
            if let configuration, let here = configuration.sshConfiguration {
                host = here.recorded(host, options: configuration)
            }
            result.scanner = entry.scannedFrom.map { CleanText($0) }
            result.finishedAt = generatedAt
            if let scannedAt = entry.scannedAt {
                guard let date = HistoryTime.date(rfc3339: scannedAt) else {
                    throw Problem(source: source, message: "hosts[\(index)] (\(Sanitizer.clean(entry.name, limit: 80))): scanned_at is not an RFC 3339 UTC time")
                }
                result.finishedAt = date
            }
            pairs.append((host, result))
        }
        return pairs
    }

    /// The host and probe a recorded host entry stands for.
    private static func pair(_ entry: RecordedScan.Host, index: Int, source: String) throws -> (host: InventoryHost, result: ProbeResult) {
        let settings = entry.ssh
        // Which known_hosts files judge the host is this machine's choice, never the document's:
        // a recording naming its own files (or none) would hide the lines that make it `changed`.
        var options = settings?.options ?? SSHHostOptions()
        options.noUserKnownHostsFile = nil
        options.globalKnownHostsFiles = nil
        var host = InventoryHost(name: entry.name, address: entry.host, port: entry.port, user: entry.user,
                                 groups: entry.groups, hostKeyAlias: settings?.hostKeyAlias, sshOptions: options)
        if entry.policySource == "inventory" {
            host.policy = entry.policy
            host.policyIsRecorded = true
        }
        host.routing = ScanReport.Hop.routing(entry.route)
        if entry.endpointProtocol == .tls {
            // The name comes from the row, as the live scan made it: the recorded SNI is shown, never
            // what the certificate is checked against nor which pins apply.
            host.endpoint = .tls(TLSEndpoint(serverName: TLSEndpoint.serverName(for: TLSEndpoint.hostName(ofRow: entry.name)),
                                             startTLS: entry.startTLS))
            if let refusal = host.refusal {
                return (host, ProbeResult(host: entry.host, port: entry.port, failures: [refusal.failure]))
            }
            let handshake = try entry.recordedHandshake()
            let proof: ProbeProof = handshake.map { .tls($0) } ?? .none
            let failures = handshake == nil ? entry.failure.map { [$0] } ?? [] : []
            return (host, ProbeResult(host: entry.host, port: entry.port, peerAddress: entry.address, proof: proof, failures: failures))
        }
        // A recorded host ssh would refuse (its name or user, its route) is refused again, as a
        // live scan refuses it: a document cannot make it trusted.
        if let refusal = host.refusal {
            return (host, ProbeResult(host: entry.host, port: entry.port, failures: [refusal.failure]))
        }
        // A recorded ProxyCommand is the document's text: shown, never run (connect refuses the host).
        host.proxyCommandNotAllowed = true
        var keys: [DiscoveredKey] = []
        var malformed: [MalformedHostKey] = []
        var sshConnection: SSHConnectionOutcome?
        if let recorded = entry.sshConnection {
            if let failure = recorded.error?.probeFailure {
                sshConnection = .failed(failure)
            } else if let position = recorded.key, !entry.keys.indices.contains(position) {
                throw Problem(source: source, message: "hosts[\(index)] (\(Sanitizer.clean(entry.name, limit: 80))): ssh_connection.key is not the index of one of its keys")
            }
        }
        for (position, key) in entry.keys.enumerated() {
            do {
                keys.append(DiscoveredKey(key: try HostKey(openSSHLine: key.key), algorithms: key.algorithms,
                                          handshakeMilliseconds: key.handshakeMilliseconds))
                if let recorded = entry.sshConnection, recorded.key == position, sshConnection == nil {
                    sshConnection = .proved(DiscoveredKey(key: keys[keys.count - 1].key, algorithms: recorded.algorithms,
                                                          handshakeMilliseconds: key.handshakeMilliseconds))
                }
            } catch {
                let fields = key.key.split(separator: " ")
                guard key.type.hasSuffix("-cert-v01@openssh.com"), fields.count == 2, let blob = Base64.decode(fields[1]) else {
                    throw Problem(source: source, message: "hosts[\(index)] (\(Sanitizer.clean(entry.name, limit: 80))): bad key: \(error)")
                }
                malformed.append(MalformedHostKey(algorithm: key.algorithms?.hostKey ?? key.type, blob: blob, reason: "\(error)"))
            }
        }
        let failures = entry.failure.map { [$0] } ?? []
        // A host-key refusal is the judge's own conclusion, not a probe failure: judge it again.
        let probeFailures = failures.filter { $0.stage != .hostKey }
        var result = ProbeResult(host: entry.host, port: entry.port, peerAddress: entry.address, keys: keys,
                                 failures: probeFailures, serverVersion: entry.serverVersion,
                                 serverHostKeyAlgorithms: entry.serverHostKeyAlgorithms, malformedKeys: malformed)
        result.sshConnection = sshConnection
        let unfetched = entry.unfetchedKeys.prefix(UnfetchedKeyType.limit).compactMap { recorded in
            recorded.error.probeFailure.map { UnfetchedKeyType(algorithm: recorded.algorithm, failure: $0) }
        }
        if !unfetched.isEmpty { result.gatherSSH { $0.unfetched = Array(unfetched) } }
        return (host, result)
    }

    static func describe(_ error: Error, at prefix: String) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(prefix)\(path(context.codingPath + [key]))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at \(prefix)\(path(context.codingPath))"
        case DecodingError.dataCorrupted(let context):
            return context.codingPath.isEmpty ? "invalid JSON at \(prefix)" : "bad value at \(prefix)\(path(context.codingPath))"
        default:
            return "\(error)"
        }
    }

    private static func path(_ keys: [CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }
}
