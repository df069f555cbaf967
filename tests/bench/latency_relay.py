#!/usr/bin/env python3
"""TCP relay on 127.0.0.1 that adds a fixed one-way delay in each direction (a delay line).

    latency_relay.py --listen 0 --target 2222 --rtt-ms 50

Every chunk read from one side is stamped with "due = now + rtt/2" and put on a queue; a
separate sender task writes it to the other side once it is due. Reading never waits for the
delay, so throughput is not capped by it (only the added latency changes), and order is kept
because each direction has one FIFO queue and one sender. Prints "ready <port>" once listening;
exits on SIGTERM/SIGINT. Only loopback addresses are used.
"""
import argparse
import asyncio
import os
import signal
import sys

CHUNK = 256 * 1024
QUEUE_CHUNKS = 512  # back-pressure: at most ~128 MiB buffered per direction


async def pump(reader, writer, delay, loop):
    queue = asyncio.Queue(maxsize=QUEUE_CHUNKS)

    async def receive():
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                await queue.put((loop.time() + delay, data))
        except (ConnectionError, OSError):
            pass
        await queue.put((loop.time() + delay, None))

    async def send():
        broken = False  # after a write error, keep draining so receive() never blocks
        while True:
            due, data = await queue.get()
            if broken:
                if data is None:
                    break
                continue
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                if data is None:
                    if writer.can_write_eof():
                        writer.write_eof()
                    break
                writer.write(data)
                await writer.drain()
            except (ConnectionError, OSError):
                broken = True

    await asyncio.gather(receive(), send())


async def handle(client_reader, client_writer, target, delay):
    loop = asyncio.get_running_loop()
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target)
    except OSError as e:
        print(f"relay: cannot connect to 127.0.0.1:{target}: {e}", file=sys.stderr)
        client_writer.close()
        return
    try:
        await asyncio.gather(
            pump(client_reader, server_writer, delay, loop),
            pump(server_reader, client_writer, delay, loop),
        )
    except asyncio.CancelledError:
        pass  # shutting down
    finally:
        for w in (client_writer, server_writer):
            try:
                w.close()
            except Exception:
                pass


async def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    ap.add_argument("--target", type=int, required=True, help="port on 127.0.0.1 to forward to")
    ap.add_argument("--rtt-ms", type=float, default=0.0, help="added round-trip time in ms")
    args = ap.parse_args()
    delay = args.rtt_ms / 2000.0

    server = await asyncio.start_server(
        lambda r, w: handle(r, w, args.target, delay), "127.0.0.1", args.listen)
    port = server.sockets[0].getsockname()[1]
    print(f"ready {port}", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    # Open connections are simply dropped: exit now rather than cancel every pump task.
    server.close()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    asyncio.run(main())
