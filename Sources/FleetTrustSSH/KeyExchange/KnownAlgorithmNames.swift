import FleetTrustCore

/// The algorithm names this client offers, kept as strings made once, so reading a server's
/// KEXINIT reuses them instead of decoding a new string (an allocation and a UTF-8 check) for
/// each of its forty-odd names on every handshake.
///
/// Only the storage changes: a name the table lacks is decoded as before, and every name is
/// still exactly the bytes the server sent.
enum KnownAlgorithmNames {
    /// The text of one name of a server's name-list.
    static func name(_ bytes: ArraySlice<UInt8>) -> String {
        if bytes.count < byLength.count {
            for known in byLength[bytes.count] where known.bytes.elementsEqual(bytes) { return known.name }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The known names by their length in bytes, so a name is compared with the few of its length.
    private static let byLength: [[(bytes: [UInt8], name: String)]] = {
        let names = Set(KeyExchangeMethod.allCases.map(\.rawValue) + [KexInit.strictServerMarker, "ext-info-s"]
            + KeyExchangeProbe.supportedAlgorithms + KexInit.ciphers + KexInit.macs + KexInit.compressions)
        var table = Array(repeating: [(bytes: [UInt8], name: String)](), count: (names.map(\.utf8.count).max() ?? 0) + 1)
        for name in names { table[name.utf8.count].append((Array(name.utf8), name)) }
        return table
    }()
}
