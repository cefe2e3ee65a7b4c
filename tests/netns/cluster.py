#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A simulated F-engine -> X-engine cluster: one sender, eight receivers, each taking
its share of the substreams over a multicast switch with IGMP snooping.

Runs in the root namespace over `netns-topology --hosts 9 --link bridge --snooping`
with the emulated NIC on every eth0 (ctest: qa_netns_cluster; for a user:
examples/cluster_demo, which says what it did). Host 1 is the sender: a continuous
spead.sink with 32 substreams, substream s on group 239.10.0.s, sending a known signal
(every sample says its substream and timestamp) and told, by rx_time tags on its input,
to skip some positions. Hosts 2 to 9 are the receivers: receiver r takes substreams
4r .. 4r+3 (first_substream = 4r) on those four groups alone; receivers 0 and 1 over
ibverbs on the emulated NIC, the others over kernel UDP. A counter on every bridge port
(port_counter.py, per destination group) says which groups each port carried.

The run: the sender sends run A; meanwhile two receivers leave and rejoin: the last
one's host leaves the network (its link goes down: the switch forgets its groups) and
comes back, and the one before it stops its flowgraph (tb.stop, tb.wait: the source
closes its sockets, leaving its groups) and starts it again (it joins them anew). The
sender is restarted (run B, timestamps far ahead, ending with stop heaps). Checked:
- each port carried only its receiver's four groups;
- every receiver's output is bit-exact, zeros exactly at the skipped positions (the
  receivers that left: real data or zeros everywhere, zeros only around their absence);
- rx_time tags for the same timestamp are equal on every host, and each host has a
  fresh one after the sender restart (and after it rejoined);
- per host: datagrams its port delivered = sent to its groups (but for those that
  left) = received + counted by its receiver (+ lost on the link that went down; for
  the one that stopped, at most what its host received while it was away, which the
  kernel drops uncounted);
- the others saw nothing of those that left: no resync but the sender restart's.

    cluster.py [--rate-mbps R] [--rounds-a N] [--quiet]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_checks  # noqa: E402
import netns_peers  # noqa: E402
from cluster_checks import (HEAP_ITEMS, RECEIVERS, SUBSTREAMS, TAKES,  # noqa: E402
                            group, sent_signal)

HERE = os.path.abspath(__file__)
TIMESTAMP_ITEM = 0x1600
SUBSTREAM_ITEM = 0x3101
SAMPLE_RATE = float(1 << 20)  # timestamps of heap starts are exact binary fractions
PORT = 7148
# Receivers over the emulated NIC, when it is injected (ctest, or a build that has it).
IBV_RECEIVERS = (0, 1) if os.environ.get("SPEAD_EMU_NETDEVS") else ()
WINDOW_HEAPS = 64
SKIP = 77


def receiver_host(r):
    return r + 2


# ---- the peers ----------------------------------------------------------------------------

