import FleetTrustCore
import Foundation

/// An append-only record of every trust decision made in the dashboard, one JSON object a line,
/// so that "who trusted this key, when, replacing what" has an answer.
///
/// Default path: `$XDG_STATE_HOME/fleettrust/audit.jsonl`, else `~/.local/state/fleettrust/audit.jsonl`.
public struct AuditLog: Sendable {
    public var path: String

    public init(path: String) {
        self.path = path
    }

    public static func defaultPath(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/fleettrust/audit.jsonl" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/state/fleettrust/audit.jsonl"
    }

    /// One decision about one host.
    public struct Record: Codable, Equatable, Sendable {
        public var time: String
        public var user: String
        public var action: String
        public var host: String
        public var endpoint: String
        public var names: [String]
        public var oldFingerprints: [String]
        public var newFingerprints: [String]
        /// `dashboard` plus the file written, or the command run for `connect`.
        public var method: String
        public var outcome: String
        /// The superseded or removed known_hosts lines, kept so a replace can be undone.
        public var oldEntries: [String]
    }

    public static func records(for decision: Decision, user: String, time: Date, outcome: String) -> [Record] {
        decision.items.map { item in
            Record(time: timestamp(time), user: user, action: decision.kind.rawValue, host: item.host.name,
                   endpoint: item.host.endpointLabel, names: item.names,
                   oldFingerprints: item.previous.map(\.fingerprint), newFingerprints: decision.kind == .forget ? [] : item.keys.map(\.sha256Fingerprint) + item.spkiPins.map { "pin-sha256:" + $0 },
                   method: "dashboard \(decision.kind.rawValue) -> \(item.file)", outcome: outcome,
                   oldEntries: item.previous.map { "\($0.location): \($0.text)" })
        }
    }

    public static func connectRecord(host: InventoryHost, fingerprints: [String], command: [String], user: String,
                                     time: Date, outcome: String) -> Record {
        Record(time: timestamp(time), user: user, action: "connect", host: host.name, endpoint: host.endpointLabel,
               names: [], oldFingerprints: [], newFingerprints: fingerprints, method: command.joined(separator: " "),
               outcome: outcome, oldEntries: [])
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    public static func currentUser(environment: [String: String]) -> String {
        if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return environment["USER"] ?? String(getuid())
    }

    /// Appends the records; creates the directory (mode 0700) and file (0600) when missing.
    public func append(_ records: [Record]) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for record in records {
            data.append(try encoder.encode(record))
            data.append(0x0a)
        }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw AuditLogError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count else { throw AuditLogError(path: path, reason: String(cString: strerror(errno))) }
    }
}

public struct AuditLogError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot append to the audit log \(path): \(reason)" }
}

extension AuditLog {
    /// A known_hosts line removed by `fleettrust tidy --fix`, kept so it can be put back.
    public static func tidyRecord(names: [String], kind: String, path: String, line: Int, text: String, user: String,
                                  time: Date, outcome: String) -> Record {
        Record(time: timestamp(time), user: user, action: "tidy", host: "", endpoint: "", names: names, oldFingerprints: [],
               newFingerprints: [], method: "tidy --fix \(kind) -> \(path)", outcome: outcome, oldEntries: ["\(path):\(line): \(text)"])
    }
}
