/// Which lines list a literal host name, for the files that match names against pattern lists
/// (known_hosts and pin files): 8 bytes an entry, the lowercased name's hash cut to 32 bits and
/// the line's index, sorted. A hash can collide, so every line `candidates` returns must still
/// be checked against the line itself; the index only says where to look.
struct LiteralNameIndex: Sendable {
    private struct Entry: Sendable, Comparable {
        let hash: UInt32
        let line: Int32
        static func < (a: Entry, b: Entry) -> Bool { (a.hash, a.line) < (b.hash, b.line) }
    }

    private var entries: [Entry] = []

    /// How many (name, line) pairs are indexed.
    var count: Int { entries.count }

    /// Room for `capacity` names, so a large file's index is never held twice while it grows.
    init(capacity: Int = 0) {
        entries.reserveCapacity(capacity)
    }

    /// Records that line `line` lists each of `names` (lowercased).
    mutating func add(_ names: [[UInt8]], line: Int) {
        for name in Set(names) { entries.append(Entry(hash: Self.hash(name), line: Int32(line))) }
    }

    /// Makes the index searchable, once everything is added.
    mutating func seal() {
        entries.sort()
    }

    /// The lines that may list `lowered`, in line order.
    func candidates(_ lowered: [UInt8]) -> [Int] {
        let hash = Self.hash(lowered)
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].hash < hash { low = middle + 1 } else { high = middle }
        }
        var found: [Int] = []
        while low < entries.count, entries[low].hash == hash {
            found.append(Int(entries[low].line))
            low += 1
        }
        return found
    }

    private static func hash(_ name: [UInt8]) -> UInt32 {
        var hasher = Hasher()
        name.withUnsafeBytes { hasher.combine(bytes: $0) }
        return UInt32(truncatingIfNeeded: hasher.finalize())
    }
}
