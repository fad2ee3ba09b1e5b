/// One host key presented by more than one probed endpoint.
///
/// Cloned VM images, a load balancer or a proxy answering for many names all show up this way;
/// whichever it is, trusting the key for one of these hosts trusts it for all of them.
public struct SharedKeyGroup: Hashable, Sendable {
    public var key: HostKey
    /// Indices (into the probed list) of the hosts presenting `key`, ascending.
    public var hosts: [Int]
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
                let identity = plainBlob(of: discovered.key)
                if var group = byKey[identity] {
                    if group.hosts.last != index { group.hosts.append(index) }
                    byKey[identity] = group
                } else {
                    byKey[identity] = SharedKeyGroup(key: discovered.key, hosts: [index])
                    order.append(identity)
                }
            }
        }
        return order.compactMap { byKey[$0] }.filter { $0.hosts.count > 1 }
    }

    /// For a certificate, the wire blob of the key it certifies; otherwise the key's own blob.
    static func plainBlob(of key: HostKey) -> [UInt8] {
        guard key.isCertificate, let certificate = try? HostCertificate(key) else { return key.blob }
        return certificate.key.blob
    }
}
