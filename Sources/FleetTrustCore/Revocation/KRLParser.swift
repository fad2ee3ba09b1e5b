/// Reads OpenSSH's binary key revocation list (`PROTOCOL.krl`), with the checks of
/// `krl.c:ssh_krl_from_blob` in OpenSSH 9.2: whatever `ssh` refuses to load is a typed error
/// here (so the host is an error, as for `ssh`), and every length and count is bounded so a
/// hostile file cannot make fleettrust allocate or loop without limit.
struct KRLParser {
    static let magic: [UInt8] = Array("SSHKRL\n".utf8) + [0]

    enum SectionType: UInt8 {
        case certificates = 1, explicitKey = 2, sha1 = 3, signature = 4, sha256 = 5
    }

    enum CertificateSubsection: UInt8 {
        case serialList = 0x20, serialRange = 0x21, serialBitmap = 0x22, keyID = 0x23
    }

    /// Revoked serial ranges, key ids and hashes in one file, all sections together.
    static let maximumEntries = 1 << 22
    /// `SSHBUF_MAX_BIGNUM`: a bitmap is at most 2048 bytes (one more for a leading zero).
    static let maximumBitmapBytes = 2048

    let path: String
    let bytes: [UInt8]
    private var entries = 0
    private var keyDigests: [[UInt8]: Int] = [:]
    private var sha1s: Set<[UInt8]> = []
    private var sha256s: Set<[UInt8]> = []
    private var certificates: [[UInt8]?: (ranges: [ClosedRange<UInt64>], keyIDs: Set<String>)] = [:]
    private var signers: [HostKey] = []

