import Foundation
import XCTest

/// A test case that writes inventories into a scratch directory of its own (removed after each
/// test), with an empty known_hosts file `kh` there, for commands run on the real binary.
class InventoryScratchTestCase: XCTestCase {
    var root = ""

    override func setUpWithError() throws {
        root = NSTemporaryDirectory() + "ft-\(Self.self)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        _ = try write("kh", "")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Writes `text` to `name` under the scratch directory; its full path.
    func write(_ name: String, _ text: String) throws -> String {
        let path = root + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
