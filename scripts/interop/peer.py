"""A third-party WebSocket peer for Tether's interop tests, built on Python's `websockets` (asyncio).

    peer.py serve [--lifetime SECONDS] [--tls-cert PEM --tls-key PEM] [--deflate [--no-context-takeover]]
                  [--record-dir DIR [--close-seed SEED]]
        Listens on 127.0.0.1, port 0 (over TLS with the given certificate chain and key: wss://), and prints the
        port as the first line of stdout. With --deflate it accepts permessage-deflate, with context takeover both
        ways unless --no-context-takeover. The request path picks what each connection gets:
          /echo                       every text or binary message is sent back as it came
          /deflate-echo               (with --deflate) first what permessage-deflate agreed, as the text
                                      "permessage-deflate no_context_takeover=OURS,THEIRS", then an echo
          /ping?every=MS&count=N      N pings, one every MS ms, each awaiting its pong; then the text
                                      message "pongs N" (or "pongs K, then no pong within 5 s")
          /close?code=N&reason=R      a close frame with that code and reason, at once
          /deaf                       reading stops: pings are never read, so never answered
          /record                     (with --record-dir) an echo that also records every message it reads, in
                                      order, in DIR/N.bin (N counts the connections from 1; each message is a
                                      kind byte, 0 text or 1 binary, its length in 4 bytes big-endian, then its
                                      payload), and prints "open N" when the connection opens and "end N" once it
                                      has ended and its file is complete. With --close-seed, connection N closes
                                      on its own after a number of messages drawn from SEED and N (or never), with
                                      a code drawn likewise: a server that closes while the client sends.
        Stops on end of stdin or after --lifetime seconds (default 120), whichever comes first.

    peer.py client URL [--echo KIND:SIZE]... [--ping N] [--await-pings N] [--await-close] [--subprotocol P]
        Connects to URL (a loopback address only), then in this order: sends each --echo message (KIND text or
        binary, SIZE bytes) and checks that the same message comes back; sends N pings and awaits each pong;
        reads until the server has sent N pings (each answered by websockets as it arrives); then either
        closes with 1000 "done" or, with --await-close, reads until the server closes. Prints one JSON line of
        what it saw and exits (0, or 1 with "error" set). Gives up after 30 s.

Neither mode ever listens on or connects to anything but loopback.
"""

import argparse
import asyncio
import ipaddress
import json
import random
import signal
import ssl
import sys
import urllib.parse

from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed
from websockets.extensions.permessage_deflate import (
    ClientPerMessageDeflateFactory,
    ServerPerMessageDeflateFactory,
)
from websockets.frames import Opcode
from websockets.protocol import State

# Tether's client accepts 16 MiB by default; the tests go up to 8 MiB.
MAX_SIZE = 16 << 20
PONG_WAIT_SECONDS = 5
DEAF_SECONDS = 30
CLIENT_SECONDS = 30


# Server mode


async def handle(websocket):
    url = urllib.parse.urlsplit(websocket.request.path)
    query = dict(urllib.parse.parse_qsl(url.query))
    if url.path == "/echo":
        async for message in websocket:
            await websocket.send(message)
    elif url.path == "/deflate-echo":
        # First what was negotiated, then an echo: "permessage-deflate takeover=local,remote" (or "none").
        described = [
            f"{extension.name} no_context_takeover={extension.local_no_context_takeover},"
            f"{extension.remote_no_context_takeover}"
            for extension in websocket.protocol.extensions
        ]
        await websocket.send(";".join(described) or "none")
        async for message in websocket:
            await websocket.send(message)
    elif url.path == "/ping":
        every, count = int(query["every"]) / 1000, int(query["count"])
        answered = 0
        try:
            for _ in range(count):
                await asyncio.sleep(every)
                pong = await websocket.ping()
                await asyncio.wait_for(pong, PONG_WAIT_SECONDS)
                answered += 1
            await websocket.send(f"pongs {answered}")
        except TimeoutError:
            await websocket.send(f"pongs {answered}, then no pong within {PONG_WAIT_SECONDS} s")
        await websocket.wait_closed()
    elif url.path == "/close":
        await websocket.close(int(query["code"]), query.get("reason", ""))
    elif url.path == "/record" and RECORDING["dir"]:
        await record(websocket)
    elif url.path == "/deaf":
        # websockets answers every ping it reads; a peer that stops reading never sees them. Nothing will end
        # this connection from our side (a paused transport does not notice the client leaving): drop it later.
        websocket.transport.pause_reading()
        try:
            await asyncio.wait_for(websocket.wait_closed(), DEAF_SECONDS)
        except TimeoutError:
            websocket.transport.abort()
    else:
        await websocket.close(1008, "unknown path")


