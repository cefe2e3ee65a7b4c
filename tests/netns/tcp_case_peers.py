#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The two peers of tcp_cases.py, each in its host namespace: the receiver (host 1:
spead.source with transport="tcp", or recv.Stream.add_tcp_reader) and the sender (host
2: spead.sink with transport="tcp", send.TcpStream, or raw sockets for hostile input).
What a case sends is defined here once; both ends report sha256 digests of what they
sent and received, and their counters, for the orchestrator to compare.

Receiver commands: `listen CASE PORT` (builds and starts the case's receiving end),
`stats`, `finish SECONDS` (waits for the stream to end by itself), `stop` (stops it);
the last two answer with the digests. Sender commands: `send CASE HOST PORT` (runs the
case's sending end to completion), `good_start`/`good_wait` (a stream kept going while
`attack KIND HOST PORT` sends hostile input), `release` (closes the attacks' sockets),
`cycles HOST PORT N` (N connections one after another, a heap each).
"""

import hashlib
import os
import socket
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "spead"))  # qa_item_types
import netns_peers  # noqa: E402

SEED = 26
#: every item type: these packet lengths (items), as python/spead/qa_tcp.py
TYPE_LENGTHS = [1, 100, 3000, 4096, 777, 20000, 5, 1500]
#: heap sizes from 1 B to 64 MiB (send.TcpStream -> recv.Stream.add_tcp_reader)
HEAP_BYTES = [1, 7, 1000, 65536, 1 << 20, 64 << 20]
SIZES_ITEM = 0x1000
#: then one heap of every kind of item a spead2 script sends: numpy dtypes of each
#: width and byte order, C and Fortran order, 2-D, an immediate, a variable-length string
KINDS_CNT = 100
KINDS = [  # (id, name, add_item arguments, value)
    (0x2001, "u8", {"dtype": np.uint8, "shape": (5,)}, np.arange(5, dtype=np.uint8) + 250),
    (0x2002, "i16_2d", {"dtype": np.int16, "shape": (3, 4)},
     np.arange(-6, 6, dtype=np.int16).reshape(3, 4) * 1000),
    (0x2003, "u32", {"dtype": np.uint32, "shape": (7,)},
     np.arange(7, dtype=np.uint32) * 0x1234567),
    (0x2004, "i64", {"dtype": np.int64, "shape": (2,)}, np.array([-2**62, 2**62 - 1])),
    (0x2005, "f32", {"dtype": np.float32, "shape": (10,)},
     np.linspace(-1, 1, 10, dtype=np.float32)),
    (0x2006, "f64", {"dtype": np.float64, "shape": (3,)}, np.array([np.pi, -0.0, 1e300])),
    (0x2007, "c64", {"dtype": np.complex64, "shape": (4,)},
     (np.arange(4) + 1j * np.arange(4, 8)).astype(np.complex64)),
    (0x2008, "c128", {"dtype": np.complex128, "shape": (2,)}, np.array([1 - 2j, -3e-3j])),
    (0x2009, "be_i32", {"dtype": np.dtype(">i4"), "shape": (6,)},
     (np.arange(6) - 3).astype(">i4")),
    (0x200A, "fortran_i16", {"dtype": np.int16, "shape": (3, 2), "order": "F"},
     np.arange(6, dtype=np.int16).reshape(3, 2)),
    (0x200B, "immediate_u40", {"format": [("u", 40)], "shape": ()}, 0x123456789A),
    (0x200C, "text", {"format": [("c", 8)], "shape": (None,)}, "between namespaces"),
]
FANIN_SENDERS, FANIN_HEAP_ITEMS, FANIN_HEAPS = 8, 2048, 60
SLOW_HEAP_ITEMS, SLOW_HEAPS = 4096, 300  # 32 KiB heaps, 9.4 MiB: far beyond the buffers
CONT_HEAP_ITEMS, CONT_HEAPS, CONT_SUBSTREAM_ITEM = 1024, 300, 0x3101
GOOD_HEAP_ITEMS, GOOD_HEAPS, GOOD_HEAPS_PER_S = 1024, 600, 60  # 10 s of heaps
HOSTILE_MAX_CONNECTIONS, HOSTILE_MAX_PACKET = 3, 16384
CYCLE_ITEM, CYCLE_BYTES = 0x1000, 1000


def digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def type_values(item_type):
    """The components sent for item_type (deterministic)."""
    from qa_item_types import TYPES
    dtype, is_complex = TYPES[item_type][:2]
    rng = np.random.default_rng([SEED, sorted(TYPES).index(item_type)])
    n = sum(TYPE_LENGTHS) * (2 if is_complex else 1)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)


def heap_bytes(size):
    return np.random.default_rng([SEED, size]).integers(0, 256, size, dtype=np.uint8)


def canon(value):
    """A received or sent item value as comparable text: type, shape, dtype, bytes. In
    native byte order, as spead2's ItemGroup.update gives values (new_order="=")."""
    if isinstance(value, np.ndarray):
        value = value.astype(value.dtype.newbyteorder("="))
        return f"{value.dtype.str}{value.shape}:{digest(value)[:16]}"
    if isinstance(value, (int, np.integer)):
        value = int(value)
    if isinstance(value, (bytes, np.bytes_)):
        value = bytes(value).decode()
    return f"{type(value).__name__}:{value!r}"


def fanin_values(s):
    return np.arange(FANIN_HEAP_ITEMS * FANIN_HEAPS, dtype=np.int32) + 10_000_000 * s


def slow_values():
    rng = np.random.default_rng(SEED)
    n = SLOW_HEAP_ITEMS * SLOW_HEAPS
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)


def cont_values(s):
    return np.arange(1, CONT_HEAP_ITEMS * CONT_HEAPS + 1, dtype=np.int32) + 10_000_000 * s


def good_values():
    return np.arange(GOOD_HEAP_ITEMS * GOOD_HEAPS, dtype=np.int32) * 3 + 7


# ---- the receiver (host 1) -------------------------------------------------------------

class Flowgraph:
    """A receiving flowgraph: its sources, and what it answers when done."""

    def __init__(self, sources, summary):
        from gnuradio import gr
        self.tb = gr.top_block()
        self.sources, self.summary = sources, summary
        self.done = threading.Event()

    def start(self):
        self.tb.start()
        threading.Thread(target=lambda: (self.tb.wait(), self.done.set()),
                         daemon=True).start()

    def stats(self):
        return [s.stats() for s in self.sources]

    def stop(self):
        self.tb.stop()
        self.done.wait(30)

    def result(self):
        return {"ended": self.done.is_set(), "stats": self.stats(), **self.summary()}


class ApiReceiver:
    """recv.Stream.add_tcp_reader, as a spead2 script: each sized heap's item digested,
    each item of the KINDS heap made comparable."""

    def __init__(self, ip, port):
        from gnuradio import spead
        import gnuradio.spead.recv  # noqa: F401
        self.pool = spead.ThreadPool()
        self.stream = spead.recv.Stream(
            self.pool, spead.recv.StreamConfig(max_heap_size=65 << 20))
        self.stream.add_tcp_reader(port, max_size=65536, bind_hostname=ip)
        self.heaps, self.kinds = [], {}
        self.done = threading.Event()
        self.spead = spead

    def start(self):
        def run():
            ig = self.spead.ItemGroup()
            for heap in self.stream:  # until the sender disconnects
                updated = ig.update(heap)
                if heap.cnt == KINDS_CNT:
                    self.kinds = {name: canon(item.value) for name, item in updated.items()}
                item = ig[f"bytes{heap.cnt}"] if f"bytes{heap.cnt}" in ig else None
                if item is not None and item.value is not None:
                    self.heaps.append([heap.cnt, int(item.value.size), digest(item.value)])
            self.done.set()
        threading.Thread(target=run, daemon=True).start()

    def stats(self):
        return [dict(self.stream.stats.items())]

    def stop(self):
        self.stream.stop()
        self.done.wait(30)

    def result(self):
        return {"ended": self.done.is_set(), "stats": self.stats(), "heaps": self.heaps,
                "kinds": self.kinds}


def slow_sink_block(per_call, pause):
    from gnuradio import gr

    class slow_sink(gr.sync_block):
        """At most per_call items per work(), `pause` s each: slower than the link."""

        def __init__(self):
            gr.sync_block.__init__(self, "slow_sink", [np.complex64], [])

        def work(self, input_items, output_items):
            time.sleep(pause)
            return min(len(input_items[0]), per_call)

    return slow_sink()


def receiver_for(case, ip, port):
    from gnuradio import blocks, gr, spead
    import spead_qa_support as qa
    from qa_item_types import TYPES, components, stream_blocks
    at = f"{ip}:{port}"
    if case == "api":
        return ApiReceiver(ip, port)
    if case == "types":
        outs = {}
        srcs = [spead.source(transport="tcp", endpoints=f"{ip}:{port + k}", item_type=t,
                             max_heap_size=1 << 20) for k, t in enumerate(sorted(TYPES))]
        fg = Flowgraph(srcs, lambda: {"types": {
            t: [digest(components(out, t)), qa.heap_starts(out.tags())]
            for t, out in outs.items()}})
        for t, src in zip(sorted(TYPES), srcs):
            outs[t] = stream_blocks(t, 1, type_values(t), [])[1]
            fg.tb.connect(src, outs[t])
        return fg
    if case == "fanin":
        src = spead.source(transport="tcp", endpoints=at, item_type="int32",
                           max_connections=FANIN_SENDERS, stop_on_stop_heap=False)
        out = blocks.vector_sink_i()

        def per_sender():
            got = np.asarray(out.data(), dtype=np.int32)
            return {"senders": [digest(got[got // 10_000_000 == s])
                                for s in range(FANIN_SENDERS)]}
        fg = Flowgraph([src], per_sender)
        fg.tb.connect(src, out)
        return fg
    if case == "slow":
        src = spead.source(transport="tcp", endpoints=at, queue_heaps=4,
                           max_heap_size=SLOW_HEAP_ITEMS * 8, buffer_size=64 * 1024)
        out = blocks.vector_sink_c()
        fg = Flowgraph([src], lambda: {"digest": digest(
            np.asarray(out.data(), dtype=np.complex64))})
        fg.slow = slow_sink_block(SLOW_HEAP_ITEMS, 0.004)  # a Python block: keep it
        fg.tb.connect(src, fg.slow)
        fg.tb.connect(src, out)
        return fg
    if case == "continuous":
        src = spead.source(transport="tcp", endpoints=at, item_type="int32",
                           output_mode="continuous", timestamp_item=0x1600,
                           sample_rate=1e6, substreams=2,
                           substream_item=CONT_SUBSTREAM_ITEM, max_connections=2,
                           stop_on_stop_heap=False, max_packet_size=65536)
        outs = [blocks.vector_sink_i() for _ in range(2)]
        fg = Flowgraph([src], lambda: {"outputs": [
            digest(np.asarray(o.data(), dtype=np.int32)) for o in outs]})
        for s in range(2):
            fg.tb.connect((src, s), outs[s])
        return fg
    if case == "hostile":
        src = spead.source(transport="tcp", endpoints=at, item_type="int32",
                           max_connections=HOSTILE_MAX_CONNECTIONS, keep_listening=True,
                           max_packet_size=HOSTILE_MAX_PACKET,
                           allowed_peers=ip.rsplit(".", 1)[0] + ".0/24")  # the hosts' net
        out = blocks.vector_sink_i()
        fg = Flowgraph([src], lambda: {"digest": digest(
            np.asarray(out.data(), dtype=np.int32))})
        fg.tb.connect(src, out)
        return fg
    if case == "admission":  # only this host may connect
        src = spead.source(transport="tcp", endpoints=at, allowed_peers=ip,
                           keep_listening=True)
        fg = Flowgraph([src], dict)
        fg.tb.connect(src, blocks.null_sink(gr.sizeof_gr_complex))
        return fg
    if case == "cycles":
        src = spead.source(transport="tcp", endpoints=at, item_type="int8",
                           payload_item=CYCLE_ITEM, keep_listening=True)
        fg = Flowgraph([src], dict)
        fg.tb.connect(src, blocks.null_sink(gr.sizeof_char))
        return fg
    raise ValueError(f"case: {case!r} is not a case of tcp_cases.py")


def receiver_main(ip, out):
    running = {}

    def listen(case, port):
        running["case"] = receiver_for(case, ip, int(port))
        running["case"].start()
        return {"listening": int(port)}

    def finish(seconds):
        case = running["case"]
        if not case.done.wait(float(seconds)):
            case.stop()  # reported as "ended": false
        return case.result()

    def stop():
        running["case"].stop()
        return running["case"].result()

    return netns_peers.serve({"listen": listen, "finish": finish, "stop": stop,
                              "stats": lambda: {"stats": running["case"].stats()}}, out)


# ---- the sender (host 2) ---------------------------------------------------------------

def run_flowgraph(tb, seconds):
    import spead_qa_support as qa
    qa.run_to_completion(tb, timeout=seconds)


def send_types(to, port):
    from gnuradio import gr, spead
    import spead_qa_support as qa
    from qa_item_types import TYPES, stream_blocks
    tb = gr.top_block()
    sinks = {}
    for k, t in enumerate(sorted(TYPES)):
        src = stream_blocks(t, 1, type_values(t), qa.packet_tags(TYPE_LENGTHS))[0]
        src.set_min_output_buffer(2 * max(TYPE_LENGTHS))
        sinks[t] = spead.sink(transport="tcp", endpoints=f"{to}:{port + k}", item_type=t)
        tb.connect(src, sinks[t])
    run_flowgraph(tb, 60)
    return {"types": {t: [digest(type_values(t)), sink.stats()]
                      for t, sink in sinks.items()}}


def send_api(to, port):
    from gnuradio import spead
    import gnuradio.spead.send  # noqa: F401
    pool = spead.ThreadPool()
    tx = spead.send.TcpStream(pool, [(to, port)],
                              spead.send.StreamConfig(max_packet_size=65536 - 32))
    sent = []
    for cnt, size in enumerate(HEAP_BYTES, start=1):
        ig = spead.send.ItemGroup()
        ig.add_item(SIZES_ITEM + cnt, f"bytes{cnt}", "", shape=(size,), dtype=np.uint8)
        ig[f"bytes{cnt}"].value = heap_bytes(size)
        tx.send_heap(ig.get_heap(), cnt)
        sent.append([cnt, size, digest(ig[f"bytes{cnt}"].value)])
    ig = spead.send.ItemGroup()
    for item_id, name, kwargs, value in KINDS:
        ig.add_item(item_id, name, "", **kwargs)
        ig[name].value = value
    tx.send_heap(ig.get_heap(), KINDS_CNT)
    del tx  # disconnects: the reader's stream ends
    return {"heaps": sent, "kinds": {name: canon(value) for _, name, _, value in KINDS}}


def send_fanin(to, port):
    from gnuradio import blocks, gr, spead
    tb = gr.top_block()
    sinks = []
    for s in range(FANIN_SENDERS):
        sinks.append(spead.sink(transport="tcp", endpoints=f"{to}:{port}",
                                item_type="int32", len_tag_key="",
                                heap_items=FANIN_HEAP_ITEMS))
        tb.connect(blocks.vector_source_i(fanin_values(s).tolist(), False), sinks[-1])
    run_flowgraph(tb, 90)
    return {"senders": [digest(fanin_values(s)) for s in range(FANIN_SENDERS)],
            "stats": [sink.stats() for sink in sinks]}


def send_slow(to, port):
    from gnuradio import blocks, gr, spead
    tb = gr.top_block()
    sink = spead.sink(transport="tcp", endpoints=f"{to}:{port}", len_tag_key="",
                      heap_items=SLOW_HEAP_ITEMS, buffer_size=64 * 1024)
    src = blocks.vector_source_c(slow_values().tolist(), False)
    # Eight heaps of buffer: the sink, sending in place from it, then has as many
    # heaps in flight as it can, more than the sockets hold, and so must wait for them.
    src.set_min_output_buffer(8 * SLOW_HEAP_ITEMS)
    tb.connect(src, sink)
    run_flowgraph(tb, 120)
    return {"digest": digest(slow_values()), "stats": [sink.stats()]}


def send_continuous(to, port):
    from gnuradio import blocks, gr, spead
    tb = gr.top_block()
    sink = spead.sink(transport="tcp", endpoints=f"{to}:{port},{to}:{port}",
                      item_type="int32", max_packet_size=8972,
                      heap_items=CONT_HEAP_ITEMS, input_mode="continuous",
                      timestamp_item=0x1600, start_timestamp=1_000_000, sample_rate=1e6,
                      substreams=2, substream_item=CONT_SUBSTREAM_ITEM)
    for s in range(2):
        tb.connect(blocks.vector_source_i(cont_values(s).tolist(), False), (sink, s))
    run_flowgraph(tb, 60)
    return {"outputs": [digest(cont_values(s)) for s in range(2)], "stats": [sink.stats()]}


def send_cycles(to, port, n):
    """n connections one after another, each sending one heap and closing."""
    from gnuradio import spead
    import gnuradio.spead.send  # noqa: F401
    pool = spead.ThreadPool()
    ig = spead.send.ItemGroup()
    ig.add_item(CYCLE_ITEM, "bytes", "", shape=(CYCLE_BYTES,), dtype=np.uint8)
    for i in range(int(n)):
        ig["bytes"].value = np.full(CYCLE_BYTES, i % 256, dtype=np.uint8)
        tx = spead.send.TcpStream(pool, [(to, port)])
        tx.send_heap(ig.get_heap())  # returns once the receiver acknowledged it
        del tx
    return {"cycles": int(n)}


class Hostile:
    """A good stream (a throttled spead.sink) kept going while raw sockets send hostile
    input to the same source."""

    def __init__(self):
        self.tb = None
        self.held = []

    def good_start(self, to, port):
        from gnuradio import blocks, gr, spead
        self.tb = gr.top_block()
        self.sink = spead.sink(transport="tcp", endpoints=f"{to}:{port}",
                               item_type="int32", len_tag_key="",
                               heap_items=GOOD_HEAP_ITEMS)
        self.tb.connect(blocks.vector_source_i(good_values().tolist(), False),
                        blocks.throttle(4, GOOD_HEAP_ITEMS * GOOD_HEAPS_PER_S),
                        self.sink)
        self.tb.start()
        return {"started": True}

    def good_wait(self, seconds):
        import spead_qa_support as qa
        qa.wait_to_end(self.tb, timeout=float(seconds), what="the good sender")
        return {"digest": digest(good_values()), "stats": [self.sink.stats()]}

    def attack(self, kind, to, port):
        """Sends one kind of hostile input; the socket stays open until `release`
        (silent, one_too_many) or is closed at once (the rest)."""
        import spead_qa_support as qa
        s = socket.create_connection((to, int(port)), timeout=10)
        if kind == "garbage":
            s.sendall(b"G" * 64)
        elif kind == "oversized":  # a packet whose payload would be 1 GiB
            header = qa.spead_packet(1, b"", heap_size=1 << 30)[:-8]  # all but length
            s.sendall(header + qa.item_pointer(0x04, 1 << 30).to_bytes(8, "big"))
        elif kind == "partial":  # half a packet, then close
            packet = qa.spead_packet(9, bytes(500))
            s.sendall(packet[:len(packet) // 2])
        elif kind not in ("silent", "one_too_many"):
            raise ValueError(f"kind: {kind!r} is not an attack")
        if kind in ("silent", "one_too_many"):
            self.held.append(s)
        else:
            s.close()
        return {"attacked": kind}

    def release(self):
        for s in self.held:
            s.close()
        self.held = []
        return {"released": True}


def sender_main(out):
    hostile = Hostile()
    cases = {"types": send_types, "api": send_api, "fanin": send_fanin,
             "slow": send_slow, "continuous": send_continuous}
    return netns_peers.serve({
        "send": lambda case, to, port: cases[case](to, int(port)),
        "cycles": lambda to, port, n: send_cycles(to, int(port), n),
        "good_start": hostile.good_start, "good_wait": hostile.good_wait,
        "attack": hostile.attack, "release": hostile.release}, out)


def peer_main(argv):
    """`recv IP` or `send`."""
    out = netns_peers.answers_only_on_stdout()
    if argv[0] == "recv":
        return receiver_main(argv[1], out)
    return sender_main(out)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "--peer":
        sys.exit("tcp_case_peers.py is started by tcp_cases.py: --peer recv IP | send")
    sys.exit(peer_main(sys.argv[2:]))
