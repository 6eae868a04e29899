// libFuzzer's entry point for every target, built into one binary (`scripts/fuzz.sh`): the target is named by
// `TETHER_FUZZ_TARGET` (decoder, handshake or inflate), read once. One build instead of one per target: each compiles
// all of TetherWire with the sanitizers, about 35 s.
import Foundation

private let fuzzTarget: (UnsafePointer<UInt8>, Int) -> CInt = {
    switch ProcessInfo.processInfo.environment["TETHER_FUZZ_TARGET"] {
    case "decoder"?: return decoderFuzzTestOneInput
    case "handshake"?: return handshakeFuzzTestOneInput
    case "inflate"?: return inflateFuzzTestOneInput
    case let other:
        fatalError("TETHER_FUZZ_TARGET must be decoder, handshake or inflate, not \(other ?? "unset")")
    }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func tetherFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzTarget(data, size)
}
