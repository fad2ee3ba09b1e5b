import Foundation
import Glibc
import Synchronization

/// One known_hosts file: its bytes held once, and indexes of offsets into them.
///
/// A team's global file can have hundreds of thousands of lines, and a jump host runs several
/// fleettrust at once, so nothing is copied per line: `lines` makes a line's value on demand.
/// Plain literal names are indexed by a hash of the lowercased name (checked against the line
/// on a hit); lines with wildcards, negation or hashed names are kept in lists that every
/// lookup evaluates, as OpenSSH would.
public struct KnownHostsFile: Sendable {
    public let path: String
    /// The bytes the file had when read; the writer compares against them.
    public let bytes: [UInt8]
    /// Where each line starts in `bytes`.
    let lineStarts: [UInt32]
    /// Which lines list a literal name.
    let literalIndex: LiteralNameIndex
    /// Entries with hashed names that can match, laid out for the batch loop.
    let hashedLines: [HashedLine]
    /// Entries whose pattern lists must be evaluated, with their parsed lists.
    let patternLines: [(line: Int32, list: PatternList)]
    /// Hashed lines matching each lookup string prepared by `preparing(lookups:)`.
    private(set) var hashedMatchCache: [[UInt8]: [Int]]?

    /// Every line, parsed when asked for.
    public var lines: KnownHostsLineList { KnownHostsLineList(bytes: bytes, starts: lineStarts) }

    /// Files larger than this are refused rather than read into memory.
    public static let maximumSize = 256 << 20

    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
        self.lineStarts = KnownHostsLineList.lineStarts(bytes)
        var hashed: [HashedLine] = [], patterns: [(line: Int32, list: PatternList)] = []
        // Sized before filling: an array that doubles as it grows holds its old and new copies at once.
        let hashedBound = KnownHostsFile.hashedLineBound(bytes, starts: lineStarts)
        hashed.reserveCapacity(hashedBound)
        var literal = LiteralNameIndex(capacity: lineStarts.count - hashedBound)
        let list = KnownHostsLineList(bytes: bytes, starts: lineStarts)
        for index in list.indices {
            guard let entry = list[index].entry else { continue }
            switch entry.hosts {
            case .hashed(let name):
                if let line = HashedLine(line: index, name: name) { hashed.append(line) }
            case .patterns(let patternList):
                if let names = patternList.literalNames {
                    literal.add(names, line: index)
                } else {
                    patterns.append((Int32(index), patternList))
                }
            }
        }
        literal.seal()
        self.literalIndex = literal
        self.hashedLines = hashed
        self.patternLines = patterns
    }

    /// At least as many as the lines whose host field is hashed (`|1|` first, after a marker).
    static func hashedLineBound(_ bytes: [UInt8], starts: [UInt32]) -> Int {
        bytes.withUnsafeBufferPointer { buffer in
            var count = 0
            for start in starts {
                var at = Int(start)
                func skipBlanks() { while at < buffer.count, buffer[at] == 0x20 || buffer[at] == 0x09 { at += 1 } }
                skipBlanks()
                if at < buffer.count, buffer[at] == UInt8(ascii: "@") {
                    while at < buffer.count, buffer[at] != 0x20, buffer[at] != 0x09, buffer[at] != 0x0a { at += 1 }
                    skipBlanks()
                }
                if at + 2 < buffer.count, buffer[at] == UInt8(ascii: "|"), buffer[at + 1] == UInt8(ascii: "1"),
                   buffer[at + 2] == UInt8(ascii: "|") { count += 1 }
            }
            return count
        }
    }

    /// Reads a file; a missing file reads as empty, as it does for `ssh`. Any other failure (a
    /// directory, no permission, too large) is an `InputFile.Failure` naming the file.
    public static func read(path: String) throws(InputFile.Failure) -> KnownHostsFile {
        do {
            return KnownHostsFile(path: path, bytes: try InputFile.read(path, role: "known_hosts file", limit: maximumSize, text: false))
        } catch .missing {
            return KnownHostsFile(path: path, bytes: [])
        }
    }

    /// Indices of lines whose host field matches `lookup` (the exact lookup string), in file order.
    public func matchingLines(_ lookup: String, cidr: Bool = false) -> [Int] {
        let exact = Array(lookup.utf8)
        let lowered = KnownHostsPattern.lowercased(exact)
        var found = literalLines(lowered)
        for pattern in patternLines where pattern.list.match(lowered, cidr: cidr) == .match { found.append(Int(pattern.line)) }
        if let cached = hashedMatchCache?[exact] {
            found += cached
        } else {
            exact.withUnsafeBytes { name in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digest in
                    for hashed in hashedLines where hashed.matches(name, digest: digest.baseAddress!) { found.append(Int(hashed.line)) }
                }
            }
        }
        return found.count > 1 ? found.sorted() : found
    }

    /// The lines listing `lowered` literally: the index's candidates, each confirmed against the
    /// line itself (a hash can collide).
    private func literalLines(_ lowered: [UInt8]) -> [Int] {
        literalIndex.candidates(lowered).filter { index in
            if case .patterns(let list) = lines[index].entry?.hosts { return list.literalNames?.contains(lowered) == true }
            return false
        }
    }

    /// A copy that knows, for each of `lookups`, which hashed lines match it. Each hashed line
    /// has its own salt, so there is no index: the work is one HMAC per (line, name) pair, done
    /// here once with lines outer and names inner, spread over every core, instead of once per
    /// lookup later. Only line numbers are kept: plaintext names of hashed lines never are.
    /// Names prepared before stay prepared.
    public func preparing(lookups: [String]) -> KnownHostsFile {
        var copy = self
        var cache = hashedMatchCache ?? [:]
        let names = Array(Set(lookups.map { Array($0.utf8) })).filter { cache[$0] == nil }
        for name in names { cache[name] = [] }
        guard !hashedLines.isEmpty, !names.isEmpty else {
            copy.hashedMatchCache = cache
            return copy
        }
        let offsets = names.reduce(into: [0]) { $0.append($0.last! + $1.count) }
        let joined = names.flatMap { $0 }
        let slices = max(1, min(ProcessInfo.processInfo.activeProcessorCount, hashedLines.count / 256 + 1))
        let hits = Mutex<[(name: Int, line: Int)]>([])
        DispatchQueue.concurrentPerform(iterations: slices) { slice in
            var local: [(name: Int, line: Int)] = []
            let chunk = (hashedLines.count + slices - 1) / slices
            let range = min(hashedLines.count, slice * chunk)..<min(hashedLines.count, (slice + 1) * chunk)
            joined.withUnsafeBytes { all in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digest in
                    for position in range {
                        let hashed = hashedLines[position]
                        for nameIndex in 0..<names.count {
                            let name = UnsafeRawBufferPointer(rebasing: all[offsets[nameIndex]..<offsets[nameIndex + 1]])
                            if hashed.matches(name, digest: digest.baseAddress!) { local.append((nameIndex, Int(hashed.line))) }
                        }
                    }
                }
            }
            hits.withLock { $0 += local }
        }
        for hit in hits.withLock({ $0 }).sorted(by: { $0.line < $1.line }) { cache[names[hit.name], default: []].append(hit.line) }
        copy.hashedMatchCache = cache
        return copy
    }
}
