import Foundation

/// Turns an earlier `scan --format json` document back into inventory hosts and probe results,
/// so they can be judged again against today's known_hosts and pins without any network.
public enum ScanReplay {
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public var source: String
        public var message: String
        public var description: String { "\(source): \(message)" }
    }

    public static func load(_ data: Data, source: String) throws -> [(host: InventoryHost, result: ProbeResult)] {
        let report: ScanReport
        do {
            report = try ScanReport.decode(data)
        } catch {
            throw Problem(source: source, message: "not a fleettrust scan JSON document (\(describe(error)))")
        }
        guard report.version == 1 else {
            throw Problem(source: source, message: "scan document version \(report.version) is not supported (expected 1)")
        }
        return try report.hosts.enumerated().map { index, entry in
            let host = InventoryHost(name: entry.name, address: entry.host, port: entry.port, user: entry.user,
                                     groups: entry.groups)
            let keys = try entry.keys.map { key -> DiscoveredKey in
                do {
                    return DiscoveredKey(key: try HostKey(openSSHLine: key.key), algorithms: key.algorithms,
                                         handshakeMilliseconds: key.handshakeMilliseconds)
                } catch {
                    throw Problem(source: source, message: "hosts[\(index)] (\(Sanitizer.clean(entry.name, limit: 80))): bad key: \(error)")
                }
            }
            let failures = entry.error.map {
                [ProbeFailure(stage: ProbeStage(rawValue: $0.stage) ?? .connect, code: $0.code, message: $0.message)]
            } ?? []
            return (host, ProbeResult(host: entry.host, port: entry.port, peerAddress: entry.address, keys: keys,
                                      failures: failures, serverVersion: entry.serverVersion))
        }
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(path(context.codingPath + [key]))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at \(path(context.codingPath))"
        case DecodingError.dataCorrupted(let context):
            return context.codingPath.isEmpty ? "invalid JSON" : "bad value at \(path(context.codingPath))"
        default:
            return "\(error)"
        }
    }

    private static func path(_ keys: [CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }
}
