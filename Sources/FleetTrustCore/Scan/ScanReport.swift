import Foundation

/// The document `fleettrust scan --format json` prints, and `scan --replay` reads back.
///
/// It is the contract with cron jobs, CI and auditors, so its field names are stable and
/// documented in the README. Every string in it that came from a server or an input file has
/// been sanitized.
public struct ScanReport: Codable, Sendable, Equatable {
    public struct Failure: Codable, Sendable, Equatable {
        public var stage: String
        public var code: String
        public var message: String

        public init(stage: String, code: String, message: String) {
            self.stage = stage
            self.code = code
            self.message = message
        }

        public init(_ failure: ProbeFailure) {
            self.init(stage: failure.stage.rawValue, code: failure.code, message: failure.message)
        }
    }

    public struct Certificate: Codable, Sendable, Equatable {
        public var ca: String
        public var caKey: String
        public var principals: [String]
        public var serial: UInt64
        public var keyID: String
        public var validAfter: UInt64
        public var validBefore: UInt64
        public var criticalOptions: [String]

        enum CodingKeys: String, CodingKey {
            case ca = "ca_fingerprint", caKey = "ca_key", principals, serial, keyID = "key_id"
            case validAfter = "valid_after", validBefore = "valid_before", criticalOptions = "critical_options"
        }
    }

    public struct Key: Codable, Sendable, Equatable {
        public var type: String
        public var bits: Int
        public var fingerprint: String
        /// The OpenSSH public-key line (`type base64`).
        public var key: String
        /// known_hosts answer: trusted, trusted-by-ca, new, changed, revoked, ip-mismatch, or
        /// not-recorded (nothing recorded for this key type while other types are).
        public var verdict: String
        public var pin: String
        public var evidence: [String]
        public var weaknesses: [String]
        public var algorithms: NegotiatedAlgorithms?
        public var handshakeMilliseconds: Double?
        public var certificate: Certificate?

        enum CodingKeys: String, CodingKey {
            case type, bits, fingerprint, key, verdict, pin, evidence, weaknesses, algorithms, certificate
            case handshakeMilliseconds = "handshake_ms"
        }
    }

    public struct Host: Codable, Sendable, Equatable {
        /// The inventory name.
        public var name: String
        /// Where fleettrust connected (the `HostName` / `ansible_host`).
        public var host: String
        public var port: Int
        /// The numeric peer address, when the connection got that far.
        public var address: String?
        public var user: String?
        public var groups: [String]
        /// The name `ssh` looks the host up under in known_hosts.
        public var knownHostsName: String
        public var status: HostStatus
        /// How trust was established (or why not), in one phrase.
        public var method: String
        public var keys: [Key]
        public var error: Failure?
        public var serverVersion: String?
        /// Other inventory hosts presenting one of this host's keys.
        public var sharesKeysWith: [String]

        enum CodingKeys: String, CodingKey {
            case name, host, port, address, user, groups, status, method, keys, error
            case knownHostsName = "known_hosts_name", serverVersion = "server_version"
            case sharesKeysWith = "shares_keys_with"
        }

        /// Absent values are written as `null`, so every documented field is always present.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(host, forKey: .host)
            try container.encode(port, forKey: .port)
            try container.encode(address, forKey: .address)
            try container.encode(user, forKey: .user)
            try container.encode(groups, forKey: .groups)
            try container.encode(knownHostsName, forKey: .knownHostsName)
            try container.encode(status, forKey: .status)
            try container.encode(method, forKey: .method)
            try container.encode(keys, forKey: .keys)
            try container.encode(error, forKey: .error)
            try container.encode(serverVersion, forKey: .serverVersion)
            try container.encode(sharesKeysWith, forKey: .sharesKeysWith)
        }
    }

    public struct Summary: Codable, Sendable, Equatable {
        public var total: Int
        public var byStatus: [String: Int]
        public var exitStatus: Int32

        enum CodingKeys: String, CodingKey {
            case total, byStatus = "by_status", exitStatus = "exit_status"
        }
    }

    public var version: Int
    public var generatedAt: String
    public var knownHostsFiles: [String]
    public var pinFiles: [String]
    public var hosts: [Host]
    public var summary: Summary

    enum CodingKeys: String, CodingKey {
        case version, hosts, summary
        case generatedAt = "generated_at", knownHostsFiles = "known_hosts_files", pinFiles = "pin_files"
    }

    public init(generatedAt: Date = Date(), knownHostsFiles: [String], pinFiles: [String], hosts: [Host]) {
        self.version = 1
        self.generatedAt = ISO8601DateFormatter().string(from: generatedAt)
        self.knownHostsFiles = knownHostsFiles
        self.pinFiles = pinFiles
        self.hosts = hosts
        var counts: [String: Int] = [:]
        for host in hosts { counts[host.status.rawValue, default: 0] += 1 }
        self.summary = Summary(total: hosts.count, byStatus: counts, exitStatus: ScanReport.exitStatus(for: hosts.map(\.status)))
    }

    /// 0 all trusted; 1 some new or unreachable (or failed); 2 any changed, revoked or pin-mismatch.
    public static func exitStatus(for statuses: [HostStatus]) -> Int32 {
        if statuses.contains(where: { [.changed, .revoked, .pinMismatch].contains($0) }) { return 2 }
        if statuses.contains(where: { $0 != .trusted }) { return 1 }
        return 0
    }

    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    public static func decode(_ data: Data) throws -> ScanReport {
        try JSONDecoder().decode(ScanReport.self, from: data)
    }
}

extension ScanReport.Certificate {
    public init(_ certificate: HostCertificate) {
        self.init(ca: certificate.signatureKey.sha256Fingerprint, caKey: certificate.signatureKey.openSSHLine,
                  principals: certificate.principals.map { Sanitizer.clean($0, limit: 256) },
                  serial: certificate.serial, keyID: Sanitizer.clean(certificate.keyID, limit: 256),
                  validAfter: certificate.validAfter, validBefore: certificate.validBefore,
                  criticalOptions: certificate.criticalOptions.map { Sanitizer.clean($0, limit: 128) })
    }
}
