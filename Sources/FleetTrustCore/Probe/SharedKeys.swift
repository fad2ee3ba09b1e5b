/// One host key presented by more than one probed endpoint.
///
/// Cloned VM images, a load balancer or a proxy answering for many names all show up this way;
/// whichever it is, trusting the key for one of these hosts trusts it for all of them.
public struct SharedKeyGroup: Hashable, Sendable {
    /// The shared key (for a certificate, the key it certifies).
    public var key: HostKey
    /// Indices (into the probed list) of the hosts presenting `key`, ascending.
    public var hosts: [Int]

    public init(key: HostKey, hosts: [Int]) {
        self.key = key
        self.hosts = hosts
    }
}

/// A host's share of its run's shared keys: for each of its keys that hosts of other names
/// present too, how many hosts present it. A count, never the list of names: a fleet cloned
/// from one image makes every host share with every other, and names per host would make the
/// report quadratic in hosts (the names are written once, in the document's `shared_keys`).
public struct KeySharing: Hashable, Sendable {
    /// Plain-key SHA256 fingerprint -> how many hosts (by name) present it, at least 2.
    public var hostsByFingerprint: [String: Int]

    public init(hostsByFingerprint: [String: Int] = [:]) {
        self.hostsByFingerprint = hostsByFingerprint
    }

    public var isEmpty: Bool { hostsByFingerprint.isEmpty }

    /// The most hosts any one of the keys is shared by.
    public var widest: Int? { hostsByFingerprint.values.max() }

    /// How many hosts present `key` (for a certificate, the key it certifies), when it is shared.
    public func hosts(presenting key: HostKey) -> Int? {
        hostsByFingerprint.isEmpty ? nil : hostsByFingerprint[SharedKeys.plainKey(of: key).sha256Fingerprint]
    }
}

/// The keys presented by hosts of two or more names in one run (a scan, a replay, a merged
/// document), each with the names presenting it: what the scan document writes once as
/// `shared_keys`, and what each host's `KeySharing` counts.
public struct SharedKeyTable: Sendable {
    /// One shared key: its plain-key fingerprint and type, and the names presenting it, sorted.
    public struct Entry: Codable, Sendable, Equatable {
        public var fingerprint: String
        public var type: String
        public var hosts: [String]

        enum CodingKeys: String, CodingKey, CaseIterable { case fingerprint, type, hosts }

        public init(fingerprint: String, type: String, hosts: [String]) {
            self.fingerprint = fingerprint
            self.type = type
            self.hosts = hosts
        }
    }

    /// Every shared key, sorted by fingerprint.
    public let entries: [Entry]
    private let counts: [String: Int]

    /// Built one key at a time (a merge reads its reports once, host by host); each name is kept
    /// once per key, and a key seen under a single name holds that name alone.
    public struct Builder: Sendable {
        private struct Holders: Sendable {
            var type: String
            var first: String
            var others: Set<String> = []
        }

        private var byFingerprint: [String: Holders] = [:]

        public init() {}

        /// Host `name` presents the key of `fingerprint` (a plain key's) and `type`.
        public mutating func add(name: String, fingerprint: String, type: String) {
            if var holders = byFingerprint[fingerprint] {
                guard holders.first != name, !holders.others.contains(name) else { return }
                byFingerprint[fingerprint] = nil
                holders.others.insert(name)
                byFingerprint[fingerprint] = holders
            } else {
                byFingerprint[fingerprint] = Holders(type: type, first: name)
            }
        }

        /// Host `name` presents every key of `result` (a certificate counts as the key it certifies).
        public mutating func add(name: String, result: ProbeResult) {
            for discovered in result.keys {
                let key = SharedKeys.plainKey(of: discovered.key)
                add(name: name, fingerprint: key.sha256Fingerprint, type: key.type)
            }
        }

        public func table() -> SharedKeyTable {
            let entries = byFingerprint.compactMap { fingerprint, holders -> Entry? in
                guard !holders.others.isEmpty else { return nil }
                return Entry(fingerprint: fingerprint, type: holders.type, hosts: ([holders.first] + holders.others).sorted())
            }.sorted { $0.fingerprint < $1.fingerprint }
            return SharedKeyTable(entries: entries)
        }
    }

    public init(entries: [Entry] = []) {
        self.entries = entries
        counts = Dictionary(entries.map { ($0.fingerprint, $0.hosts.count) }, uniquingKeysWith: max)
    }

    /// The table of one run: `names[i]` (cleaned) presents the keys of `results[i]`; nil is a host not probed.
    public init(names: [String], results: [ProbeResult?]) {
        var builder = Builder()
        for (name, result) in zip(names, results) {
            if let result { builder.add(name: name, result: result) }
        }
        self = builder.table()
    }

    /// How many hosts present the key of this plain-key `fingerprint`, when it is shared.
    public func hosts(presenting fingerprint: String) -> Int? { counts[fingerprint] }

    /// What `result`'s keys share with the run.
    public func sharing(_ result: ProbeResult) -> KeySharing {
        guard !counts.isEmpty else { return KeySharing() }
        var shared: [String: Int] = [:]
        for discovered in result.keys {
            let fingerprint = SharedKeys.plainKey(of: discovered.key).sha256Fingerprint
            if let count = counts[fingerprint] { shared[fingerprint] = count }
        }
        return KeySharing(hostsByFingerprint: shared)
    }
}

public enum SharedKeys {
    /// Every key presented by two or more entries of `results`, in order of first appearance.
    /// Certificates are compared by the key they certify. A `nil` entry is a host not yet probed.
    public static func groups(in results: [ProbeResult?]) -> [SharedKeyGroup] {
        var order: [[UInt8]] = []
        var byKey: [[UInt8]: SharedKeyGroup] = [:]
        for (index, result) in results.enumerated() {
            guard let result else { continue }
            for discovered in result.keys {
                let key = plainKey(of: discovered.key)
                if var group = byKey[key.blob] {
                    if group.hosts.last != index { group.hosts.append(index) }
                    byKey[key.blob] = group
                } else {
                    byKey[key.blob] = SharedKeyGroup(key: key, hosts: [index])
                    order.append(key.blob)
                }
            }
        }
        return order.compactMap { byKey[$0] }.filter { $0.hosts.count > 1 }
    }

    /// For a certificate, the key it certifies; otherwise the key itself.
    public static func plainKey(of key: HostKey) -> HostKey {
        guard key.isCertificate, let certificate = try? HostCertificate(key) else { return key }
        return certificate.key
    }
}
