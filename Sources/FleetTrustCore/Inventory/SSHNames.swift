/// A host name as `ssh` accepts one on its command line, checked once where it enters.
///
/// Inventory values (a host name, `ansible_host`/`HostName`, a jump hop) are pasted into a
/// `ProxyCommand` (`%h`, `%n`) that a shell runs, and handed to `ssh` as arguments. OpenSSH refuses
/// a command-line host name that could do harm there before it expands anything
/// (`ssh_valid_hostname` in readconf.c, OpenSSH 10.3; Debian's 9.2p1 carries the same rule):
/// no leading `-` (it would be read as an option), none of ``' ` " $ \ ; & < > | ( ) { } ,``, no
/// white space and no control character. Only a value of this type can be expanded into a command
/// or handed to `ssh`, so nothing unchecked can get there.
public struct SSHHostName: Hashable, Sendable, CustomStringConvertible {
    public let value: String

    public init(_ text: String) throws(SSHNameError) {
        if let problem = Self.problem(in: text) { throw SSHNameError(kind: .hostName, value: text, problem: problem) }
        value = text
    }

    public var description: String { value }

    static func problem(in text: String) -> SSHNameError.Problem? {
        if text.utf8.first == UInt8(ascii: "-") { return .leadingDash }
        for byte in text.utf8 where SSHNameError.isSpaceOrControl(byte) || Self.forbidden.contains(byte) {
            return .character(byte)
        }
        return nil
    }

    private static let forbidden = Set("'`\"$\\;&<>|(){},".utf8)
}

/// A remote user as `ssh` accepts one on its command line (`ssh_valid_ruser`, OpenSSH 10.3): no
/// leading `-`, no control character, none of ``' ` " ; & < > | ( ) { }``, no `-` after white
/// space, no `\` at the end. The rule is OpenSSH's, not stricter: `$` and spaces pass, as they do for
/// `ssh`, and neither can start a command in a shell without the characters refused here.
public struct SSHUserName: Hashable, Sendable, CustomStringConvertible {
    public let value: String

    public init(_ text: String) throws(SSHNameError) {
        if let problem = Self.problem(in: text) { throw SSHNameError(kind: .user, value: text, problem: problem) }
        value = text
    }

    public var description: String { value }

    static func problem(in text: String) -> SSHNameError.Problem? {
        let bytes = Array(text.utf8)
        if bytes.first == UInt8(ascii: "-") { return .leadingDash }
        for (index, byte) in bytes.enumerated() {
            let next = index + 1 < bytes.count ? bytes[index + 1] : nil
            if SSHNameError.isControl(byte) || Self.forbidden.contains(byte) { return .character(byte) }
            if SSHNameError.isSpace(byte) && next == UInt8(ascii: "-") { return .dashAfterSpace }
            if byte == UInt8(ascii: "\\") && next == nil { return .trailingBackslash }
        }
        return nil
    }

    private static let forbidden = Set("'`\";&<>|(){}".utf8)
}

/// Why a host name or user is refused, in the words of `ssh`'s own refusal.
public struct SSHNameError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        case hostName = "host name"
        case user
    }

    public enum Problem: Hashable, Sendable {
        case leadingDash
        case character(UInt8)
        case dashAfterSpace
        case trailingBackslash
    }

    public var kind: Kind
    /// The value as written (untrusted: clean it before showing it).
    public var value: String
    public var problem: Problem

    public var description: String {
        let why: String
        switch problem {
        case .leadingDash: why = "begins with '-' (ssh would read it as an option)"
        case .character(let byte): why = "contains \(Self.name(of: byte))"
        case .dashAfterSpace: why = "has a '-' after white space"
        case .trailingBackslash: why = "ends with '\\'"
        }
        return "\(kind.rawValue) \"\(Sanitizer.clean(value, limit: 80))\" \(why), which ssh refuses "
            + "(\(kind == .hostName ? "hostname" : "remote username") contains invalid characters)"
    }

    private static func name(of byte: UInt8) -> String {
        switch byte {
        case 0x0a: return "a newline"
        case 0x09: return "a tab"
        case 0x20: return "a space"
        case _ where isControl(byte): return "a control character"
        default: return "'\(Character(Unicode.Scalar(byte)))'"
        }
    }

    /// `iscntrl` and `isspace` of the C locale, where `ssh` asks them: bytes of UTF-8 sequences
    /// (0x80 and up) are neither.
    static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7f }
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0d).contains(byte) }
    static func isSpaceOrControl(_ byte: UInt8) -> Bool { isControl(byte) || isSpace(byte) }
}

/// The names of one SSH host that fleettrust expands into a command or hands to `ssh`: its alias
/// (`%n`, the name connect gives `ssh` for an ssh_config inventory), the host name to connect to
/// (`%h`, `ansible_host`/`HostName`) and the remote user (`%r`), each checked as `ssh` checks a
/// command-line value.
///
/// `ssh` itself checks only what its command line gives it and trusts `HostName`/`User` from its
/// own configuration; fleettrust reads those from inventories (a CMDB, cloud tags, a script), so
/// it checks them all.
public struct SSHDestination: Hashable, Sendable {
    public let alias: SSHHostName
    public let hostName: SSHHostName
    public let user: SSHUserName?

    public init(name: String, address: String, user: String?) throws(SSHNameError) {
        alias = try SSHHostName(name)
        hostName = try SSHHostName(address)
        self.user = try user.map { text throws(SSHNameError) in try SSHUserName(text) }
    }

    public init(_ host: InventoryHost) throws(SSHNameError) {
        try self.init(name: host.name, address: host.address, user: host.user)
    }
}
