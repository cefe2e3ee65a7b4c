#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The soak: continuous mode for a long run over kernel UDP and the emulated ibverbs NIC,
with the sender restarted every few minutes, a burst above the steady rate every
minute and the receivers stopped and started every 5 minutes. Throughout, the RSS, open
fds and threads of both processes must stay flat, and at the end every datagram sent
must be counted by its receiver (received or dropped and counted), every position
output must be a complete heap, an incomplete one or zeros, and every sender restart
must show as a resync at each receiver.

Runs in the root namespace over `netns-topology --hosts 2 --link veth` with the emulated
NIC on eth0 (ctest: qa_netns_soak_2min, and the 30-minute `soak` entry; see
docs/testing.md). Host 1 runs the sender: two continuous spead.sinks (one per receiver)
fed by a repeating pattern through a throttle at the steady rate. Host 2 runs the
receivers: a continuous spead.source over kernel UDP and one over ibverbs on the
emulated NIC, each on its own multicast group. The receivers are restarted while the
sender is between runs, so that nothing is sent while they are stopped and the counts
reconcile exactly.

    soak.py [--minutes M | --minutes-from-env] [--rate-mbps R]

--minutes-from-env takes the duration from GR_SPEAD_SOAK_MINUTES and skips when it is
not set: the ctest entry `soak.continuous` (label soak), which .ci/run lists but only
runs when asked: GR_SPEAD_SOAK_MINUTES=30 ctest -L soak.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_peers  # noqa: E402

HERE = os.path.abspath(__file__)
TIMESTAMP_ITEM = 0x1600
HEAP_ITEMS = 2048            # int32: 8 KiB heaps, 2 packets each
MAX_PACKET = 4200
SAMPLE_RATE = 1e6
GROUPS = {"udp": "239.9.0.1:7150", "ibv": "239.9.0.2:7152"}
BURST_FACTOR = 3             # the burst's rate, times the steady rate
WINDOW_HEAPS = 256
RSS_SLACK_KIB = 24 * 1024    # RSS may grow this much (+5 %) after warming up
SKIP = 77                    # ctest SKIP_RETURN_CODE


# ---- host 1: the sender ------------------------------------------------------------------

def sender_main(args, out):
    from gnuradio import blocks, gr, spead
    import numpy as np
    items_per_s = args.rate_mbps * 1e6 / 8 / 4
    tb = gr.top_block()
    pattern = (np.arange(1, 64 * HEAP_ITEMS + 1, dtype=np.int32)).tolist()
    throttles, sinks = {}, {}
    for name, group in GROUPS.items():
        src = blocks.vector_source_i(pattern, True)
        throttles[name] = blocks.throttle(4, items_per_s, True)
        sinks[name] = spead.sink(
            endpoints=group, interface=args.interface, item_type="int32",
            max_packet_size=MAX_PACKET, heap_items=HEAP_ITEMS,
            rate_gbps=BURST_FACTOR * 1.5 * args.rate_mbps / 1000,
            input_mode="continuous", timestamp_item=TIMESTAMP_ITEM,
            start_timestamp=1_000_000, sample_rate=SAMPLE_RATE)
        tb.connect(src, throttles[name], sinks[name])

    def stop():
        tb.stop()
        tb.wait()
        return {name: dict(s.stats()) for name, s in sinks.items()}

    def rate(factor):
        for t in throttles.values():
            t.set_sample_rate(items_per_s * float(factor))
        return {}

    return netns_peers.serve({"start": lambda: tb.start() or {}, "stop": stop,
                              "rate": rate}, out)


# ---- host 2: the receivers ---------------------------------------------------------------

def receiver_main(args, out):
    from gnuradio import blocks, gr, spead
    tb = gr.top_block()
    common = dict(item_type="int32", output_mode="continuous",
                  timestamp_item=TIMESTAMP_ITEM, sample_rate=SAMPLE_RATE,
                  window_heaps=WINDOW_HEAPS, stop_on_stop_heap=False)
    sources = {
        "udp": spead.source(transport="udp", endpoints=GROUPS["udp"],
                            interface=args.ip, **common),
        "ibv": spead.source(transport="ibverbs", endpoints=GROUPS["ibv"],
                            interface=args.netdev, **common),
    }
    for src in sources.values():
        tb.connect(src, blocks.null_sink(4))

    def stop():
        tb.stop()
        tb.wait()
        return {name: dict(s.stats()) for name, s in sources.items()}

    def stats():
        return {name: dict(s.stats()) for name, s in sources.items()}

    def transports():
        return {name: s.active_transport() for name, s in sources.items()}

    return netns_peers.serve({"start": lambda: tb.start() or {}, "stop": stop,
                              "stats": stats, "transports": transports}, out)


