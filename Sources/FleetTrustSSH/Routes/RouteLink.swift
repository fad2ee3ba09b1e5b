import Synchronization

/// What holds up the far end of a routed connection, let go when the probe closes it: the
/// `RouteChild` of a ProxyCommand, or the `ForwardedChannel` of a control master.
protocol RouteLink: Sendable {
    func disconnect()
}

extension RouteChild: RouteLink {
    func disconnect() { stop() }
}

/// A channel a control master forwards for us (see `ControlSocket.openForward`): it lives while
/// its multiplexing connection is open, so closing that connection ends it, on the bastion too.
final class ForwardedChannel: RouteLink {
    private let control: Mutex<ControlSocket?>

    init(_ control: ControlSocket) {
        self.control = Mutex(control)
    }

    func disconnect() {
        control.withLock { $0 = nil }
    }
}
