/// The storage a large frame's payload was received into, of its own (not the decoder's buffer): a receiver of the
/// message may keep it instead of copying the payload out (`BorrowedMessage.storage`), which saves a pass over every
/// large message received. The decoder writes it while the frame arrives, lends it once whole and then forgets it;
/// whoever keeps a reference keeps the bytes, which nobody writes any more.
public final class PayloadStorage: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `bytes` is written only by the one decoder that made it, before the message
    // is lent (the decoder is a value used by one thread at a time); once lent it is only read, by any thread, until
    // the last reference goes and `deinit` frees it.

    /// The payload, unmasked: exactly the frame's payload length.
    public let bytes: UnsafeMutableRawBufferPointer

    init(count: Int) {
        self.bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
    }

    deinit {
        self.bytes.deallocate()
    }
}
