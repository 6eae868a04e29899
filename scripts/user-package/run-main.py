#!/usr/bin/env python3
"""Runs each `main` example of the pages (built by scripts/user-package.sh) as a new user does: against
`tether serve --port 8080`, which echoes, built from this checkout (docs/testing.md, "The examples in these pages").

    run-main.py PACKAGE SCRATCH TETHER

PACKAGE is the outside package examples.py wrote (its mains.json lists the programs and what each prints), SCRATCH
its build directory, TETHER the `tether` executable. Each program must exit 0 within BOUND seconds and print the
lines of the page's ```text block after it, in that order (other lines may come between). If port 8080 is taken,
it says so, starts the server on a free port instead and rewrites only the port of `ws://127.0.0.1:8080/` in the
programs (then rebuilds them), saying that it did.
"""

import json
import pathlib
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time

PORT = 8080
URL = f"ws://127.0.0.1:{PORT}/"
BOUND = 60  # seconds for one program: its own wait for open is 10 s; the echo takes milliseconds
LISTENING = re.compile(r"^listening on ws://127\.0\.0\.1:(\d+)/")


class Failure(Exception):
    pass


class Server:
    """`tether serve`, its output read on threads of its own (so that it never blocks on a full pipe)."""

    def __init__(self, tether, port):
        arguments = [tether, "serve"] + (["--port", str(port)] if port else [])
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.output = []
        self.errors = []
        self.port = self.listening()
        if self.port is not None:
            for stream, lines in ((self.process.stdout, self.output), (self.process.stderr, self.errors)):
                threading.Thread(target=self.drain, args=(stream, lines), daemon=True).start()

    def listening(self):
        """The port of the first line, `listening on ws://127.0.0.1:PORT/ (...)`; None if the server ends first."""
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=30):
            self.stop()
            raise Failure("tether serve printed nothing within 30 s")
        line = self.process.stdout.readline()
        if not line:
            return None
        self.output.append(line)
        found = LISTENING.match(line)
        if not found:
            self.stop()
            raise Failure(f"tether serve's first line is not where it listens: {line.strip()}")
        return int(found.group(1))

    @staticmethod
    def drain(stream, lines):
        for line in stream:
            lines.append(line)

    def failure(self):
        """Why a server that never listened ended."""
        errors = self.process.stderr.read().strip()
        status = self.process.wait(timeout=30)
        return f"exit status {status}: {errors or '(nothing on stderr)'}"

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # serve ends within a second
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(tether):
    """The server on port 8080, or, if that port is taken, on a free one (said so)."""
    server = Server(tether, PORT)
    if server.port is not None:
        return server
    why = server.failure()
    if "address already in use" not in why:
        raise Failure(f"tether serve --port {PORT} did not start: {why}")
    print(f"user-package: port {PORT} is taken ({why}); the server listens on a free port instead")
    server = Server(tether, None)
    if server.port is None:
        raise Failure(f"tether serve did not start on a free port: {server.failure()}")
    return server


def use_port(package, scratch, mains, port):
    """Rewrites only the port of the programs' URL, then rebuilds them."""
    for program in mains:
        source = package / program["source"]
        text = source.read_text()
        source.write_text(text.replace(URL, f"ws://127.0.0.1:{port}/"))
        print(f"user-package: {program['where']}: the program connects to port {port} instead of {PORT} (rewritten)")
        build = subprocess.run(
            ["swift", "build", "--package-path", str(package), "--scratch-path", str(scratch),
             "--product", program["target"]], capture_output=True, text=True)
        if build.returncode != 0:
            raise Failure(f"{program['where']}: the program does not build with the port rewritten:\n"
                          + build.stdout[-4000:] + build.stderr[-4000:])


def contains_in_order(output, expected):
    """Whether every expected line is a line of `output`, in that order; the first one missing otherwise."""
    lines = iter(line.rstrip() for line in output.splitlines())
    for wanted in expected:
        if not any(line == wanted.rstrip() for line in lines):
            return wanted
    return None


def shortened(text, keep=12):
    """The first lines of a program's stderr: a crash's backtrace says what matters in its first lines."""
    lines = text.splitlines(keepends=True)
    if len(lines) <= keep:
        return text
    return "".join(lines[:keep]) + f"... ({len(lines) - keep} more lines)\n"


def run(program, binary, server):
    started = time.monotonic()
    # Line by line (stdbuf), so that a program stopped at the bound has shown how far it got.
    command = (["stdbuf", "-oL"] if shutil.which("stdbuf") else []) + [str(binary)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=BOUND)
    except subprocess.TimeoutExpired as timeout:
        shown = timeout.stdout.decode(errors="replace") if isinstance(timeout.stdout, bytes) \
            else (timeout.stdout or "")
        raise Failure(f"{program['where']}: the program did not exit within {BOUND} s; it printed:\n{shown}"
                      f"server:\n{''.join(server.output)}")
    elapsed = time.monotonic() - started
    output = result.stdout
    told = f"stdout:\n{output}stderr:\n{shortened(result.stderr)}server:\n{''.join(server.output)}"
    if result.returncode != 0:
        raise Failure(f"{program['where']}: the program exited with status {result.returncode} "
                      f"(a signal, if negative) after {elapsed:.1f} s\n{told}")
    missing = contains_in_order(output, program["prints"])
    if missing is not None:
        raise Failure(f"{program['where']}: the program did not print `{missing}` (after the page's lines before "
                      f"it)\n{told}")
    print(f"user-package: {program['where']} ran against tether serve on port {server.port}: exit 0 in "
          f"{elapsed:.1f} s, printing what the page shows:")
    for line in output.splitlines():
        print(f"    {line}")


def main():
    package, scratch, tether = (pathlib.Path(argument) for argument in sys.argv[1:4])
    mains = json.loads((package / "mains.json").read_text())
    if not mains:
        return
    for program in mains:
        if URL not in (package / program["source"]).read_text():
            raise Failure(f"{program['where']}: the program does not connect to {URL}, the server the page names")
    bin_path = subprocess.run(
        ["swift", "build", "--package-path", str(package), "--scratch-path", str(scratch), "--show-bin-path"],
        capture_output=True, text=True, check=True).stdout.strip()
    # A TERM (timeout(1), CI's end) stops the server too.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(143))
    server = start_server(str(tether))
    try:
        if server.port != PORT:
            use_port(package, scratch, mains, server.port)
        for program in mains:
            run(program, pathlib.Path(bin_path) / program["target"], server)
    finally:
        server.stop()


if __name__ == "__main__":
    try:
        main()
    except Failure as failure:
        print(f"error: {failure}", file=sys.stderr)
        sys.exit(1)
