import Glibc

/// Extension beyond OpenSSH: an address network (`192.0.2.0/24`, `2001:db8::/64`) used
/// as a host-field element. Off unless `KnownHosts.Options.cidrPatterns` is set, because
/// `ssh` itself reads such an element as literal text that matches nothing.
struct CIDRPattern: Sendable, Hashable {
    let network: [UInt8]
    let prefixLength: Int

    init?(_ text: [UInt8]) {
        guard let slash = text.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let lengthText = String(decoding: text[(slash + 1)...], as: UTF8.self)
        guard let address = CIDRPattern.addressBytes(String(decoding: text[..<slash], as: UTF8.self)),
              !lengthText.isEmpty, lengthText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let length = Int(lengthText), length <= address.count * 8 else { return nil }
        self.network = address
        self.prefixLength = length
    }

    /// Whether `name` (a bare address lookup string) lies inside the network.
    func contains(_ name: [UInt8]) -> Bool {
        guard let address = CIDRPattern.addressBytes(String(decoding: name, as: UTF8.self)),
              address.count == network.count else { return false }
        var remaining = prefixLength
        for (a, n) in zip(address, network) where remaining > 0 {
            let bits = min(8, remaining)
            let mask: UInt8 = bits == 8 ? 0xff : ~(0xff >> UInt8(bits))
            if a & mask != n & mask { return false }
            remaining -= bits
        }
        return true
    }

    static func addressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}

extension KnownHostsPattern {
    /// `match` with CIDR elements matching addresses inside their network.
    static func matchWithCIDR(name: [UInt8], elements: [Element]) -> PatternMatch {
        var positive = false
        for element in elements {
            if element.tooLong { return .noMatch }
            let hit = CIDRPattern(element.pattern).map { $0.contains(name) } ?? glob(name, element.pattern)
            if hit {
                if element.negated { return .negated }
                positive = true
            }
        }
        return positive ? .match : .noMatch
    }
}
