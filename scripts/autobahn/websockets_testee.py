#!/usr/bin/env python3
"""A reference testee for the Autobahn fuzzingserver, written with Python's `websockets`, so that Tether's counts can
be read beside a widely used implementation's from the same run (scripts/autobahn.sh --with-python).

Usage: websockets_testee.py URL AGENT   (for example ws://127.0.0.1:9001 python-websockets)
"""
import asyncio
import sys
import urllib.parse

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


async def echo(url):
    # Defaults but for the size limit: Autobahn sends messages of up to 16 MiB.
    try:
        async with connect(url, max_size=None, compression=None) as websocket:
            async for message in websocket:
                await websocket.send(message)
    except (ConnectionClosed, OSError):
        pass  # the case's outcome is the server's to judge


async def main(base, agent):
    async with connect(f"{base}/getCaseCount") as websocket:
        count = int(await websocket.recv())
    quoted = urllib.parse.quote(agent)
    for case in range(1, count + 1):
        await asyncio.wait_for(echo(f"{base}/runCase?case={case}&agent={quoted}"), timeout=60)
    async with connect(f"{base}/updateReports?agent={quoted}") as websocket:
        await websocket.wait_closed()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