def sender_main(args, out):
    from gnuradio import blocks, gr, spead
    import pmt
    skips = json.loads(args.skips)

    def run():
        tb = gr.top_block()
        tx = spead.sink(
            endpoints=",".join(f"{group(s)}:{PORT}" for s in range(SUBSTREAMS)),
            interface=args.interface, item_type="int32", max_packet_size=1472,
            heap_items=HEAP_ITEMS, rate_gbps=args.rate_mbps / 1000,
            input_mode="continuous", timestamp_item=TIMESTAMP_ITEM,
            start_timestamp=args.start, sample_rate=SAMPLE_RATE, substreams=SUBSTREAMS,
            substream_item=SUBSTREAM_ITEM, send_stop_heap=args.stop_heap)
        timestamps = cluster_checks.round_timestamps(args.start, args.rounds, skips)
        tags = []
        for k in skips:  # the round after each skip is re-based by an rx_time tag
            t = timestamps[k]
            tag = gr.tag_t()
            tag.offset = k * HEAP_ITEMS
            tag.key = pmt.intern("rx_time")
            tag.value = pmt.make_tuple(pmt.from_uint64(int(t // SAMPLE_RATE)),
                                       pmt.from_double((t % SAMPLE_RATE) / SAMPLE_RATE))
            tags.append(tag)
        for s in range(SUBSTREAMS):
            data = sent_signal(s, timestamps)
            tb.connect(blocks.vector_source_i(data, False, 1, tags if s == 0 else []),
                       (tx, s))
        started, cpu = time.monotonic(), time.process_time()
        tb.run()
        return {"stats": dict(tx.stats()), "seconds": time.monotonic() - started,
                "cpu_seconds": time.process_time() - cpu}

    return netns_peers.serve({"run": run}, out)


def receiver_main(args, out):
    from gnuradio import blocks, gr, spead
    import numpy as np
    tb = gr.top_block()
    rx = spead.source(
        transport=args.transport,
        interface=args.netdev if args.transport == "ibverbs" else args.ip,
        endpoints=f"{group(args.first)}+{TAKES - 1}:{PORT}", item_type="int32",
        output_mode="continuous", timestamp_item=TIMESTAMP_ITEM,
        sample_rate=SAMPLE_RATE, window_heaps=WINDOW_HEAPS, substreams=TAKES,
        substream_item=SUBSTREAM_ITEM, first_substream=args.first)
    sinks = [blocks.vector_sink_i() for _ in range(TAKES)]
    for i, sink in enumerate(sinks):
        tb.connect((rx, i), sink)

    # Runs the flowgraph ended by leave(): each one's counters, outputs and tags.
    earlier = []
    frames_at_leave = []

    def frames_received():
        with open("/sys/class/net/eth0/statistics/rx_packets") as f:
            return int(f.read())

    def this_run():
        """The current run's counters, outputs and tags (offsets from its start: a
        restarted flowgraph counts items from 0 again)."""
        return (dict(rx.stats()),
                [np.asarray(sink.data(), dtype=np.int32) for sink in sinks],
                [[(t.offset, str(t.key), cluster_checks.tag_value(t.value))
                  for t in sink.tags()] for sink in sinks])

    def start():
        tb.start()
        return {"transport": rx.active_transport(), "bound": list(rx.bound_endpoints())}

    def leave():
        """The receiver leaves mid-stream: its flowgraph stops (the source closes its
        sockets, so the host leaves its groups)."""
        frames_at_leave.append(frames_received())
        tb.stop()
        tb.wait()
        earlier.append(this_run())
        for sink in sinks:
            sink.reset()
        return {"stats": earlier[-1][0]}

    def rejoin():
        """Starts the flowgraph again: the source joins its groups anew. Says how many
        frames the host received from leave() to now: none of them reached a socket."""
        tb.start()
        return {"frames_while_away": frames_received() - frames_at_leave[-1]}

    def wait(seconds):
        """Until the stop heaps end the flowgraph (at most `seconds`), then saves the
        outputs and tags of every run, one after the other, for the orchestrator."""
        waiter = threading.Thread(target=tb.wait, daemon=True)
        waiter.start()
        waiter.join(float(seconds))
        ended = not waiter.is_alive()
        tb.stop()
        waiter.join(30)
        runs = earlier + [this_run()]
        stats = {}
        for run_stats, _, _ in runs:
            for name, value in run_stats.items():
                stats[name] = stats.get(name, 0) + value
        tags = []
        for i in range(TAKES):
            shift, tags_i = 0, []
            for _, outputs, run_tags in runs:
                tags_i += [(offset + shift, key, value) for offset, key, value in run_tags[i]]
                shift += outputs[i].size
            tags.append(tags_i)
            np.save(os.path.join(args.out, f"out{i}.npy"),
                    np.concatenate([outputs[i] for _, outputs, _ in runs]))
        with open(os.path.join(args.out, "tags.json"), "w") as f:
            json.dump(tags, f)
        return {"stats": stats, "ended_by_stop_heap": ended,
                "cpu_seconds": time.process_time()}

    return netns_peers.serve({"start": start, "leave": leave, "rejoin": rejoin,
                              "wait": wait}, out)


def counter_main(args, out):
    from port_counter import PortCounter
    counter = PortCounter(args.ports.split(","))

    def read():
        time.sleep(0.5)  # what the bridge just forwarded
        counts, drops = counter.read()
        return {"counts": counts, "drops": drops}
    return netns_peers.serve({"read": read}, out)


def peer_main(argv):
    parser, roles = netns_peers.peer_roles()
    send = netns_peers.add_sender_role(roles)
    send.add_argument("--start", type=int, required=True)
    send.add_argument("--rounds", type=int, required=True)
    send.add_argument("--skips", default="[]")
    send.add_argument("--stop-heap", type=int, default=1)
    recv = roles.add_parser("recv")
    recv.add_argument("--transport", required=True)
    recv.add_argument("--ip", required=True)
    recv.add_argument("--netdev", required=True)
    recv.add_argument("--first", type=int, required=True)
    recv.add_argument("--out", required=True)
    count = roles.add_parser("count")
    count.add_argument("--ports", required=True)
    return netns_peers.run_peer(parser, argv, {"send": sender_main, "recv": receiver_main,
                                               "count": counter_main})


# ---- the orchestrator ---------------------------------------------------------------------

def in_switch(*cmd):
    return subprocess.run(["ip", "netns", "exec", os.environ["TOPO_NS_SWITCH"]] +
                          list(cmd), check=True, capture_output=True, text=True).stdout


def in_host(i, *cmd):
    return subprocess.run(["ip", "netns", "exec", netns_peers.host(i)["ns"]] + list(cmd),
                          check=True, capture_output=True, text=True).stdout


def on_port(counts, i):
    """{substream: datagrams the port delivered to host i} from the counter peer."""
    return {int(g.rsplit(".", 1)[1]): n
            for g, n in counts[os.environ[f"TOPO_PORT_{i}"]].items()
            if g.startswith("239.10.0.")}


def link_drops(i):
    """Frames host i's bridge port could not hand over (its host's link was down)."""
    return int(in_switch("cat", f"/sys/class/net/{os.environ[f'TOPO_PORT_{i}']}/"
                         "statistics/tx_dropped"))


def orchestrate(args, say):
    if not all(f"TOPO_NS_{i}" in os.environ for i in range(1, RECEIVERS + 2)) or \
            "TOPO_NS_SWITCH" not in os.environ:
        print("cluster: needs netns-topology --hosts 9 --link bridge --snooping "
              "(ctest qa_netns_cluster, or examples/cluster_demo)")
        return SKIP
    plan = cluster_checks.Plan(args.rounds_a)
    work = tempfile.mkdtemp(prefix="spead-cluster-")
    say(f"cluster: 1 sender (host 1), {RECEIVERS} receivers (hosts 2-{RECEIVERS + 1}) "
        f"on a snooping bridge; {SUBSTREAMS} substreams on groups {group(0)} .. "
        f"{group(SUBSTREAMS - 1)}:{PORT}; {args.rate_mbps} Mb/s")
    ports = [os.environ[f"TOPO_PORT_{i}"] for i in range(1, RECEIVERS + 2)]
    counter = netns_peers.Peer(HERE, os.environ["TOPO_NS_SWITCH"], "count",
                               ["--ports", ",".join(ports)], name="port counter",
                               log=sys.stderr)
    receivers = []
    for r in range(RECEIVERS):
        i = receiver_host(r)
        h = netns_peers.host(i)
        out = os.path.join(work, f"r{r}")
        os.makedirs(out)
        transport = "ibverbs" if r in IBV_RECEIVERS else "udp"
        receivers.append(netns_peers.Peer(
            HERE, i, "recv", ["--transport", transport, "--ip", h["ip"], "--netdev",
                              h["netdev"], "--first", TAKES * r, "--out", out],
            name=f"receiver {r}", log=sys.stderr))
    failures = []
    try:
        for r, peer in enumerate(receivers):
            started = peer.ask("start")
            if started["transport"] != ("ibverbs" if r in IBV_RECEIVERS else "udp"):
                failures.append(f"receiver {r}: transport {started['transport']}")
            say(f"cluster: receiver {r} (host {receiver_host(r)}): substreams "
                f"{TAKES * r}..{TAKES * r + TAKES - 1} over {started['transport']}, "
                f"joined {group(TAKES * r)}+{TAKES - 1}")
        cluster_checks.wait_for_memberships(in_switch, say, failures)
        h1 = netns_peers.host(1)
        common = ["--interface", h1["ip"], "--rate-mbps", args.rate_mbps]
        sender_a = netns_peers.Peer(
            HERE, 1, "send", common + ["--start", plan.start_a, "--rounds", plan.rounds_a,
                                       "--skips", json.dumps(plan.skips_a),
                                       "--stop-heap", 0], name="sender run A",
            log=sys.stderr)
        leaver, stopper = RECEIVERS - 1, RECEIVERS - 2
        seconds_a = plan.seconds_a(args.rate_mbps)
        away = {}
        run_a = cluster_checks.run_while(
            lambda: sender_a.ask("run", timeout=300),
            lambda: cluster_checks.leave_and_rejoin(in_host, in_switch,
                                                    receiver_host(leaver), say, seconds_a),
            lambda: away.update(cluster_checks.stop_and_rejoin(
                receivers[stopper], in_host, in_switch, receiver_host(stopper), say,
                seconds_a)))
        sender_a.close()
        say(f"cluster: sender run A: {plan.rounds_a} positions from timestamp "
            f"{plan.start_a}, skipping positions {plan.skips_a}, in "
            f"{run_a['seconds']:.1f} s; the sender restarts")
        sender_b = netns_peers.Peer(
            HERE, 1, "send", common + ["--start", plan.start_b, "--rounds", plan.rounds_b,
                                       "--stop-heap", 1], name="sender run B",
            log=sys.stderr)
        run_b = sender_b.ask("run", timeout=300)
        sender_b.close()
        say(f"cluster: sender run B: {plan.rounds_b} positions from timestamp "
            f"{plan.start_b}, then stop heaps, in {run_b['seconds']:.1f} s")
        results = [peer.ask("wait 60", timeout=120) for peer in receivers]
        for r, result in enumerate(results):
            if not result["ended_by_stop_heap"]:
                failures.append(f"receiver {r}: the stop heaps did not end its stream")
        read = counter.ask("read")
    finally:
        for peer in receivers + [counter]:
            peer.close()
    if read["drops"]:
        failures.append(f"the port counter dropped {read['drops']} frames: the per-port "
                        "counts are not conclusive (slow the sender down)")
    counts = read["counts"]
    sent_packets = run_a["stats"]["packets"] + run_b["stats"]["packets"]
    seconds = run_a["seconds"] + run_b["seconds"]
    say(f"cluster: sent {sent_packets} datagrams, "
        f"{(run_a['stats']['bytes'] + run_b['stats']['bytes']) * 8 / seconds / 1e6:.0f} "
        "Mb/s aggregate while sending")
    sender_cpu = run_a["cpu_seconds"] + run_b["cpu_seconds"]
    receiver_cpu = [result["cpu_seconds"] for result in results]
    say(f"cluster: CPU while sending: the sender {sender_cpu:.1f} s in {seconds:.1f} s "
        f"({100 * sender_cpu / seconds:.0f} % of a core); the receivers "
        f"{min(receiver_cpu):.1f} to {max(receiver_cpu):.1f} s each over their whole run "
        "(2 cores in all)")
    for r in range(RECEIVERS):
        cluster_checks.check_receiver(
            r, os.path.join(work, f"r{r}"), results[r]["stats"],
            on_port(counts, receiver_host(r)), link_drops(receiver_host(r)), sent_packets,
            plan, {leaver: "link", stopper: "stopped"}.get(r, ""), say, failures,
            away.get("frames_while_away", 0) if r == stopper else 0)
    cluster_checks.check_rx_times_agree(work, plan, say, failures)
    sender_port = on_port(counts, 1)
    if any(sender_port.values()):
        failures.append(f"the sender's port carried multicast back: {sender_port}")
    return netns_peers.verdict("cluster", failures, say)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate-mbps", type=float, default=200.0)
    parser.add_argument("--rounds-a", type=int, default=6000)
    def run(args):
        args.rate_mbps = netns_peers.rate_for_this_build(args.rate_mbps)
        return orchestrate(args, lambda text: print(text, flush=True))
    return netns_peers.main(peer_main, parser, run)


if __name__ == "__main__":
    sys.exit(main())