def peer_main(argv):
    parser, roles = netns_peers.peer_roles()
    netns_peers.add_sender_role(roles)
    recv = roles.add_parser("recv")
    recv.add_argument("--ip", required=True)
    recv.add_argument("--netdev", required=True)
    return netns_peers.run_peer(parser, argv, {"send": sender_main, "recv": receiver_main})


# ---- the orchestrator (root namespace) ---------------------------------------------------

def schedule(minutes):
    """(sender restart, burst, receiver restart, sample) periods and burst length, s."""
    if minutes >= 10:
        return 150, 60, 300, 30, 3
    seconds = minutes * 60
    return seconds / 4, seconds / 6, seconds / 2, 5, 2


def check_flat(name, samples, failures):
    """Fds and threads no higher at the end than after warming up; RSS within slack."""
    warm = samples[len(samples) // 4]
    last = samples[-1]
    for key in ("fds", "threads"):
        top = max(s[key] for s in samples[len(samples) // 4:])
        if top > warm[key]:
            failures.append(f"{name}: {key} grew from {warm[key]} to {top} after "
                            "warming up")
    grew = last["rss_kib"] - warm["rss_kib"]
    # AddressSanitizer keeps freed memory in its quarantine (up to 256 MiB), so RSS
    # grows under it whatever the code does: only fds and threads are judged there.
    under_asan = "libasan" in os.environ.get("LD_PRELOAD", "")
    if under_asan:
        print(f"soak: {name}: RSS not judged under AddressSanitizer (quarantine)")
    elif grew > RSS_SLACK_KIB + warm["rss_kib"] // 20:
        failures.append(f"{name}: RSS grew by {grew} KiB after warming up "
                        f"({warm['rss_kib']} -> {last['rss_kib']} KiB)")


def orchestrate(minutes, rate_mbps):
    if not all(f"TOPO_NS_{i}" in os.environ for i in (1, 2)):
        print("soak: needs netns-topology --hosts 2 and the emulated NIC (ctest)")
        return SKIP
    sender_every, burst_every, receiver_every, sample_every, burst_len = schedule(minutes)
    print(f"soak: {minutes} min at {rate_mbps} Mb/s per receiver; sender restart every "
          f"{sender_every:.0f} s, {burst_len} s burst x{BURST_FACTOR} every "
          f"{burst_every:.0f} s, receiver restart every {receiver_every:.0f} s",
          flush=True)
    h1, h2 = netns_peers.host(1), netns_peers.host(2)
    recv = netns_peers.Peer(HERE, 2, "recv", ["--ip", h2["ip"], "--netdev", h2["netdev"]],
                            log=sys.stderr)
    send = netns_peers.Peer(HERE, 1, "send", ["--interface", h1["ip"], "--rate-mbps",
                                              rate_mbps], log=sys.stderr)
    failures = []
    sent = {name: 0 for name in GROUPS}
    received = {name: {} for name in GROUPS}
    runs = {"sender": 1, "receiver": 1}
    samples = {"sender": [], "receiver": []}
    try:
        if recv.ask("transports") != {"udp": "udp", "ibv": "ibverbs"}:
            failures.append("the receivers do not use udp and ibverbs")
        recv.ask("start")
        time.sleep(1)  # joined
        send.ask("start")
        start = time.monotonic()
        last = {"sender": start, "burst": start, "receiver": start, "sample": start - 1e9}
        burst_until = None
        while (now := time.monotonic()) - start < minutes * 60:
            if burst_until is not None and now >= burst_until:
                send.ask("rate 1")
                burst_until = None
            if now - last["burst"] >= burst_every and burst_until is None:
                send.ask(f"rate {BURST_FACTOR}")
                burst_until, last["burst"] = now + burst_len, now
            if now - last["sample"] >= sample_every:
                samples["sender"].append(send.figures())
                samples["receiver"].append(recv.figures())
                last["sample"] = now
            if now - last["sender"] >= sender_every:
                for name, s in send.ask("stop").items():
                    sent[name] += s["packets"]
                if burst_until is not None:
                    send.ask("rate 1")
                    burst_until = None
                time.sleep(1)  # what is in flight arrives
                if now - last["receiver"] >= receiver_every - 1:
                    for name, s in recv.ask("stop").items():
                        netns_peers.add_stats(received[name], s)
                    recv.ask("start")
                    time.sleep(1)
                    runs["receiver"] += 1
                    last["receiver"] = now
                send.ask("start")
                runs["sender"] += 1
                last["sender"] = time.monotonic()
            time.sleep(0.25)
        for name, s in send.ask("stop").items():
            sent[name] += s["packets"]
        time.sleep(1)
        for name, s in recv.ask("stop").items():
            netns_peers.add_stats(received[name], s)
    finally:
        send.close()
        recv.close()

    for name in GROUPS:
        r = received[name]
        problem = netns_peers.reconcile(sent[name], r)
        if problem:
            failures.append(f"{name}: {problem}")
        placed = (r["heaps"] + r["incomplete_heaps_delivered"] + r["heaps_missing"]
                  + r["heaps_dropped_queue_full"])
        if placed != r["positions_released"]:
            failures.append(f"{name}: {r['positions_released']} positions output but "
                            f"{placed} heaps, incomplete heaps and zeros")
        # Every sender restart within a receiver run is a resync; so is a loss longer
        # than the window (counted above: the receiver jumps instead of zero-filling).
        resyncs = runs["sender"] - runs["receiver"]
        lost = sent[name] - r["packets"]
        if not resyncs <= r["timestamp_resyncs"] <= resyncs + lost:
            failures.append(f"{name}: {r['timestamp_resyncs']} resyncs for {resyncs} "
                            f"sender restarts within receiver runs and {lost} datagrams "
                            "lost")
        print(f"soak: {name}: {sent[name]} datagrams sent, {r['packets']} decoded, "
              f"{r.get('packets_dropped_socket_overflow', 0)} dropped by the socket, "
              f"{r.get('frames_dropped_no_buffer', 0)} by the NIC; {r['heaps']} heaps, "
              f"{r['heaps_missing']} missing, {r['timestamp_resyncs']} resyncs, "
              f"{r['heaps_late']} late", flush=True)
    for who, figures in samples.items():
        if len(figures) < 4:
            failures.append(f"{who}: only {len(figures)} samples")
            continue
        check_flat(who, figures, failures)
        print(f"soak: {who}: RSS MiB every {sample_every:.0f} s: " +
              " ".join(f"{f['rss_kib'] / 1024:.0f}" for f in figures), flush=True)
        first, warm, end = figures[0], figures[len(figures) // 4], figures[-1]
        print(f"soak: {who}: RSS {first['rss_kib']} / {warm['rss_kib']} / "
              f"{end['rss_kib']} KiB (start / warm / end), fds {first['fds']} / "
              f"{warm['fds']} / {end['fds']}, threads {first['threads']} / "
              f"{warm['threads']} / {end['threads']}, {len(figures)} samples", flush=True)
    print(f"soak: {runs['sender']} sender runs, {runs['receiver']} receiver runs")
    return netns_peers.verdict("soak", failures, lambda text: print(text, flush=True))


def run(args):
    minutes = args.minutes
    if args.minutes_from_env:
        if not os.environ.get("GR_SPEAD_SOAK_MINUTES"):
            print("soak: skipped: set GR_SPEAD_SOAK_MINUTES (e.g. 30) to run the soak: "
                  "GR_SPEAD_SOAK_MINUTES=30 ctest -L soak (docs/testing.md)")
            return SKIP
        minutes = float(os.environ["GR_SPEAD_SOAK_MINUTES"])
    return orchestrate(minutes, netns_peers.rate_for_this_build(args.rate_mbps))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--minutes-from-env", action="store_true")
    parser.add_argument("--rate-mbps", type=float, default=100.0)
    return netns_peers.main(peer_main, parser, run)


if __name__ == "__main__":
    sys.exit(main())
