/// What the judge established about a TLS endpoint's handshake: facts on `JudgedHost.tls`,
/// from which its `status` was computed (see `FleetJudge.judgeTLS`) and which every output shows.
public struct TLSJudgement: Hashable, Sendable {
    public var handshake: TLSHandshake
    /// The certificates the server sent that could be read, leaf first.
    public var certificates: [TLSCertificate]
    /// Certificates it sent that could not be read, with why.
    public var unreadable: [CleanText]
    /// Chain validation against `anchorsSource`.
    public var chain: TLSChainCheck
    public var anchorsSource: String
    /// The name checked against the leaf (the server name, else the address).
    public var checkedName: String
    public var nameMatches: Bool
    /// The first certificate (presented or built) outside its validity period at the judged clock.
    public var outOfValidity: TLSCertificate?
    /// Whole days until the leaf expires, and until the earliest-expiring certificate of the
    /// chain does (negative once expired).
    public var leafExpiresInDays: Int
    public var chainExpiresInDays: Int
    public var warnings: [CertificateWarning]
    /// The certificate whose public key matched a pin in force (leaf: a key pin; above it: a CA pin).
    public var pinnedCertificate: TLSCertificate?

    public var leaf: TLSCertificate? { certificates.first }

    /// Whole days from `now` to `time` (negative once past), as for SSH certificates.
    /// A certificate's time is the server's to choose: any Int64 (the parser's sentinels are
    /// `Int64.min`/`.max`) must give an answer, never an overflow.
    static func days(until time: Int64, now: UInt64) -> Int {
        let (seconds, overflow) = time.subtractingReportingOverflow(Int64(clamping: now))
        if overflow { return time < 0 ? -Int(Int32.max) : Int(Int32.max) }
        let whole = seconds / 86_400
        return Int(seconds % 86_400 < 0 ? whole - 1 : whole)
    }
}
