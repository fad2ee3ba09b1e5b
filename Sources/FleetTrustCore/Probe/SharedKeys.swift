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

    /// For each host that shares a key, the names of the other hosts presenting one of its keys,
    /// each named once, as the scan report's `shares_keys_with` lists them.
    public static func otherHostNames(hosts: [InventoryHost], results: [ProbeResult?]) -> [Int: [String]] {
        otherHostNames(names: hosts.map(\.name), results: results)
    }

    /// The same with names given per host (cleaned once, not once per sharing pair: 10,000 hosts
    /// sharing a handful of keys make millions of pairs).
    public static func otherHostNames<Name: Hashable>(names hostNames: [Name], results: [ProbeResult?]) -> [Int: [Name]] {
        var names: [Int: [Name]] = [:]
        var named: [Int: Set<Name>] = [:]
        for group in groups(in: results) {
            for index in group.hosts {
                var list = names[index] ?? []
                var seen = named[index] ?? []
                for other in group.hosts where other != index && seen.insert(hostNames[other]).inserted {
                    list.append(hostNames[other])
                }
                names[index] = list
                named[index] = seen
            }
        }
        return names
    }

    /// For a certificate, the key it certifies; otherwise the key itself.
    public static func plainKey(of key: HostKey) -> HostKey {
        guard key.isCertificate, let certificate = try? HostCertificate(key) else { return key }
        return certificate.key
    }
}