RECORDING = {"dir": None, "close_seed": None, "connections": 0}


async def record(websocket):
    RECORDING["connections"] += 1
    index = RECORDING["connections"]
    print(f"open {index}", flush=True)
    close_after, code = None, 1000
    if RECORDING["close_seed"] is not None:
        draw = random.Random(RECORDING["close_seed"] * 1_000_003 + index)
        if draw.random() < 0.4:
            close_after, code = draw.randint(3, 40), draw.choice([1000, 1001, 1011, 4000])
    received = 0
    closing = None
    try:
        with open(f"{RECORDING['dir']}/{index}.bin", "wb") as out:
            try:
                async for message in websocket:
                    kind, payload = (0, message.encode()) if isinstance(message, str) else (1, message)
                    out.write(bytes([kind]) + len(payload).to_bytes(4, "big") + payload)
                    received += 1
                    if closing:
                        continue  # no echo after our close frame; what still arrives is read and recorded
                    try:
                        await websocket.send(message)
                    except ConnectionClosed:
                        pass  # the client closed: what it sent before its close frame is still read
                    if close_after is not None and received == close_after:
                        # Not awaited here: the closing handshake completes while this loop goes on reading
                        # (websockets stops reading the socket while its queue of unread messages is full).
                        closing = asyncio.ensure_future(websocket.close(code, "randomized"))
            except ConnectionClosed:
                pass
            if closing:
                await closing
    finally:
        print(f"end {index}", flush=True)


def stdin_closed():
    """A future that completes at the end of stdin (the test process went away), or never for a stdin that
    cannot be watched (such as /dev/null)."""
    loop = asyncio.get_running_loop()
    closed = loop.create_future()

    def readable():
        if not sys.stdin.buffer.raw.read(4096):
            loop.remove_reader(sys.stdin.fileno())
            closed.set_result(None)

    try:
        loop.add_reader(sys.stdin.fileno(), readable)
    except (PermissionError, OSError):
        pass
    return closed


def deflate_factories(enabled, no_context_takeover, factory):
    if not enabled:
        return None
    return [factory(server_no_context_takeover=no_context_takeover, client_no_context_takeover=no_context_takeover)]


async def run_server(
    lifetime, tls_cert=None, tls_key=None, deflate=False, no_context_takeover=False, record_dir=None, close_seed=None
):
    RECORDING["dir"], RECORDING["close_seed"] = record_dir, close_seed
    context = None
    if tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls_cert, tls_key)
    # No keepalive pings of our own and no compression unless --deflate: only what a path asks for goes on the wire.
    extensions = deflate_factories(deflate, no_context_takeover, ServerPerMessageDeflateFactory)
    async with serve(
        handle, "127.0.0.1", 0, max_size=MAX_SIZE, ping_interval=None, compression=None, extensions=extensions,
        ssl=context
    ) as server:
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        try:
            await asyncio.wait_for(stdin_closed(), lifetime)
        except TimeoutError:
            pass


# Client mode


