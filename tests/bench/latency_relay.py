#!/usr/bin/env python3
"""TCP relay on 127.0.0.1 that adds a fixed one-way delay in each direction (a delay line),
optionally behind a bandwidth cap.

    latency_relay.py --listen 0 --target 2222 --rtt-ms 50 [--rate-mbit 100]

Every chunk read from one side is stamped with "due = now + rtt/2" and put on a queue; a
separate sender task writes it to the other side once it is due. Reading never waits for the
delay, so without --rate-mbit throughput is not capped by it (only the added latency changes),
and order is kept because each direction has one FIFO queue and one sender.

--rate-mbit N (per direction; 0, the default, is unlimited) puts a bottleneck link of N Mbit/s
in front of the delay line: a chunk is cut into 16 KiB slices, each slice leaves the link
len/rate after the previous one (or after it arrived, if the link was idle) and is due rtt/2
after that. The relay then holds at most rate * (rtt/2 + 100 ms) bytes per direction (at
least 256 KiB): the data on the wire plus a 100 ms bottleneck buffer; when that is full it
stops reading, so the sender's TCP window backs up as it would at a real bottleneck.

Prints "ready <port>" once listening; exits on SIGTERM/SIGINT. Only loopback addresses are used.
"""
import argparse
import asyncio
import os
import signal
import sys

CHUNK = 256 * 1024
QUEUE_CHUNKS = 512  # back-pressure: at most ~128 MiB buffered per direction
SLICE = 16 * 1024  # pacing unit under --rate-mbit
BUFFER_S = 0.1  # bottleneck buffer under --rate-mbit, in seconds of the rate


async def pump(reader, writer, delay, rate, loop):
    """Copies reader to writer, each byte delivered `delay` s late; `rate` in bytes/s (0: no cap)."""
    queue = asyncio.Queue(maxsize=0 if rate else QUEUE_CHUNKS)
    link_free = 0.0  # when the bottleneck has sent everything queued so far
    held = 0  # bytes queued and not yet written (rate-capped only)
    limit = max(256 * 1024, int(rate * (delay + BUFFER_S)))
    space = asyncio.Event()
    space.set()

    async def receive():
        nonlocal link_free, held
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                if not rate:
                    await queue.put((loop.time() + delay, data))
                    continue
                now = loop.time()
                for off in range(0, len(data), SLICE):
                    piece = data[off:off + SLICE]
                    link_free = max(now, link_free) + len(piece) / rate
                    queue.put_nowait((link_free + delay, piece))
                held += len(data)
                if held > limit:
                    space.clear()
                    await space.wait()
        except (ConnectionError, OSError):
            pass
        await queue.put((max(loop.time(), link_free) + delay, None))

    async def send():
        nonlocal held
        broken = False  # after a write error, keep draining so receive() never blocks
        while True:
            due, data = await queue.get()
            if broken:
                if data is None:
                    break
                if rate:
                    held -= len(data)
                    space.set()
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
            finally:
                if rate and data is not None:
                    held -= len(data)
                    if held <= limit:
                        space.set()

    await asyncio.gather(receive(), send())


async def handle(client_reader, client_writer, target, delay, rate):
    loop = asyncio.get_running_loop()
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target)
    except OSError as e:
        print(f"relay: cannot connect to 127.0.0.1:{target}: {e}", file=sys.stderr)
        client_writer.close()
        return
    try:
        await asyncio.gather(
            pump(client_reader, server_writer, delay, rate, loop),
            pump(server_reader, client_writer, delay, rate, loop),
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
    ap.add_argument("--rate-mbit", type=float, default=0.0,
                    help="bandwidth cap per direction in Mbit/s (10^6 bit/s; 0: unlimited)")
    args = ap.parse_args()
    if args.rate_mbit < 0 or args.rtt_ms < 0:
        ap.error("--rtt-ms and --rate-mbit must not be negative")
    delay = args.rtt_ms / 2000.0
    rate = args.rate_mbit * 1e6 / 8

    server = await asyncio.start_server(
        lambda r, w: handle(r, w, args.target, delay, rate), "127.0.0.1", args.listen)
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
