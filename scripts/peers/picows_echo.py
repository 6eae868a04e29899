"""picows's side of scripts/bench-peers.sh: the echo server every client is measured against, and picows's client.

    python picows_echo.py serve [CERT KEY]  listens on 127.0.0.1 (any port), prints `picows.serve_url URL` once it
                                            listens, then echoes until SIGTERM/SIGINT or until standard input ends;
                                            with a certificate chain and key (PEM files), over TLS (a wss:// URL)
    python picows_echo.py client URL SECONDS [CA]   (CA: a PEM file trusted for a wss:// URL)
    python picows_echo.py count URL ROUND_TRIPS     exactly ROUND_TRIPS 64-byte round trips, no warm-up and no 1 MiB
                                                    run (what scripts/bench-counts.sh counts system calls and
                                                    instructions over); prints picows.rtt_64b_per_s only

The client prints the figures `tether-bench echo --url` prints, measured the same way:
    picows.rtt_64b_per_s   sequential 64-byte binary round trips per second after a warm-up of 2,000 round trips
                           or 1 s, whichever ends first
    picows.mbps_1m         1 MiB binary messages echoed one at a time after a warm-up of 20 (or 1 s); payload MB/s
                           (10^6 bytes) in one direction
with tether-bench's payloads (byte i is i*7 and i*31, truncated), each for SECONDS on one connection.

Both sides are written the way picows is meant to be used for speed: everything happens in `on_ws_frame`, the
callback that hands over a parsed frame on the event loop's thread, with no task or future per message; the client
sends its next message from there. No compression (picows has none), no auto-ping.
"""

import asyncio
import os
import signal
import ssl
import sys
import time

from picows import WSListener, WSMsgType, WSTransport, WSFrame, ws_connect, ws_create_server

# tether-bench echoes messages of up to 1 MiB; picows's default frame limit (10 MiB) already covers them, but say so.
MAX_FRAME = 16 * 1024 * 1024


class EchoServerListener(WSListener):
    """Echoes every data frame as it arrives, keeping its opcode and FIN bit, so a fragmented message comes back
    fragmented the same way; answers a close with a close."""

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        if frame.msg_type == WSMsgType.CLOSE:
            transport.send_close(frame.get_close_code(), frame.get_close_message())
            transport.disconnect()
        elif frame.msg_type in (WSMsgType.BINARY, WSMsgType.TEXT, WSMsgType.CONTINUATION):
            transport.send(frame.msg_type, frame.get_payload_as_memoryview(), fin=frame.fin)
        # PING is answered by picows itself (enable_auto_pong); PONG needs nothing.


async def serve(certificate: str | None = None, key: str | None = None) -> None:
    loop = asyncio.get_running_loop()
    context = None
    if certificate is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certificate, key)
    # picows hands its keyword arguments it does not know to `loop.create_server`.
    server = await ws_create_server(lambda _request: EchoServerListener(), "127.0.0.1", 0,
                                    max_frame_size=MAX_FRAME, ssl=context)
    port = server.sockets[0].getsockname()[1]
    scheme = "ws" if context is None else "wss"
    print(f"picows.serve_url {scheme}://127.0.0.1:{port}/", flush=True)
    stop = loop.create_future()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, lambda: stop.done() or stop.set_result(None))
    # A parent's pipe closes when it exits, so the server never outlives the script.
    loop.add_reader(sys.stdin.fileno(), lambda: os.read(sys.stdin.fileno(), 4096) or stop.done() or stop.set_result(None))
    await stop
    server.close()


class EchoClientListener(WSListener):
    """Runs one measurement at a time from `on_ws_frame`: each echo received sends the next message."""

    def __init__(self) -> None:
        self.transport: WSTransport | None = None
        self.done: asyncio.Future | None = None
        self.failure: str | None = None

    def on_ws_connected(self, transport: WSTransport) -> None:
        self.transport = transport

    def measure(self, message: bytes, warm_up: int, seconds: float, exact: int | None = None) -> asyncio.Future:
        """Starts `warm_up` round trips (at most 1 s of them), then as many as fit in `seconds`; or, with `exact`,
        exactly that many and no warm-up. The future gets (count, elapsed)."""
        self.message = message
        self.warm_up_left = 0 if exact else warm_up
        self.warm_up_end = time.perf_counter() + 1.0
        self.seconds = seconds
        self.exact = exact
        self.count = 0
        self.start = time.perf_counter()
        self.end = self.start + seconds
        self.done = asyncio.get_running_loop().create_future()
        self.transport.send(WSMsgType.BINARY, message)
        return self.done

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        if frame.msg_type != WSMsgType.BINARY or not frame.fin or frame.payload_size != len(self.message):
            self.fail(f"not an echo: {frame.msg_type.name} fin={frame.fin} {frame.payload_size} B "
                      f"for {len(self.message)} B")
            return
        now = time.perf_counter()
        if self.warm_up_left > 0:
            self.warm_up_left -= 1
            if self.warm_up_left == 0 or now >= self.warm_up_end:
                self.warm_up_left = 0
                self.start = time.perf_counter()
                self.end = self.start + self.seconds
        else:
            self.count += 1
            finished = self.count == self.exact if self.exact else now >= self.end
            if finished:
                self.done.set_result((self.count, now - self.start))
                return
        transport.send(WSMsgType.BINARY, self.message)

    def fail(self, reason: str) -> None:
        if self.done is not None and not self.done.done():
            self.done.set_exception(RuntimeError(reason))

    def on_ws_disconnected(self, transport: WSTransport) -> None:
        self.fail("the server disconnected")


async def client(url: str, seconds: float, authority: str | None = None) -> None:
    context = ssl.create_default_context(cafile=authority) if url.startswith("wss:") else None
    transport, listener = await ws_connect(EchoClientListener, url, ssl_context=context, max_frame_size=MAX_FRAME)
    small = bytes(i * 7 % 256 for i in range(64))
    count, elapsed = await listener.measure(small, 2000, seconds)
    print(f"picows.rtt_64b_per_s {count / elapsed:.0f}", flush=True)
    large = bytes(i * 31 % 256 for i in range(1 << 20))
    count, elapsed = await listener.measure(large, 20, seconds)
    print(f"picows.mbps_1m {count * len(large) / elapsed / 1e6:.2f}", flush=True)
    transport.send_close()
    transport.disconnect()
    await transport.wait_disconnected()


async def count(url: str, round_trips: int) -> None:
    transport, listener = await ws_connect(EchoClientListener, url, max_frame_size=MAX_FRAME)
    small = bytes(i * 7 % 256 for i in range(64))
    done, elapsed = await listener.measure(small, 0, 0.0, exact=round_trips)
    print(f"picows.rtt_64b_per_s {done / elapsed:.0f}", flush=True)
    transport.send_close()
    transport.disconnect()
    await transport.wait_disconnected()


def main() -> None:
    if sys.argv[1:2] == ["serve"] and len(sys.argv) in (2, 4):
        asyncio.run(serve(*sys.argv[2:4]))
    elif sys.argv[1:2] == ["client"] and len(sys.argv) in (4, 5):
        asyncio.run(client(sys.argv[2], float(sys.argv[3]), *sys.argv[4:5]))
    elif sys.argv[1:2] == ["count"] and len(sys.argv) == 4 and int(sys.argv[3]) > 0:
        asyncio.run(count(sys.argv[2], int(sys.argv[3])))
    else:
        raise SystemExit("usage: picows_echo.py serve [CERT KEY] | client URL SECONDS [CA] | count URL ROUND_TRIPS")


if __name__ == "__main__":
    main()
