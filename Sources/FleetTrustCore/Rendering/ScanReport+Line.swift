import Foundation

/// A host entry written as its compact, key-sorted line by `CompactJSON`, byte for byte what
/// `ScanDocumentLayout.encoder()` makes of the same value (`ScanReportLineTests`), without the
/// encoder's per-value tree. Field names come from the types' `CodingKeys` (the one list, shared
/// with `RecordedScan`); each writer switches over every key, so a new field does not compile
/// until it is written here too. Rare shapes (TLS sessions and chains, algorithm lists, a
/// `KnownHostsCommand`) are spliced in from the encoder; the deciding connection, which every
/// live SSH host has, is written here (through the encoder it cost a boxed tree and a type
/// lookup per host).
extension ScanReport.Host {
    private static let sshKeys = CompactJSON.sortedKeys(CodingKeys.allCases.filter { key in
        key != .sharesKeysWith && !tlsKeys.contains(key)
    })
    private static let tlsEntryKeys = CompactJSON.sortedKeys(CodingKeys.allCases.filter {
        $0 != .sharesKeysWith && $0 != .sshfp && $0 != .sshConnection && $0 != .unfetchedKeys
    })
    private static let tlsKeys: [CodingKeys] = [.tlsSession, .startTLS, .certificates, .expiresInDays, .warnings, .evidence]

    /// Appends the host's line (no line break) to `json`. Throws `CompactJSON.NonFiniteNumber` for a
    /// value the encoder refuses.
    func write(to json: inout CompactJSON) throws {
        json.beginObject()
        for (key, written) in endpointProtocol == .tls ? Self.tlsEntryKeys : Self.sshKeys {
            json.field(written)
            switch key {
            case .name: json.string(name)
            case .host: json.string(host)
            case .port: json.integer(port)
            case .address: json.optional(address) { $0.string($1) }
            case .user: json.optional(user) { $0.string($1) }
            case .groups: json.strings(groups)
            case .knownHostsName: json.string(knownHostsName)
            case .ssh: try json.optional(ssh) { try $1.write(to: &$0) }
            case .status: json.string(status.rawValue)
            case .reason: json.string(reason)
            case .method: json.optional(method) { $0.string($1) }
            case .keys:
                json.beginArray()
                for entry in keys { try entry.write(to: &json) }
                json.endArray()
            case .pin: json.optional(pin) { $1.write(to: &$0) }
            case .error: json.optional(error) { $1.write(to: &$0) }
            case .serverVersion: json.optional(serverVersion) { $0.string($1) }
            case .serverHostKeyAlgorithms: json.optional(serverHostKeyAlgorithms) { $0.strings($1) }
            case .negotiatedAlgorithm: json.optional(negotiatedAlgorithm) { $0.string($1) }
            case .scannedFrom: json.string(scannedFrom)
            case .scannedAt: json.string(scannedAt)
            case .stricterThanSSH: json.rawValues(stricterThanSSH)
            case .policy: json.string(policy)
            case .policySource: json.string(policySource)
            case .standardStatus: json.optional(standardStatus) { $0.string($1.rawValue) }
            case .drift: json.optional(drift) { $0.string($1.rawValue) }
            case .driftMoves:
                json.beginArray()
                for move in driftMoves { move.write(to: &json) }
                json.endArray()
            case .route:
                json.beginArray()
                for hop in route { hop.write(to: &json) }
                json.endArray()
            case .endpointProtocol: json.string(endpointProtocol.rawValue)
            case .sshfp: try json.optional(sshfp) { try $0.encoded($1) }
            case .sshConnection: json.optional(sshConnection) { $1.write(to: &$0) }
            case .unfetchedKeys:
                json.beginArray()
                for unfetched in unfetchedKeys ?? [] { unfetched.write(to: &json) }
                json.endArray()
            case .tlsSession: try json.optional(tlsSession) { try $0.encoded($1) }
            case .startTLS: json.optional(startTLS) { $0.string($1.rawValue) }
            case .certificates: try json.optional(certificates) { try $0.encoded($1) }
            case .expiresInDays: try json.optional(expiresInDays) { try $0.encoded($1) }
            case .warnings: json.optional(warnings) { $0.rawValues($1) }
            case .evidence: json.optional(evidence) { $0.strings($1) }
            case .sharesKeysWith: json.null()
            }
        }
        json.endObject()
    }
}

