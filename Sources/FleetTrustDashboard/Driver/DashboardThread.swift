import FleetTrustCore
import Foundation

/// Runs the dashboard on a thread of its own: curses wants a single thread, and a blocking UI loop
/// must not occupy one of Swift's few cooperative threads.
public enum DashboardThread {
    public static func run(state: DashboardState, services: DashboardServices, theme: Theme, noColor: Bool) async -> DashboardDriver.Ending {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                let terminal = CursesTerminal(theme: theme, noColor: noColor)
                let ending = DashboardDriver(state: state, services: services, terminal: terminal).run()
                continuation.resume(returning: ending)
            }
            thread.name = "fleettrust-ui"
            thread.start()
        }
    }
}
