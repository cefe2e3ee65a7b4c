#!/usr/bin/python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A lossy UDP relay for SPEAD streams, for tests: this kernel has no netem.

Listens on 127.0.0.1:PORT and forwards every datagram to --to HOST:PORT, dropping whole
heaps, dropping single packets, duplicating packets and reordering datagrams by a
seeded, reproducible pattern. Standard library only; run with /usr/bin/python3.

With --to given N times, the relay also spreads one stream over N endpoints, as a
sender spreads a fast stream over several multicast groups: every packet of heap cnt
goes to destination cnt mod N (--protect-cnts heaps too); control heaps go to all of
them; datagrams that are not SPEAD go to the first.

    spead_relay.py --listen 0 --to 127.0.0.1:7148 --seed 3 --drop-heaps 0.05 \\
        --drop-packets 0.01 --duplicate-packets 0.01 --reorder-window 16 \\
        --timestamp-item 0x1600 --report relay.json --idle-exit 2

The first line on stdout is the port it listens on (flushed), so a test can start it
with --listen 0 and read where to send.

The decisions are pure functions of the seed and the packet's SPEAD identity, so a test
can predict them (see decide()):
  a heap is dropped whole         iff u(seed, "heap", cnt)               < --drop-heaps
  a single packet is dropped      iff u(seed, "packet", cnt, offset)     < --drop-packets
  a packet is sent twice          iff u(seed, "duplicate", cnt, offset)  < --duplicate-packets
where u(...) = first 8 bytes of SHA-256 of the fields joined by ":" (decimal integers),
big-endian, divided by 2**64, and offset is the packet's HEAP_OFFSET (item 3). A whole-
heap drop takes precedence over a packet drop, and a dropped packet is not duplicated.

Protected heaps are forwarded untouched, never dropped, duplicated or reordered: the cnts
given with --protect-cnts and, unless --no-protect-control, the flavour's control heaps
(cnt in the top half of the heap address range, cnt >= 2**39 for SPEAD-64-40: gr-spead's
sink counts descriptor and stop heap cnts down from the top). A protected datagram first
releases the held ones, so descriptors stay before the data and a stop heap after it.

Reordering (--reorder-window N > 0) holds datagrams in blocks of N; a full block is
released in an order shuffled by random.Random(seed), so no datagram moves by N or more
places. A partial block is released (shuffled) when nothing arrived for --hold-seconds,
before a protected datagram and at exit. Unlike the drops, the order depends on how the
datagrams arrived, not only on the seed.

--hold-start SECONDS holds the datagrams of unprotected heaps that arrive in the first
SECONDS after the first datagram, and then lets them go on in arrival order (through the
reordering, when asked): protected first heaps then surely reach a receiver first, even
one that reads several endpoints on several threads and takes the first heap it meets
as the start of its stream.

--stop-delay SECONDS holds a stop heap (STREAM_CTRL, item 6, = 2) that long before
forwarding it, while other datagrams flow on: with several destinations, a receiver
then meets the stop only after every destination's data.

Datagrams that are not SPEAD (bad magic, version, widths or too short) or carry no
immediate HEAP_CNT are forwarded unaltered and counted.