extension ScanReport.Key {
    private static let sortedKeys = CompactJSON.sortedKeys(CodingKeys.allCases)

    func write(to json: inout CompactJSON) throws {
        try json.object(Self.sortedKeys) { json, key in
            switch key {
            case .type: json.string(type)
            case .bits: json.integer(bits)
            case .fingerprint: json.optional(fingerprint) { $0.string($1) }
            case .key: json.string(self.key)
            case .verdict: json.string(verdict.rawValue)
            case .pin: json.string(pin.rawValue)
            case .plainKeyVerdict: json.optional(plainKeyVerdict) { $0.string($1.rawValue) }
            case .negotiated: json.bool(negotiated)
            case .unusable: json.optional(unusable) { $0.string($1.rawValue) }
            case .evidence: json.strings(evidence)
            case .weaknesses: json.strings(weaknesses)
            case .algorithms: json.optional(algorithms) { $1.write(to: &$0) }
            case .handshakeMilliseconds: try json.optional(handshakeMilliseconds) { try $0.double($1) }
            case .certificate: json.optional(certificate) { $1.write(to: &$0) }
            case .firstSeen: json.optional(firstSeen) { $0.string($1) }
            case .lastSeen: json.optional(lastSeen) { $0.string($1) }
            case .sharedBy: json.optional(sharedBy) { $0.integer($1) }
            }
        }
    }
}

extension ScanReport.Certificate {
    private static let sortedKeys = CompactJSON.sortedKeys(CodingKeys.allCases)

    func write(to json: inout CompactJSON) {
        json.object(Self.sortedKeys) { json, key in
            switch key {
            case .ca: json.string(ca)
            case .caKey: json.string(caKey)
            case .principals: json.strings(principals)
            case .serial: json.integer(serial)
            case .keyID: json.string(keyID)
            case .validAfter: json.integer(validAfter)
            case .validBefore: json.integer(validBefore)
            case .criticalOptions: json.strings(criticalOptions)
            case .problem: json.optional(problem) { $0.string($1.rawValue) }
            case .expiresInDays: json.optional(expiresInDays) { $0.integer($1) }
            case .warnings: json.rawValues(warnings)
            }
        }
    }
}

extension ScanReport.Failure {
    private static let sortedKeys = CompactJSON.sortedKeys(CodingKeys.allCases)

    func write(to json: inout CompactJSON) {
        json.object(Self.sortedKeys) { json, key in
            switch key {
            case .stage: json.string(stage)
            case .code: json.string(code.rawValue)
            case .message: json.string(message)
            }
        }
    }
}

extension ScanReport.UnfetchedKey {
    private static let sortedKeys = CompactJSON.sortedKeys(CodingKeys.allCases)

    func write(to json: inout CompactJSON) {
        json.object(Self.sortedKeys) { json, field in
            switch field {
            case .algorithm: json.string(algorithm)
            case .error: error.write(to: &json)
            }
        }
    }
}

extension ScanReport.SSHConnection {
    private static let sortedKeys = CompactJSON.sortedKeys(CodingKeys.allCases)

    func write(to json: inout CompactJSON) {
        json.object(Self.sortedKeys) { json, field in
            switch field {
            case .key: json.optional(key) { $0.integer($1) }
            case .algorithms: json.optional(algorithms) { $1.write(to: &$0) }
            case .error: json.optional(error) { $1.write(to: &$0) }
            }
        }
    }
}

extension ScanReport.Pin {
    private static let sortedKeys = CompactJSON.sortedKeys(CodingKeys.allCases)

    func write(to json: inout CompactJSON) {
        json.object(Self.sortedKeys) { json, key in
            switch key {
            case .verdict: json.string(verdict.rawValue)
            case .evidence: json.strings(evidence)
            }
        }
    }
}

extension ScanReport.DriftMove {
    private static let sortedKeys = CompactJSON.sortedKeys(CodingKeys.allCases)