    init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }

    private func failure(_ problem: RevocationListError.Problem) -> RevocationListError {
        RevocationListError(path: path, problem: problem)
    }

    /// Bounded reads over a slice of the file; every failure is the file's typed error.
    struct Reader {
        let bytes: [UInt8]
        var offset: Int
        let end: Int
        var remaining: Int { end - offset }

        mutating func byte() throws(RevocationListError.Problem) -> UInt8 {
            guard remaining >= 1 else { throw .truncated }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func uint32() throws(RevocationListError.Problem) -> UInt32 {
            guard remaining >= 4 else { throw .truncated }
            defer { offset += 4 }
            return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func uint64() throws(RevocationListError.Problem) -> UInt64 {
            let high = try uint32()
            return UInt64(high) << 32 | UInt64(try uint32())
        }

        /// A length-prefixed string, as a reader over its bytes (no copy).
        mutating func string() throws(RevocationListError.Problem) -> Reader {
            let length = Int(try uint32())
            guard length <= remaining else { throw length > bytes.count ? .oversized : .truncated }
            defer { offset += length }
            return Reader(bytes: bytes, offset: offset, end: offset + length)
        }

        var contents: [UInt8] { Array(bytes[offset..<end]) }

        /// `sshbuf_get_cstring`: a string with no NUL inside.
        mutating func cString() throws(RevocationListError.Problem) -> String {
            let field = try string().contents
            guard !field.contains(0) else { throw .malformed("a string contains a NUL byte") }
            return String(decoding: field, as: UTF8.self)
        }
    }

    /// The whole file, or the first reason `ssh` would refuse it.
    mutating func parse() throws(RevocationListError) -> RevocationList {
        do {
            try parseSections()
        } catch let problem {
            throw failure(problem)
        }
        var merged: [[UInt8]?: RevocationList.CertificateRevocations] = [:]
        for (authority, revoked) in certificates {
            merged[authority] = RevocationList.CertificateRevocations(serials: Self.merge(revoked.ranges), keyIDs: revoked.keyIDs)
        }
        let list = RevocationList(path: path, form: .krl, keyDigests: keyDigests, sha1s: sha1s, sha256s: sha256s, certificates: merged)
        // A signed KRL whose every signer it revokes itself is refused.
        if !signers.isEmpty, signers.allSatisfy({ list.revocation(of: $0) != nil }) { throw failure(.signersRevoked) }
        return list
    }

    private mutating func parseSections() throws(RevocationListError.Problem) {
        var reader = Reader(bytes: bytes, offset: Self.magic.count, end: bytes.count)
        let version = try reader.uint32()
        guard version == 1 else { throw .unsupportedVersion(version) }
        _ = try reader.uint64() // krl_version
        _ = try reader.uint64() // generated_date
        _ = try reader.uint64() // flags
        _ = try reader.string() // reserved
        _ = try reader.cString() // comment
        let sectionsStart = reader.offset
        signers = try verifySignatures(from: reader)
        reader.offset = sectionsStart
        while reader.remaining > 0 {
            let type = try reader.byte()
            var section = try reader.string()
            switch SectionType(rawValue: type) {
            case .certificates: try parseCertificates(&section)
            case .explicitKey: try hashes(&section, length: nil) { $0.keyDigests[Digest.sha256($1)] = 0 }
            case .sha1: try hashes(&section, length: 20) { $0.sha1s.insert($1) }
            case .sha256: try hashes(&section, length: 32) { $0.sha256s.insert($1) }
            case .signature:
                _ = try reader.string()
                continue
            case nil: throw .unknownSection(type)
            }
            guard section.remaining == 0 else { throw .malformed("a section has bytes left over") }
        }
    }

    /// The first pass of `ssh_krl_from_blob`: each signature section's signature, over the file up
    /// to its signing key, must verify, no key may sign twice, and only signatures may follow one.
    private func verifySignatures(from start: Reader) throws(RevocationListError.Problem) -> [HostKey] {
        var reader = start
        var signers: [HostKey] = []
        while reader.remaining > 0 {
            let type = try reader.byte()
            let field = try reader.string()
            guard type == SectionType.signature.rawValue else {
                guard signers.isEmpty else { throw .badSignature("a KRL section follows its signature") }
                continue
            }
            let signer: HostKey
            do { signer = try HostKey(blob: field.contents) } catch { throw .badKey("\(error)") }
            let signedLength = reader.offset
            let signature = try reader.string().contents
            guard SignatureVerifier.verify(signatureBlob: signature, data: Array(bytes[0..<signedLength]), key: signer) else {
                throw .badSignature("the KRL signature by \(signer.sha256Fingerprint) does not verify")
            }
            guard !signers.contains(signer) else { throw .badSignature("the KRL is signed twice with the same key") }
            signers.append(signer)
        }
        return signers
    }

    private mutating func count(_ added: Int = 1) throws(RevocationListError.Problem) {
        entries += added
        guard entries <= Self.maximumEntries else { throw .oversized }
    }

    private mutating func hashes(_ section: inout Reader, length: Int?,
                                 insert: (inout KRLParser, [UInt8]) -> Void) throws(RevocationListError.Problem) {
        while section.remaining > 0 {
            let value = try section.string().contents
            if let length, value.count != length { throw .malformed("a \(length * 8)-bit hash has \(value.count) bytes") }
            try count()
            insert(&self, value)
        }
    }

    private mutating func parseCertificates(_ section: inout Reader) throws(RevocationListError.Problem) {
        let authorityBlob = try section.string().contents
        _ = try section.string() // reserved
        var authority: [UInt8]?
        if !authorityBlob.isEmpty {
            // ssh compares the CA as the key it parses (sshkey_equal), so in its canonical encoding.
            do { authority = Digest.sha256(try HostKey(blob: authorityBlob).blob) } catch { throw .badKey("\(error)") }
        }
        while section.remaining > 0 {
            let type = try section.byte()
            var subsection = try section.string()
            switch CertificateSubsection(rawValue: type) {
            case .serialList:
                while subsection.remaining > 0 {
                    let serial = try subsection.uint64()
                    try revoke(serials: serial...serial, for: authority)
                }
            case .serialRange:
                let low = try subsection.uint64(), high = try subsection.uint64()
                guard low <= high else { throw .malformed("a serial range \(low)-\(high) is reversed") }
                try revoke(serials: low...high, for: authority)
            case .serialBitmap:
                let offset = try subsection.uint64()
                for range in try Self.bitmapRanges(offset: offset, bitmap: subsection.string().contents) {
                    try revoke(serials: range, for: authority)
                }
            case .keyID:
                while subsection.remaining > 0 {
                    let id = try subsection.cString()
                    try count()
                    certificates[authority, default: ([], [])].keyIDs.insert(id)
                }
            case nil: throw .unknownSection(type)
            }
            guard subsection.remaining == 0 else { throw .malformed("a certificate subsection has bytes left over") }
        }
    }

    /// `ssh_krl_revoke_cert_by_serial_range`: serial 0 is refused.
    private mutating func revoke(serials: ClosedRange<UInt64>, for authority: [UInt8]?) throws(RevocationListError.Problem) {
        guard serials.lowerBound != 0 else { throw .malformed("a revoked serial is 0") }
        try count()
        certificates[authority, default: ([], [])].ranges.append(serials)
    }

    /// The serials a bitmap subsection revokes, as runs: bit `i` (from the least significant bit
    /// of the last byte) revokes `offset + i`. An mpint: never negative, at most 2048 bytes after
    /// a leading zero, and no run may wrap past the largest serial (`bitmap wraps u64`).
    static func bitmapRanges(offset: UInt64, bitmap raw: [UInt8]) throws(RevocationListError.Problem) -> [ClosedRange<UInt64>] {
        if let first = raw.first, first & 0x80 != 0 { throw .malformed("a serial bitmap is negative") }
        guard raw.count <= maximumBitmapBytes || (raw.count == maximumBitmapBytes + 1 && raw.first == 0) else { throw .oversized }
        let bitmap = Array(raw.drop { $0 == 0 })
        guard let top = bitmap.first else { return [] }
        let highest = (bitmap.count - 1) * 8 + (7 - top.leadingZeroBitCount)
        guard !offset.addingReportingOverflow(UInt64(highest)).overflow else {
            throw .malformed("a serial bitmap wraps past the largest serial")
        }
        func isSet(_ bit: Int) -> Bool { bitmap[bitmap.count - 1 - bit / 8] >> UInt8(bit % 8) & 1 == 1 }
        var runs: [ClosedRange<UInt64>] = []
        var start: Int?
        for bit in 0...highest {
            if isSet(bit) {
                if start == nil { start = bit }
            } else if let first = start {
                runs.append((offset + UInt64(first))...(offset + UInt64(bit - 1)))
                start = nil
            }
        }
        if let first = start { runs.append((offset + UInt64(first))...(offset + UInt64(highest))) }
        return runs
    }

    /// Sorted, with overlapping and touching ranges joined.
    static func merge(_ ranges: [ClosedRange<UInt64>]) -> [ClosedRange<UInt64>] {
        var merged: [ClosedRange<UInt64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, last.upperBound == .max || range.lowerBound <= last.upperBound + 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
