import Foundation

/// Reads one scan report for `merge`: each host entry's JSON in turn, then the top-level fields
/// `merge` needs. A document in the version 3 layout (`ScanDocumentLayout`) is read line by
/// line, so a report of 100,000 hosts is never in memory at once; any other JSON document (a
/// version 2 report, a hand-formatted one) is read whole and split with `ReplayDocument`.
struct ReportReader {
    /// The top-level facts of one report.
    struct Header {
        var version: Int?
        var generatedAt: String?
        var skipped: [SkippedInventoryEntry] = []
    }

    /// A host line longer than this is refused (a certificate chain is a few KiB).
    static let maximumLine = 16 * 1024 * 1024

    let path: String

    /// Calls `host` with each host entry's index and JSON, in order, then returns the header.
    func read(host: (Int, Data) throws -> Void) throws -> Header {
        if let header = try readLayout(host: host) { return header }
        return try readWhole(host: host)
    }

    /// The layout, streamed; nil (before any host was passed on) when the file does not follow it.
    private func readLayout(host: (Int, Data) throws -> Void) throws -> Header? {
        // Each report is read twice, so it must be a file: a FIFO would block the open and could
        // not be read again.
        var status = stat()
        guard stat(path, &status) == 0 else { throw MergeError(file: path, message: "cannot be read (\(String(cString: strerror(errno))))") }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw MergeError(file: path, message: "is not a regular file (merge reads each report twice; save it to a file first)")
        }
        guard let file = fopen(path, "r") else { throw MergeError(file: path, message: "cannot be read (\(String(cString: strerror(errno))))") }
        defer { fclose(file) }
        let lines = LineReader(file: file, limit: Self.maximumLine)
        guard try lines.next(path) == Data("{".utf8) else { return nil }
        var header = Header()
        var index = 0
        var inHosts = false
        while let line = try lines.next(path) {
            if inHosts {
                if line == Data("  ],".utf8) || line == Data("  ]".utf8) { inHosts = false; continue }
                guard line.first == UInt8(ascii: "{") else {
                    if index == 0 { return nil }
                    throw MergeError(file: path, message: "hosts[\(index)]: not one host per line (the document is damaged)")
                }
                try host(index, line.last == UInt8(ascii: ",") ? line.dropLast() : line)
                index += 1
                continue
            }
            if line == Data("}".utf8) { return index == 0 && header.version == nil ? nil : header }
            if line == Data("  \"hosts\" : [".utf8) { inHosts = true; continue }
            guard let (key, value) = Self.field(line) else {
                if index == 0 { return nil }
                throw MergeError(file: path, message: "a top-level line after the hosts is not `\"key\" : value` (the document is damaged)")
            }
            do {
                switch key {
                case "version": header.version = try JSONDecoder().decode(Int.self, from: value)
                case "generated_at": header.generatedAt = try JSONDecoder().decode(String.self, from: value)
                case "skipped": header.skipped = try JSONDecoder().decode([SkippedInventoryEntry].self, from: value)
                default: _ = try JSONDecoder().decode(JSONValue.self, from: value)
                }
            } catch {
                if index == 0 { return nil }
                throw MergeError(file: path, message: "bad value at .\(key)")
            }
        }
        if index == 0 { return nil }
        throw MergeError(file: path, message: "the document ends early")
    }

    /// `  "key" : value` or `  "key" : value,` -> the key and the value's bytes.
    private static func field(_ line: Data) -> (String, Data)? {
        let bytes = [UInt8](line)
        guard bytes.count > 6, bytes[0] == 0x20, bytes[1] == 0x20, bytes[2] == UInt8(ascii: "\"") else { return nil }
        guard let close = bytes[3...].firstIndex(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }),
              bytes[close] == UInt8(ascii: "\""), bytes[close...].starts(with: Array("\" : ".utf8)) else { return nil }
        let key = String(decoding: bytes[3..<close], as: UTF8.self)
        var value = bytes[(close + 4)...]
        if value.last == UInt8(ascii: ",") { value = value.dropLast() }
        return (key, Data(value))
    }

    /// Any JSON document: read whole, its host entries found by `ReplayDocument`.
    private func readWhole(host: (Int, Data) throws -> Void) throws -> Header {
        let data: Data
        do {
            data = Data(try InputFile.read(path, role: "scan report", limit: ScanReplay.maximumDocument))
        } catch {
            throw MergeError(file: path, message: "cannot be read (\(error))")
        }
        let document: ReplayDocument
        do {
            document = try ReplayDocument(data)
        } catch {
            throw MergeError(file: path, message: "not a fleettrust scan JSON document (\(error))")
        }
        for (index, range) in document.hosts.enumerated() { try host(index, data[range]) }
        let skipped = try? JSONDecoder().decode(SkippedOnly.self, from: data).skipped
        return Header(version: document.version, generatedAt: document.generatedAt, skipped: skipped ?? [])
    }

    private struct SkippedOnly: Decodable {
        var skipped: [SkippedInventoryEntry]?
    }
}

/// Lines of a file, without their line breaks, each at most `limit` bytes: a longer line is
/// refused once `limit` bytes of it were read, never read whole (a report with one endless line
/// must not take the machine's memory).
private final class LineReader {
    let file: UnsafeMutablePointer<FILE>
    let limit: Int
    private var line: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var start = 0
    private var end = 0

    init(file: UnsafeMutablePointer<FILE>, limit: Int) {
        self.file = file
        self.limit = limit
    }

    func next(_ path: String) throws -> Data? {
        line.removeAll(keepingCapacity: true)
        while true {
            if start == end {
                start = 0
                end = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
                if end == 0 {
                    if ferror(file) != 0 { throw MergeError(file: path, message: "cannot be read (\(String(cString: strerror(errno))))") }
                    return line.isEmpty ? nil : Data(line)
                }
            }
            let (from, to) = (start, end)
            let newline = buffer.withUnsafeBytes { raw in
                memchr(raw.baseAddress! + from, 0x0a, to - from).map { UnsafeRawPointer($0) - raw.baseAddress! }
            }
            let stop = newline ?? end
            guard line.count + (stop - start) <= limit else { throw MergeError(file: path, message: "a line is longer than \(limit) bytes") }
            buffer.withUnsafeBytes { line.append(contentsOf: $0[from..<stop]) }
            if let newline {
                start = newline + 1
                return Data(line)
            }
            start = end
        }
    }
}