    func write(to json: inout CompactJSON) {
        json.object(Self.sortedKeys) { json, key in
            switch key {
            case .kind: json.string(kind.rawValue)
            case .type: json.string(type)
            case .before: json.optional(before) { $0.string($1) }
            case .now: json.optional(now) { $0.string($1) }
            }
        }
    }
}

extension ScanReport.Hop {
    private static let sortedKeys = CompactJSON.sortedKeys(CodingKeys.allCases)

    func write(to json: inout CompactJSON) {
        json.object(Self.sortedKeys) { json, key in
            switch key {
            case .kind: json.string(kind)
            case .hop: json.string(hop)
            }
        }
    }
}

extension NegotiatedAlgorithms {
    private static let sortedKeys = CompactJSON.sortedKeys([CodingKeys.hostKey, .keyExchange, .cipher, .mac])

    func write(to json: inout CompactJSON) {
        json.object(Self.sortedKeys) { json, key in
            switch key {
            case .hostKey: json.string(hostKey)
            case .keyExchange: json.string(keyExchange)
            case .cipher: json.string(cipher)
            case .mac: json.string(mac)
            }
        }
    }
}

extension ScanReport.SSHSettings {
    /// The fields of settings whose options are the common ones (`isPlain`): the settings' own and
    /// the options' always-written ones, `hash_known_hosts` when set.
    private enum PlainField: CaseIterable {
        case alias, userFiles, files, algorithms, globalFiles, checkHostIP, hashKnownHosts, revoked

        var name: String {
            switch self {
            case .alias: CodingKeys.hostKeyAlias.stringValue
            case .userFiles: CodingKeys.userKnownHostsFiles.stringValue
            case .files: CodingKeys.knownHostsFiles.stringValue
            case .algorithms: SSHHostOptions.CodingKeys.hostKeyAlgorithms.stringValue
            case .globalFiles: SSHHostOptions.CodingKeys.globalKnownHostsFiles.stringValue
            case .checkHostIP: SSHHostOptions.CodingKeys.checkHostIP.stringValue
            case .hashKnownHosts: SSHHostOptions.CodingKeys.hashKnownHosts.stringValue
            case .revoked: SSHHostOptions.CodingKeys.revokedHostKeys.stringValue
            }
        }
    }

    private static let plainFields = CompactJSON.sortedKeys(PlainField.allCases, name: \.name)

    /// Options holding nothing but the global files, `CheckHostIP`, `HashKnownHosts` and
    /// `RevokedHostKeys` (what an ordinary ssh_config sets); any other option, including one added
    /// later, makes the settings go through the encoder.
    private var isPlain: Bool {
        options == SSHHostOptions(globalKnownHostsFiles: options.globalKnownHostsFiles, checkHostIP: options.checkHostIP,
                                  hashKnownHosts: options.hashKnownHosts, revokedHostKeys: options.revokedHostKeys)
    }

    func write(to json: inout CompactJSON) throws {
        guard isPlain else { return try json.encoded(self) }
        func paths(_ files: [String]?) -> [String]? { files?.map { CleanText($0, limit: 1024).value } }
        json.beginObject()
        for (field, written) in Self.plainFields {
            if field == .hashKnownHosts && options.hashKnownHosts == nil { continue }
            json.field(written)
            switch field {
            case .alias: json.optional(hostKeyAlias) { $0.string($1) }
            case .userFiles: json.strings(userKnownHostsFiles)
            case .files: json.strings(knownHostsFiles)
            case .algorithms: json.null()
            case .globalFiles: json.optional(paths(options.globalKnownHostsFiles)) { $0.strings($1) }
            case .checkHostIP: json.optional(options.checkHostIP) { $0.bool($1) }
            case .hashKnownHosts: json.optional(options.hashKnownHosts) { $0.bool($1) }
            case .revoked: json.optional(paths(options.revokedHostKeys)) { $0.strings($1) }
            }
        }
        json.endObject()
    }
}

extension SharedKeyTable.Entry {
    private static let sortedKeys = CompactJSON.sortedKeys(CodingKeys.allCases)

    func write(to json: inout CompactJSON) {
        json.object(Self.sortedKeys) { json, field in
            switch field {
            case .fingerprint: json.string(fingerprint)
            case .type: json.string(type)
            case .hosts: json.strings(hosts)
            }
        }
    }
}
