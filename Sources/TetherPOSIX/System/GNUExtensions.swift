#if os(Linux)
import Glibc

/// glibc functions that Swift's Glibc module hides because it is built without `_GNU_SOURCE`
/// (`setns`, `accept4`, `pthread_setname_np`). They are looked up once with `dlsym`; a missing symbol
/// is `nil` and callers fall back (or report `ENOSYS`).
enum GNUExtensions {
    typealias SetNS = @convention(c) (Int32, Int32) -> Int32
    typealias Accept4 = @convention(c) (
        Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
    ) -> Int32
    typealias SetThreadName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32

    /// `CLONE_NEWNET` from <sched.h>.
    static let cloneNewNet: Int32 = 0x4000_0000
    /// `EAI_ADDRFAMILY` from <netdb.h> (glibc): the host has no address in the requested family.
    static let eaiAddressFamily: Int32 = -9

    static let setns: SetNS? = symbol("setns", as: SetNS.self)
    static let accept4: Accept4? = symbol("accept4", as: Accept4.self)
    static let setThreadName: SetThreadName? = symbol("pthread_setname_np", as: SetThreadName.self)

    private static func symbol<F>(_ name: String, as type: F.Type) -> F? {
        // dlopen(nil) is the global symbol scope of the process, which includes libc.
        guard let handle = dlopen(nil, RTLD_NOW), let address = dlsym(handle, name) else { return nil }
        return unsafeBitCast(address, to: type)
    }
}
#endif
