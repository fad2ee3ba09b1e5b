import Foundation

/// A host key given on a command line (`verify HOST KEY`): a `.pub` or certificate file, or an
/// OpenSSH key line (`TYPE BASE64`). Read here so the command stays a parser of arguments.
public enum HostKeyArgument {
    /// Why the argument is neither a readable key file nor a key line, in one sentence.
    public struct Problem: Error, CustomStringConvertible {
        public var description: String
    }

    /// The key: the file's first key line when `path` (the argument, `~`-expanded) exists, else
    /// the argument itself as a key line.
    public static func read(_ argument: String, path: String) throws(Problem) -> HostKey {
        let shown = Sanitizer.clean(argument, limit: 200)
        guard FileManager.default.fileExists(atPath: path) else {
            // A key line has a space between its type and its base64; a path never needs one.
            if !argument.contains(" ") && (argument.contains("/") || argument.hasSuffix(".pub")) {
                throw Problem(description: "\(shown): no such file (given as the key file)")
            }
            do { return try HostKey(openSSHLine: argument) } catch {
                throw Problem(description: "\(shown): neither a key file nor a key line (\(error))")
            }
        }
        let bytes: [UInt8]
        do { bytes = try InputFile.read(path, role: "key file", limit: 1 << 20) } catch {
            throw Problem(description: error.description)
        }
        let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
            .first { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        do { return try HostKey(openSSHLine: line ?? "") } catch {
            throw Problem(description: "\(shown): \(error)")
        }
    }
}
