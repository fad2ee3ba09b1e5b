import FleetTrustCore
import Foundation

/// A value written into `ssh -o KEYWORD=VALUE` so that `ssh` 9.2 reads back exactly it.
///
/// `ssh` splits the option line as it splits a configuration line (`argv_split` in `misc.c`:
/// whitespace separates, `"…"`/`'…'` quote, `\"`, `\'` and `\\` escape, `#` starts a comment),
/// and then expands some keywords' values again: `UserKnownHostsFile` gets a leading `~`
/// (`tilde_expand_filename`), `%` tokens and `${VAR}` (`default_client_percent_dollar_expand`);
/// 9.2 takes `RevokedHostKeys` and `HostKeyAlias` as they are, later versions expand
/// `RevokedHostKeys` too. So a file judged under one name would otherwise be read under another
/// (a path written `%%h` in an ssh_config, read as the literal `%h`, expanded a second time).
/// Each value is quoted; a value no escape can carry (`${`, a control character) is refused.
enum SSHOptionValue {
    struct Refusal: Error {
        var reason: String
    }

    /// A file for a keyword whose value `ssh` expands (`UserKnownHostsFile`): absolute (so no
    /// leading `~`), `%` doubled, quoted.
    static func expandedFile(_ path: String) throws(Refusal) -> String {
        let absolute = try checked(absolutePath(path))
        guard !absolute.contains("${") else {
            throw Refusal(reason: "the file \(absolute) contains '${', which ssh expands as an environment variable and cannot escape")
        }
        return quoted(absolute.replacingAll("%", with: "%%"))
    }

    /// A file for a keyword `ssh` may or may not expand, by version (`RevokedHostKeys`): only a
    /// path that reads the same either way (absolute, no `%`, no `${`) is passed.
    static func unexpandedFile(_ path: String) throws(Refusal) -> String {
        let absolute = try checked(absolutePath(path))
        guard !absolute.contains("%"), !absolute.contains("${") else {
            throw Refusal(reason: "the file \(absolute) contains '%' or '${', which some ssh versions expand in RevokedHostKeys")
        }
        return quoted(absolute)
    }

    /// A value `ssh` takes as it is after splitting (`HostKeyAlias`): quoted.
    static func literal(_ value: String) throws(Refusal) -> String {
        quoted(try checked(value))
    }

    private static func checked(_ value: String) throws(Refusal) -> String {
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw Refusal(reason: "\(Sanitizer.clean(value)) contains a control character, which ssh's option line cannot carry")
        }
        return value
    }

    private static func absolutePath(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// In double quotes, with `\` and `"` escaped: `argv_split` reads back every other byte as it is.
    private static func quoted(_ value: String) -> String {
        "\"" + value.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
    }
}