class PingCountingConnection(ClientConnection):
    """Counts the server's pings. websockets reads (and answers) them whether or not anyone calls recv();
    by the time a ping gets here, its pong has been handed to the transport."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pings_received = 0
        self.ping_or_end = asyncio.Event()

    def process_event(self, event):
        if getattr(event, "opcode", None) is Opcode.PING:
            self.pings_received += 1
            self.ping_or_end.set()
        super().process_event(event)

    def connection_lost(self, exc):
        super().connection_lost(exc)
        self.ping_or_end.set()


def payload(kind, size):
    if kind == "text":
        pattern = "tether ✓ héllo 🌍 "
        text = (pattern * (size // len(pattern.encode()) + 1)).encode()[:size]
        # Cut back to a character boundary, then pad with ASCII to the exact size.
        text = text.decode(errors="ignore")
        return text + "." * (size - len(text.encode()))
    return random.Random(size).randbytes(size)


def require_loopback(url):
    host = urllib.parse.urlsplit(url).hostname
    if host == "localhost":
        return
    if host is None or not ipaddress.ip_address(host).is_loopback:
        raise SystemExit(f"peer.py connects to loopback addresses only, not {host!r}")


async def exchange(arguments, report):
    subprotocols = [arguments.subprotocol] if arguments.subprotocol else None
    # websockets compresses by default; --no-context-takeover offers deflate asking both sides to reset per message.
    extensions = deflate_factories(arguments.no_context_takeover, True, ClientPerMessageDeflateFactory)
    async with connect(
        arguments.url,
        subprotocols=subprotocols,
        **({"compression": None, "extensions": extensions} if extensions else {}),
        max_size=MAX_SIZE,
        ping_interval=None,
        create_connection=PingCountingConnection,
    ) as websocket:
        report["subprotocol"] = websocket.subprotocol
        report["extensions"] = [extension.name for extension in websocket.protocol.extensions]
        report["echoes"] = []
        for item in arguments.echo:
            kind, size = item.split(":")
            message = payload(kind, int(size))
            await websocket.send(message)
            echoed = await websocket.recv()
            report["echoes"].append(
                {"kind": kind, "size": int(size), "identical": type(echoed) is type(message) and echoed == message}
            )
        report["pongs"] = 0
        for _ in range(arguments.ping):
            await asyncio.wait_for(await websocket.ping(), PONG_WAIT_SECONDS)
            report["pongs"] += 1
        while websocket.pings_received < arguments.await_pings:
            if websocket.state is State.CLOSED:
                raise RuntimeError(f"closed after {websocket.pings_received} pings")
            websocket.ping_or_end.clear()
            await websocket.ping_or_end.wait()
        report["pings_answered"] = websocket.pings_received
        if arguments.await_close:
            try:
                while True:
                    await websocket.recv()
            except ConnectionClosed as closed:
                report["close"] = {"code": closed.rcvd.code, "reason": closed.rcvd.reason} if closed.rcvd else None
        else:
            await websocket.close(1000, "done")


async def run_client(arguments):
    require_loopback(arguments.url)
    report = {"error": None}
    try:
        await asyncio.wait_for(exchange(arguments, report), CLIENT_SECONDS)
    except Exception as error:  # anything at all goes into the one report line
        report["error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(report), flush=True)
    return 0 if report["error"] is None else 1


def main():
    # A parent may start us with signals blocked (Foundation's Process on Linux passes its thread's mask on):
    # unblock the ones that must end us.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True)
    server = modes.add_parser("serve")
    server.add_argument("--lifetime", type=float, default=120)
    server.add_argument("--tls-cert", metavar="PEM")
    server.add_argument("--tls-key", metavar="PEM")
    server.add_argument("--deflate", action="store_true")
    server.add_argument("--no-context-takeover", action="store_true")
    server.add_argument("--record-dir", metavar="DIR")
    server.add_argument("--close-seed", type=int, metavar="SEED")
    client = modes.add_parser("client")
    client.add_argument("url")
    client.add_argument("--echo", action="append", default=[], metavar="KIND:SIZE")
    client.add_argument("--ping", type=int, default=0, metavar="N")
    client.add_argument("--await-pings", type=int, default=0, metavar="N")
    client.add_argument("--await-close", action="store_true")
    client.add_argument("--subprotocol")
    client.add_argument("--no-context-takeover", action="store_true")
    arguments = parser.parse_args()
    if arguments.mode == "serve":
        if bool(arguments.tls_cert) != bool(arguments.tls_key):
            parser.error("--tls-cert and --tls-key go together")
        asyncio.run(run_server(
            arguments.lifetime, arguments.tls_cert, arguments.tls_key, arguments.deflate,
            arguments.no_context_takeover, arguments.record_dir, arguments.close_seed))
        return 0
    return asyncio.run(run_client(arguments))


if __name__ == "__main__":
    sys.exit(main())
