/// The `RevokedHostKeys` files a fleet's hosts name, each read and parsed once, however many
/// hosts name it (as `KnownHostsSets` reads known_hosts files once).
///
/// A file that cannot be used is kept as its error, not dropped: `ssh` fails the connection to
/// every host that names it, so the judge makes each such host an `error` naming the file.
public struct RevocationLists: Sendable {
    public let lists: [String: Result<RevocationList, RevocationListError>]

    public init(_ lists: [String: Result<RevocationList, RevocationListError>] = [:]) {
        self.lists = lists
    }

    /// Reads every file these hosts name, each once.
    public static func read(hosts: [InventoryHost],
                            read: (String) throws(RevocationListError) -> RevocationList = RevocationList.read(path:)) -> RevocationLists {
        var lists: [String: Result<RevocationList, RevocationListError>] = [:]
        for path in hosts.flatMap({ $0.sshOptions.revokedHostKeys ?? [] }) where lists[path] == nil {
            do throws(RevocationListError) {
                lists[path] = .success(try read(path))
            } catch {
                lists[path] = .failure(error)
            }
        }
        return RevocationLists(lists)
    }

    /// What the host's files say about one presented key: the first revocation, or the first file
    /// that could not be used (one not read at all counts as unusable, never as silent).
    public func check(_ key: HostKey, for host: InventoryHost) -> Result<RevocationList.Revocation?, RevocationListError> {
        for path in host.sshOptions.revokedHostKeys ?? [] {
            switch lists[path] {
            case .success(let list)?:
                if let revocation = list.revocation(of: key) { return .success(revocation) }
            case .failure(let error)?:
                return .failure(error)
            case nil:
                return .failure(RevocationListError(path: path, problem: .unreadable("it was not read for this judgement")))
            }
        }
        return .success(nil)
    }

    /// The first of the host's files that could not be used, if any.
    public func unusable(for host: InventoryHost) -> RevocationListError? {
        for path in host.sshOptions.revokedHostKeys ?? [] {
            switch lists[path] {
            case .success?: continue
            case .failure(let error)?: return error
            case nil: return RevocationListError(path: path, problem: .unreadable("it was not read for this judgement"))
            }
        }
        return nil
    }
}