At exit (--idle-exit seconds without a datagram after the first, --max-seconds, SIGTERM
or SIGINT) the held datagrams are flushed and --report FILE gets a JSON account of what
was done: datagrams in and out, heaps dropped whole, heaps that lost packets, duplicates
made, with each heap's immediate items (and its --timestamp-item value) and the number
of its packets the relay saw (packets_seen: a heap whose every packet was dropped one by
one arrives as nothing at all).
"""

import argparse
import hashlib
import json
import os
import random
import select
import signal
import socket
import struct
import sys
import time

MAGIC = 0x53
VERSION = 4
HEAP_CNT_ID = 0x01
HEAP_OFFSET_ID = 0x03
STREAM_CTRL_ID = 0x06
STREAM_CTRL_STOP = 2
SPECIAL_IDS = (0x01, 0x02, 0x03, 0x04)
RCVBUF_BYTES = 8 << 20
BATCH = 256            # datagrams read per wake-up before the clocks are looked at
RECENT_HEAPS = 65536   # heaps whose immediate items are remembered for the report
POLL_SECONDS = 0.01
_U64 = struct.Struct(">Q")
_HEADER = struct.Struct(">BBBBHH")


def uniform(seed, kind, cnt, offset=None):
    """A number in [0, 1) that depends only on its arguments: SHA-256 of
    "seed:kind:cnt" or "seed:kind:cnt:offset" (decimal), first 8 bytes, / 2**64."""
    key = f"{seed}:{kind}:{cnt}" if offset is None else f"{seed}:{kind}:{cnt}:{offset}"
    return _U64.unpack_from(hashlib.sha256(key.encode()).digest())[0] / 2.0**64


def decide(seed, fraction, kind, cnt, offset=None):
    """True when the relay alters this heap/packet; fraction 0 never, 1 always."""
    return fraction > 0 and uniform(seed, kind, cnt, offset) < fraction


def parse(datagram):
    """(address_bits, heap_cnt or None, heap_offset, immediates) of a SPEAD packet, or
    None when it is not one. immediates: {item id: value} of the non-special immediate
    items."""
    if len(datagram) < 8:
        return None
    magic, version, id_bytes, address_bytes, _, n_items = _HEADER.unpack_from(datagram)
    if (magic != MAGIC or version != VERSION or id_bytes + address_bytes != 8
            or not 1 <= address_bytes <= 7 or len(datagram) < 8 + 8 * n_items):
        return None
    bits = 8 * address_bytes
    value_mask = (1 << bits) - 1
    id_mask = (1 << (63 - bits)) - 1
    cnt = None
    offset = 0
    immediates = {}
    for pointer in struct.unpack_from(f">{n_items}Q", datagram, 8):
        if not pointer >> 63:
            continue  # addressed items: only immediates matter here
        item_id = (pointer >> bits) & id_mask
        value = pointer & value_mask
        if item_id == HEAP_CNT_ID:
            cnt = value
        elif item_id == HEAP_OFFSET_ID:
            offset = value
        elif item_id not in SPECIAL_IDS:
            immediates[item_id] = value
    return bits, cnt, offset, immediates


def host_port(text):
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected HOST:PORT")
    return host or "127.0.0.1", int(port)


def fraction(text):
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: a fraction must be in [0, 1]")
    return value


def cnt_list(text):
    try:
        return {int(x, 0) for x in text.split(",") if x.strip()}
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected cnts like 1,2,0x10")


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Lossy UDP relay for SPEAD: seeded drops of heaps and packets, "
                    "duplicates and reordering (tests only).")
    p.add_argument("--listen", type=int, default=0, metavar="PORT",
                   help="UDP port on --listen-host; 0 = a free one (printed)")
    p.add_argument("--listen-host", default="127.0.0.1")
    p.add_argument("--to", type=host_port, required=True, metavar="HOST:PORT",
                   action="append",
                   help="destination; several: heap cnt mod N picks one")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--drop-heaps", type=fraction, default=0.0, metavar="FRACTION",
                   help="fraction of heaps whose every packet is dropped")
    p.add_argument("--drop-packets", type=fraction, default=0.0, metavar="FRACTION",
                   help="fraction of packets dropped one by one")
    p.add_argument("--duplicate-packets", type=fraction, default=0.0, metavar="FRACTION",
                   help="fraction of packets sent twice")
    p.add_argument("--reorder-window", type=int, default=0, metavar="N",
                   help="datagrams held and released shuffled; 0 = keep order")
    p.add_argument("--hold-seconds", type=float, default=0.05,
                   help="release a partly filled reorder block after this idle time")
    p.add_argument("--protect-cnts", type=cnt_list, default=set(), metavar="LIST",
                   help="heap cnts never altered, e.g. 1,2,0x10")
    p.add_argument("--no-protect-control", dest="protect_control",
                   action="store_false",
                   help="also alter control heaps (cnt in the flavour's top half)")
    p.add_argument("--timestamp-item", type=lambda x: int(x, 0), default=None,
                   metavar="ID", help="immediate item reported as each heap's timestamp")
    p.add_argument("--hold-start", type=float, default=0.0, metavar="SECONDS",
                   help="hold unprotected datagrams this long after the first datagram")
    p.add_argument("--stop-delay", type=float, default=0.0, metavar="SECONDS",
                   help="forward stop heaps this long after they arrive")
    p.add_argument("--report", metavar="FILE", help="JSON report written at exit")
    p.add_argument("--idle-exit", type=float, default=0.0, metavar="SECONDS",
                   help="exit after this long without a datagram (after the first); "
                        "0 = never")
    p.add_argument("--max-seconds", type=float, default=600.0,
                   help="exit after this long in any case")
    opts = p.parse_args(argv)
    if opts.reorder_window < 0 or opts.reorder_window > 1_000_000:
        p.error("--reorder-window: 0 to 1000000")
    if opts.max_seconds <= 0:
        p.error("--max-seconds: must be positive")
    return opts


class Relay:
    def __init__(self, opts):
        self.opts = opts
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rcvbuf = self._large_receive_buffer()
        self.sock.bind((opts.listen_host, opts.listen))
        self.port = self.sock.getsockname()[1]
        self.destinations = [(socket.gethostbyname(h), p) for h, p in opts.to]
        self.sent_to = [0] * len(self.destinations)
        self.delayed = []  # (due time, datagram): stop heaps waiting for --stop-delay
        self.start_due = None  # end of --hold-start, from the first datagram
        self.start_held = []   # (datagram, destination) held by --hold-start
        self.rng = random.Random(opts.seed)
        self.held = []
        self.heap_decisions = {}  # cnt -> dropped whole (a cache of a pure function)
        self.recent = {}  # cnt -> [packets seen, {item id: value}], the last RECENT_HEAPS
        self.heaps_seen = set()
        self.heaps_dropped = {}   # cnt -> packets dropped
        self.packets_dropped = {}  # cnt -> [offsets]
        self.duplicated = {}      # cnt -> [offsets]
        self.counts = dict(datagrams_in=0, datagrams_out=0, datagrams_not_spead=0,
                           datagrams_without_heap_cnt=0, datagrams_protected=0,
                           datagrams_dropped_heap=0, datagrams_dropped_packet=0,
                           datagrams_duplicated=0, datagrams_reordered=0,
                           stop_datagrams_delayed=0,
                           send_errors=0)
        self.exit_reason = None
        self.started = time.monotonic()

    def _large_receive_buffer(self):
        """Asks for RCVBUF_BYTES; SO_RCVBUFFORCE passes net.core.rmem_max when allowed
        (CAP_NET_ADMIN), else SO_RCVBUF is capped by it. Returns the bytes granted."""
        forced = getattr(socket, "SO_RCVBUFFORCE", 33)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, forced, RCVBUF_BYTES)
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF_BYTES)
        granted = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) // 2
        if granted < RCVBUF_BYTES:
            print(f"spead_relay: receive buffer {granted} bytes, not {RCVBUF_BYTES}: "
                  f"capped by net.core.rmem_max (raise it, or run with CAP_NET_ADMIN); "
                  f"bursts beyond it are lost in the kernel before the relay sees them",
                  file=sys.stderr, flush=True)
        return granted

    # ---- forwarding ---------------------------------------------------------------

    def _send(self, datagram, to=0):
        """Sends to destination index \p to, or to all of them when it is None."""
        for i in range(len(self.destinations)) if to is None else (to,):
            try:
                self.sock.sendto(datagram, self.destinations[i])
                self.counts["datagrams_out"] += 1
                self.sent_to[i] += 1
            except OSError:
                self.counts["send_errors"] += 1

    def _emit(self, datagram, to=0):
        """Sends now, or holds for reordering (or for --hold-start)."""
        if self.start_due is not None:
            self.start_held.append((datagram, to))
            return
        if self.opts.reorder_window <= 0:
            self._send(datagram, to)
            return
        self.held.append((datagram, to))
        if len(self.held) >= self.opts.reorder_window:
            self.release_held()

    def release_start(self, now=None):
        """Ends --hold-start when it is due (at once when now is None)."""
        if self.start_due is None or (now is not None and now < self.start_due):
            return
        self.start_due = None
        held, self.start_held = self.start_held, []
        for datagram, to in held:
            self._emit(datagram, to)

    def release_delayed(self, now=None):
        """Forwards the delayed stop heaps that are due (all of them when now is None)."""
        while self.delayed and (now is None or self.delayed[0][0] <= now):
            self._send(self.delayed.pop(0)[1], None)

    def release_held(self):
        """Sends the held datagrams in a seeded shuffled order."""
        if not self.held:
            return
        order = list(range(len(self.held)))
        self.rng.shuffle(order)
        self.counts["datagrams_reordered"] += sum(1 for i, j in enumerate(order) if i != j)
        held, self.held = self.held, []
        for j in order:
            self._send(*held[j])

    def _control(self, bits, cnt):
        return self.opts.protect_control and cnt >= 1 << (bits - 1)

    def _remember(self, cnt, immediates):
        known = self.recent.get(cnt)
        if known is None:
            if len(self.recent) >= RECENT_HEAPS:
                del self.recent[next(iter(self.recent))]
            self.recent[cnt] = [1, dict(immediates)]
        else:
            known[0] += 1
            if immediates:
                known[1].update(immediates)

    def _heap_dropped(self, cnt):
        decision = self.heap_decisions.get(cnt)
        if decision is None:
            if len(self.heap_decisions) >= RECENT_HEAPS:
                self.heap_decisions.clear()
            decision = decide(self.opts.seed, self.opts.drop_heaps, "heap", cnt)
            self.heap_decisions[cnt] = decision
        return decision

    def handle(self, datagram):
        opts = self.opts
        if self.counts["datagrams_in"] == 0 and opts.hold_start > 0:
            self.start_due = time.monotonic() + opts.hold_start
        self.counts["datagrams_in"] += 1
        parsed = parse(datagram)
        if parsed is None:
            self.counts["datagrams_not_spead"] += 1
            self._emit(datagram)
            return
        bits, cnt, offset, immediates = parsed
        if cnt is None:
            self.counts["datagrams_without_heap_cnt"] += 1
            self._emit(datagram)
            return
        to = cnt % len(self.destinations)
        control = self._control(bits, cnt)
        if control or cnt in opts.protect_cnts:
            self.counts["datagrams_protected"] += 1
            self.release_held()
            if not control:
                self.heaps_seen.add(cnt)
                self._send(datagram, to)
            elif opts.stop_delay > 0 and immediates.get(STREAM_CTRL_ID) == STREAM_CTRL_STOP:
                self.counts["stop_datagrams_delayed"] += 1
                self.delayed.append((time.monotonic() + opts.stop_delay, datagram))
            else:
                self._send(datagram, None)
            return
        self.heaps_seen.add(cnt)
        self._remember(cnt, immediates)
        if self._heap_dropped(cnt):
            self.counts["datagrams_dropped_heap"] += 1
            self.heaps_dropped[cnt] = self.heaps_dropped.get(cnt, 0) + 1
            return
        if decide(opts.seed, opts.drop_packets, "packet", cnt, offset):
            self.counts["datagrams_dropped_packet"] += 1
            self.packets_dropped.setdefault(cnt, []).append(offset)
            return
        self._emit(datagram, to)
        if decide(opts.seed, opts.duplicate_packets, "duplicate", cnt, offset):
            self.counts["datagrams_duplicated"] += 1
            self.duplicated.setdefault(cnt, []).append(offset)
            self._emit(datagram, to)

    # ---- the loop -----------------------------------------------------------------

    def run(self):
        opts = self.opts
        deadline = self.started + opts.max_seconds
        last_arrival = None
        self.sock.setblocking(False)
        stop = []
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.append("signal"))
        while not stop:
            now = time.monotonic()
            if now >= deadline:
                self.exit_reason = "max_seconds"
                break
            if (opts.idle_exit > 0 and last_arrival is not None
                    and now - last_arrival >= opts.idle_exit):
                self.exit_reason = "idle"
                break
            self.release_start(now)
            self.release_delayed(now)
            try:
                ready, _, _ = select.select([self.sock], [], [], POLL_SECONDS)
            except InterruptedError:
                continue
            if not ready:
                if self.held and now - (last_arrival or now) >= opts.hold_seconds:
                    self.release_held()
                continue
            for _ in range(BATCH):
                try:
                    datagram = self.sock.recv(65536)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:  # e.g. an ICMP error reported on the socket
                    continue
                self.handle(datagram)
            last_arrival = time.monotonic()
        if stop:
            self.exit_reason = "signal"
        self.release_start()
        self.release_held()
        self.release_delayed()

    # ---- the account --------------------------------------------------------------

    def kernel_drops(self):
        """Datagrams the kernel dropped before the relay read them (its socket buffer
        was full): the drops column of /proc/net/udp for this socket; None if unknown."""
        inode = str(os.fstat(self.sock.fileno()).st_ino)
        try:
            with open("/proc/net/udp") as f:
                for line in f.readlines()[1:]:
                    fields = line.split()
                    if len(fields) > 12 and fields[9] == inode:
                        return int(fields[12])
        except (OSError, ValueError):
            pass
        return None

    def _heap_entry(self, cnt):
        seen, immediates = self.recent.get(cnt, [None, {}])
        entry = {"cnt": cnt, "packets_seen": seen,
                 "immediates": {f"0x{k:x}": v for k, v in sorted(immediates.items())}}
        if self.opts.timestamp_item is not None:
            entry["timestamp"] = immediates.get(self.opts.timestamp_item)
        return entry

    def report(self):
        o = self.opts
        heaps_dropped = []
        for cnt in sorted(self.heaps_dropped):
            entry = self._heap_entry(cnt)
            entry["packets"] = self.heaps_dropped[cnt]
            heaps_dropped.append(entry)
        heaps_lost_packets = []
        for cnt in sorted(self.packets_dropped):
            entry = self._heap_entry(cnt)
            entry["offsets"] = sorted(self.packets_dropped[cnt])
            heaps_lost_packets.append(entry)
        duplicates = []
        for cnt in sorted(self.duplicated):
            entry = self._heap_entry(cnt)
            entry["offsets"] = sorted(self.duplicated[cnt])
            duplicates.append(entry)
        return {
            "options": {"seed": o.seed, "drop_heaps": o.drop_heaps,
                        "drop_packets": o.drop_packets,
                        "duplicate_packets": o.duplicate_packets,
                        "reorder_window": o.reorder_window,
                        "protect_cnts": sorted(o.protect_cnts),
                        "protect_control": o.protect_control,
                        "timestamp_item": o.timestamp_item,
                        "stop_delay": o.stop_delay, "hold_start": o.hold_start,
                        "listen_port": self.port,
                        "to": [f"{h}:{p}" for h, p in self.destinations]},
            "receive_buffer_bytes": self.rcvbuf,
            "datagrams_dropped_by_kernel": self.kernel_drops(),
            "exit_reason": self.exit_reason,
            "seconds": round(time.monotonic() - self.started, 3),
            **self.counts,
            "datagrams_out_per_destination": self.sent_to,
            "heaps_seen": len(self.heaps_seen),
            "heaps_dropped": heaps_dropped,
            "heaps_lost_packets": heaps_lost_packets,
            "duplicates": duplicates,
        }


def main(argv=None):
    opts = parse_args(argv)
    relay = Relay(opts)
    print(relay.port, flush=True)
    try:
        relay.run()
    finally:
        report = relay.report()
        if opts.report:
            with open(opts.report, "w") as f:
                json.dump(report, f, indent=1)
        print("spead_relay: {datagrams_in} in, {datagrams_out} out, {} heaps dropped, "
              "{datagrams_dropped_packet} packets dropped, {datagrams_duplicated} "
              "duplicated, {datagrams_reordered} reordered ({exit_reason})".format(
                  len(report["heaps_dropped"]), **report), file=sys.stderr, flush=True)
        if report["datagrams_dropped_by_kernel"]:
            print(f"spead_relay: the kernel dropped {report['datagrams_dropped_by_kernel']} "
                  f"datagrams before the relay read them (it could not keep up): they "
                  f"are in no other count", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
