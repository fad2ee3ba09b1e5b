import Foundation

/// One known_hosts file, parsed once into lines, with an index for fast lookups.
///
/// Plain literal names go into a dictionary; lines with wildcards, negation or hashed
/// names are kept in a list that every lookup evaluates, as OpenSSH would.
public struct KnownHostsFile: Sendable {
    public let path: String
    /// The bytes the file had when read; the writer compares against them.
    public let bytes: [UInt8]
    public let lines: [KnownHostsLine]
    /// Lowercased literal name -> indices into `lines`.
    let literalIndex: [[UInt8]: [Int]]
    /// Indices of entries with hashed names.
    let hashedLines: [Int]
    /// Indices of entries whose pattern lists must be evaluated.
    let patternLines: [Int]
    /// Hashed lines matching each lookup string prepared by `preparing(lookups:)`.
    private(set) var hashedMatchCache: [[UInt8]: [Int]]?

    public enum ReadError: Error, Sendable, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case tooLarge(path: String, bytes: Int)
        public var description: String {
            switch self {
            case .unreadable(let path, let reason): return "cannot read \(Sanitizer.clean(path)): \(reason)"
            case .tooLarge(let path, let bytes): return "\(Sanitizer.clean(path)) is too large (\(bytes) bytes)"
            }
        }
    }

    /// Files larger than this are refused rather than read into memory.
    public static let maximumSize = 256 << 20

    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
        self.lines = KnownHostsParser.parse(bytes)
        var literal: [[UInt8]: [Int]] = [:]
        var hashed: [Int] = [], patterns: [Int] = []
        for (index, line) in lines.enumerated() {
            guard let entry = line.entry else { continue }
            switch entry.hosts {
            case .hashed:
                hashed.append(index)
            case .patterns(let list):
                if let names = list.literalNames {
                    for name in Set(names) { literal[name, default: []].append(index) }
                } else {
                    patterns.append(index)
                }
            }
        }
        self.literalIndex = literal
        self.hashedLines = hashed
        self.patternLines = patterns
    }

    /// Reads a file; a missing file reads as empty, as it does for `ssh`.
    public static func read(path: String) throws -> KnownHostsFile {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            if !FileManager.default.fileExists(atPath: path) { return KnownHostsFile(path: path, bytes: []) }
            throw ReadError.unreadable(path: path, reason: "permission denied or not a file")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maximumSize + 1) ?? Data()
        } catch {
            throw ReadError.unreadable(path: path, reason: error.localizedDescription)
        }
        guard data.count <= maximumSize else { throw ReadError.tooLarge(path: path, bytes: data.count) }
        return KnownHostsFile(path: path, bytes: [UInt8](data))
    }

    /// Indices of lines whose host field matches `lookup` (the exact lookup string), in file order.
    public func matchingLines(_ lookup: String, cidr: Bool = false) -> [Int] {
        let exact = Array(lookup.utf8)
        let lowered = KnownHostsPattern.lowercased(exact)
        var found = literalIndex[lowered] ?? []
        for index in patternLines {
            if case .patterns(let list) = lines[index].entry!.hosts, list.match(lowered, cidr: cidr) == .match { found.append(index) }
        }
        if let cached = hashedMatchCache?[exact] {
            found += cached
        } else {
            for index in hashedLines {
                if case .hashed(let hashed) = lines[index].entry!.hosts, hashed.matches(exact) { found.append(index) }
            }
        }
        return found.count > 1 ? found.sorted() : found
    }

    /// A copy that knows, for each of `lookups`, which hashed lines match it. Each hashed line
    /// has its own salt, so there is no index: the work is one HMAC per (line, name) pair, done
    /// here once with lines outer and names inner, spread over every core, instead of once per
    /// lookup later. Only line numbers are kept: plaintext names of hashed lines never are.
    public func preparing(lookups: [String]) -> KnownHostsFile {
        var copy = self
        let names = Array(Set(lookups.map { Array($0.utf8) }))
        guard !hashedLines.isEmpty, !names.isEmpty else {
            copy.hashedMatchCache = Dictionary(uniqueKeysWithValues: names.map { ($0, []) })
            return copy
        }
        let chunks = min(hashedLines.count, ProcessInfo.processInfo.activeProcessorCount * 8)
        let perChunk = (hashedLines.count + chunks - 1) / chunks
        var flatBuffer: [UInt8] = [], offsetBuffer = [0]
        for name in names {
            flatBuffer += name
            offsetBuffer.append(flatBuffer.count)
        }
        let flat = flatBuffer, offsets = offsetBuffer
        let hashed = hashedLines.map { index -> HashedHostName in
            guard case .hashed(let name) = lines[index].entry!.hosts else { preconditionFailure("indexed as hashed") }
            return name
        }
        let results = ChunkResults(count: chunks)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            var hits: [(name: Int, line: Int)] = []
            let range = chunk * perChunk..<min(hashed.count, (chunk + 1) * perChunk)
            flat.withUnsafeBufferPointer { flatNames in
                offsets.withUnsafeBufferPointer { nameOffsets in
                    hashed.withUnsafeBufferPointer { entries in
                        for position in range {
                            entries[position].matches(names: flatNames, offsets: nameOffsets) {
                                hits.append((name: $0, line: hashedLines[position]))
                            }
                        }
                    }
                }
            }
            results[chunk] = hits
        }
        var cache = Dictionary(uniqueKeysWithValues: names.map { ($0, [Int]()) })
        for hits in results.all {
            for hit in hits { cache[names[hit.name], default: []].append(hit.line) }
        }
        copy.hashedMatchCache = cache
        return copy
    }
}

/// One slot per chunk of a parallel pass; each chunk writes only its own slot.
private final class ChunkResults: @unchecked Sendable {
    private var slots: [[(name: Int, line: Int)]]
    private let lock = NSLock()

    init(count: Int) { slots = Array(repeating: [], count: count) }

    subscript(chunk: Int) -> [(name: Int, line: Int)] {
        get { lock.withLock { slots[chunk] } }
        set { lock.withLock { slots[chunk] = newValue } }
    }

    var all: [[(name: Int, line: Int)]] { lock.withLock { slots } }
}
