@testable import FleetTrustCore

/// Fixed public keys for known_hosts unit tests (no private halves are needed).
enum TestKeys {
    static let a = try! HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEf84BXqlw4P6E937hMKFbQKSNtq2sAfXj5Kb2cHqggY")
    static let b = try! HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPMxaRxuOHE2qIWPvwuzfOKc5JhwWR1+hBKE/C5Suuh9")
    static let c = try! HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOyMJEtE942mFrNzjMhe0L6TMqSYCzqr6O2uMww3fayF")
    static let ecdsa = try! HostKey(openSSHLine: "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEpkfqq9BN9Hzgc0DSSLcygXJipKX8ds80oNkLtzrGHOltvlFPMriA2zQvBRYnq2HaMM4hlMqAlT+sCU+qUPr4k=")

    static func file(_ text: String, path: String = "kh") -> KnownHostsFile {
        KnownHostsFile(path: path, bytes: Array(text.utf8))
    }

    static func verdict(_ text: String, _ key: HostKey, host: String, port: Int = 22, alias: String? = nil,
                        checkHostIP: String? = nil) throws -> KeyVerdict {
        let judge = KnownHostsJudge(knownHosts: KnownHosts(files: [file(text)]))
        return try judge.judge(key, for: ConnectionTarget(host: host, port: port, hostKeyAlias: alias, checkHostIPAddress: checkHostIP)).verdict
    }
}
