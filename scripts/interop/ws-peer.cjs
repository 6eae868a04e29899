// A second third-party WebSocket peer for Tether's interop tests, built on Node's `ws` (Tests/TetherTests/Interop).
//
//   node ws-peer.cjs serve [--deflate] [--no-context-takeover]
//       Listens on 127.0.0.1, port 0, and prints the port as the first line of stdout. Every connection is first
//       sent what was negotiated (the Sec-WebSocket-Extensions answer, or "none"), then every text or binary
//       message is sent back as it came. --deflate accepts permessage-deflate (every message compressed, threshold
//       0), --no-context-takeover asks for it both ways. Stops at the end of stdin, or after 60 s.
//
//   node ws-peer.cjs client URL [--deflate] [--no-context-takeover] [--description-first] [--echo KIND:SIZE]...
//       Connects to URL (loopback only), offering permessage-deflate with --deflate; sends each --echo message
//       (KIND text or binary, SIZE bytes) and checks that the same comes back (--description-first: after reading the
//       first message as this script's server's description); closes with 1000. Prints one JSON
//       line: {"extensions": [names], "echoes": [{"kind", "size", "identical"}], "error": null} and exits (0, or 1
//       with "error" set). Gives up after 30 s.
//
// Neither mode listens on or connects to anything but loopback.
"use strict";
const { WebSocketServer, WebSocket } = require("ws");

const args = process.argv.slice(2);
const mode = args[0];
const deflate = args.includes("--deflate");
const noTakeover = args.includes("--no-context-takeover");
const deflateOptions = deflate
    ? { threshold: 0, serverNoContextTakeover: noTakeover, clientNoContextTakeover: noTakeover }
    : false;

// The same payloads as Tests/TetherTests/Interop/PythonPeer.swift's InteropPayload.
function textPayload(size) {
    const pattern = Buffer.from("tether ✓ héllo 🌍 ", "utf8");
    const bytes = Buffer.alloc(size, ".");
    let at = 0;
    while (at + pattern.length <= size) { pattern.copy(bytes, at); at += pattern.length; }
    return bytes.toString("utf8");
}
function binaryPayload(size) {
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; i++) bytes[i] = (i * 31 + (i >> 8)) & 0xff;
    return bytes;
}

if (mode === "serve") {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: deflateOptions,
                                         maxPayload: 16 << 20 });
    const answers = new WeakMap();
    server.on("headers", (headers, request) => {
        const answer = headers.find((line) => line.toLowerCase().startsWith("sec-websocket-extensions:"));
        answers.set(request, answer ? answer.slice(answer.indexOf(":") + 1).trim() : "none");
    });
    server.on("connection", (socket, request) => {
        socket.send(answers.get(request) || "none");
        socket.on("message", (data, isBinary) => socket.send(data, { binary: isBinary }));
    });
    server.on("listening", () => process.stdout.write(`${server.address().port}\n`));
    const stop = () => { server.clients.forEach((socket) => socket.terminate()); server.close(); process.exit(0); };
    process.stdin.on("end", stop);
    process.stdin.resume();
    setTimeout(stop, 60_000).unref();
} else if (mode === "client") {
    const url = new URL(args[1]);
    if (!["127.0.0.1", "[::1]", "localhost"].includes(url.hostname)) throw new Error("loopback only");
    const echoes = [];
    for (let i = 2; i < args.length; i++) {
        if (args[i] === "--echo") {
            const [kind, size] = args[++i].split(":");
            echoes.push({ kind, size: Number(size) });
        }
    }
    const report = { extensions: null, echoes: [], error: null };
    const finish = (error) => {
        report.error = error ? String(error) : null;
        process.stdout.write(JSON.stringify(report) + "\n");
        process.exit(error ? 1 : 0);
    };
    setTimeout(() => finish("timed out after 30 s"), 30_000).unref();
    const socket = new WebSocket(url, { perMessageDeflate: deflateOptions, maxPayload: 16 << 20 });
    socket.on("error", finish);
    socket.on("open", () => {
        // The names of the extensions the server accepted, as peer.py reports them.
        report.extensions = socket.extensions ? socket.extensions.split(",").map((e) => e.split(";")[0].trim()) : [];
        let index = 0;
        const sendNext = () => {
            if (index === echoes.length) { socket.close(1000, "done"); return; }
            const { kind, size } = echoes[index];
            socket.send(kind === "text" ? textPayload(size) : binaryPayload(size), { binary: kind !== "text" });
        };
        let skip = args.includes("--description-first");  // against this script's own server
        socket.on("message", (data, isBinary) => {
            if (skip) { skip = false; report.description = data.toString(); return; }
            const { kind, size } = echoes[index];
            const expected = kind === "text" ? Buffer.from(textPayload(size), "utf8") : binaryPayload(size);
            report.echoes.push({ kind, size, identical: isBinary === (kind !== "text") && expected.equals(data) });
            index += 1;
            sendNext();
        });
        sendNext();
    });
    socket.on("close", () => finish(report.echoes.length === echoes.length ? null : "closed before every echo"));
} else {
    process.stderr.write("usage: ws-peer.cjs serve|client ...\n");
    process.exit(2);
}
