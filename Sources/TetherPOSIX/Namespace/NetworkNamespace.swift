import Glibc

/// A Linux network namespace, named by the path of its handle (as made by `ip netns add NAME`).
///
/// Sockets created "in" a namespace are created on a short-lived thread that has joined it with
/// `setns(fd, CLONE_NEWNET)`; only that thread switches, and a socket keeps its namespace for life,
/// so the rest of the process (and the event loop that drives the socket) is unaffected. Joining
/// a namespace needs `CAP_SYS_ADMIN` (root).
package struct NetworkNamespace: Hashable, Sendable, CustomStringConvertible {
    /// The namespace handle, for example `/var/run/netns/tether-test`.
    package let path: String

    /// - Parameter path: a namespace handle such as `/var/run/netns/NAME` or `/proc/PID/ns/net`.
    package init(path: String) {
        self.path = path
    }

    /// The namespace that `ip netns add name` created (`/var/run/netns/name`).
    package init(named name: String) {
        self.path = "/var/run/netns/\(name)"
    }

    package var description: String { "netns \(self.path)" }

    /// Runs `body` on a new thread that has joined this namespace, waits for it, and returns its
    /// result. Use it for anything that must happen inside the namespace (creating sockets).
    /// - Throws: `SocketError.system` when the handle cannot be opened or joined (for example
    ///   `EPERM` without root, `ENOENT` for a missing namespace; `ENOSYS` when the C library has no `setns`).
    package func run<Value>(_ body: () throws(SocketError) -> Value) throws(SocketError) -> Value {
        guard let setns = GNUExtensions.setns else {
            throw .system(operation: "setns", errno: ENOSYS)
        }
        let handle = open(self.path, O_RDONLY | O_CLOEXEC)
        guard handle >= 0 else { throw .system(operation: "open \(self.path)", errno: errno) }
        defer { Socket.close(handle) }
        return try withoutActuallyEscaping(body) { body throws(SocketError) -> Value in
            let job = NamespaceJob<Value> {
                guard setns(handle, GNUExtensions.cloneNewNet) == 0 else {
                    return .failure(.system(operation: "setns", errno: errno))
                }
                do throws(SocketError) { return .success(try body()) } catch { return .failure(error) }
            }
            let context = Unmanaged.passRetained(job)
            var thread = pthread_t()
            let created = pthread_create(&thread, nil, { context in
                let job = Unmanaged<AnyObject>.fromOpaque(context!).takeUnretainedValue() as! any RunnableJob
                job.runJob()
                return nil
            }, context.toOpaque())
            guard created == 0 else {
                context.release()
                throw .system(operation: "pthread_create", errno: created)
            }
            pthread_join(thread, nil)
            context.release()
            return try job.result!.get()
        }
    }

    /// Creates a non-blocking TCP socket of `family` inside the namespace.
    func makeTCPSocket(family: Int32) throws(SocketError) -> Int32 {
        try self.run { () throws(SocketError) -> Int32 in try Socket.makeTCP(family: family) }
    }
}

private protocol RunnableJob: AnyObject {
    func runJob()
}

/// The body and result of one namespace thread. The creating thread reads `result` only after
/// `pthread_join`, which orders it after the write on the namespace thread.
private final class NamespaceJob<Value>: RunnableJob {
    let body: () -> Result<Value, SocketError>
    var result: Result<Value, SocketError>?

    init(body: @escaping () -> Result<Value, SocketError>) {
        self.body = body
    }

    func runJob() {
        self.result = self.body()
    }
}
