import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory per test, removed afterwards; helpers to read and write raw bytes.
struct StoreTestDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "ft-store-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: file(name)))
    }

    func bytes(_ name: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: file(name)) ?? Data())
    }

    func text(_ name: String) -> String { String(decoding: bytes(name), as: UTF8.self) }

    /// Everything in the directory, hidden files included (to find left-over temporary files).
    func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    func status(_ name: String) -> stat {
        var s = stat()
        lstat(file(name), &s)
        return s
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
