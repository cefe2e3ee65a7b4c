#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Helpers shared by the Python tests (not installed): the blocks' QA in python/spead
and the tests of the Python API and across blocks and tools here in tests/python.

Everything here is bounded in time: flowgraphs run with a deadline, sockets have
timeouts, and namespaces are removed again.
"""

import argparse
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import weakref

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import spead

TESTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
VECTORS_DIR = os.environ.get("GR_SPEAD_VECTORS_DIR", os.path.join(TESTS_DIR, "vectors"))

# Defaults that keep loopback tests lossless on a busy 2-core machine.
TEST_RATE_GBPS = 2.0


def app_path(name):
    """Path of one of gr-spead's apps (GR_SPEAD_APPS_DIR from ctest, else PATH), or
    None when it is not found."""
    directory = os.environ.get("GR_SPEAD_APPS_DIR")
    path = os.path.join(directory, name) if directory else shutil.which(name)
    return path if path and os.path.exists(path) else None


def spead_send_payloads(send_args, timestamp_item, item_id=0x1000):
    """{timestamp: payload bytes of item_id} of the data heaps spead_send sends with
    send_args, recorded to a capture and read back as heaps through
    gnuradio.spead.recv.Stream (a path independent of chunk streams)."""
    import gnuradio.spead.recv  # noqa: F401 (spead.recv)
    with tempfile.TemporaryDirectory() as tmp:
        capture = os.path.join(tmp, "stream.pcap")
        subprocess.run([app_path("spead_send"), *send_args, "--pcap", capture,
                        "127.0.0.1:7148"], check=True, timeout=60, stdout=subprocess.DEVNULL)
        stream = spead.recv.Stream(spead.ThreadPool())
        try:
            stream.add_udp_pcap_file_reader(capture)
            out = {}
            for heap in stream:
                items = {item.id: item for item in heap.get_items()}
                if timestamp_item in items:
                    out[items[timestamp_item].immediate_value] = bytes(items[item_id])
        finally:
            stream.stop()
    return out


def vector(name):
    """Path of a reference capture in tests/vectors."""
    return os.path.join(VECTORS_DIR, name)


def tests_path(*parts):
    """Path of a file under tests/ (tests_path("tools", "spead_relay.py"))."""
    return os.path.normpath(os.path.join(TESTS_DIR, *parts))


def spead2_layout():
    """The module tests/interop/spead2_layout.py: spead2's dialect (its sender and
    receiver) in Python, checked against spead2's own captures."""
    sys.path.insert(0, tests_path("interop"))
    import spead2_layout as module
    return module


def minstd(n):
    """The first n outputs of std::minstd_rand (default seed): the payload of the
    reference captures in tests/vectors."""
    out = np.empty(n, dtype=np.uint32)
    x = 1
    for i in range(n):
        x = (x * 48271) % 2147483647
        out[i] = x
    return out


def app_stats(output):
    """The `name: value` counter lines an app (spead_recv, spead_send) printed, as a
    dict."""
    out = {}
    for line in output.splitlines():
        name, sep, value = line.partition(": ")
        if sep and value.strip().isdigit():
            out[name.strip()] = int(value)
    return out


def assert_packets_reconcile(test, sent, rx, other=0):
    """Every packet sent was received (rx["packets"], or `other` counted elsewhere) or
    dropped by the kernel: exactly, unless a coalescing socket dropped runs of datagrams
    (runs_dropped_socket_overflow, 1 to 64 datagrams each), then within those bounds."""
    singles = rx["packets"] + other + rx["packets_dropped_socket_overflow"]
    runs = rx["runs_dropped_socket_overflow"]
    test.assertTrue(singles + runs <= sent <= singles + 64 * runs,
                    f"{sent} packets sent do not reconcile: {rx['packets']} received, "
                    f"{other} otherwise counted, {rx['packets_dropped_socket_overflow']} "
                    f"dropped, {runs} runs dropped")


def free_udp_port(kind=socket.SOCK_DGRAM):
    """A UDP port nobody uses right now (the endpoint syntax refuses port 0)."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_tcp_port():
    """A TCP port nobody listens on right now."""
    return free_udp_port(socket.SOCK_STREAM)


def make_source(**kwargs):
    """A udp spead.source on 127.0.0.1 and a free port; returns (block, port)."""
    src, (port,) = make_source_on_free_ports(1, **kwargs)
    assert src.bound_endpoints() == [f"127.0.0.1:{port}"]
    return src, port


def make_source_on_free_ports(n_endpoints, **kwargs):
    """A udp spead.source on n different free ports of 127.0.0.1; returns (block,
    ports)."""
    for attempt in range(20):
        ports = [free_udp_port() for _ in range(n_endpoints)]
        if len(set(ports)) < n_endpoints:
            continue
        try:
            src = spead.source(
                endpoints=",".join(f"127.0.0.1:{p}" for p in ports), **kwargs)
        except RuntimeError:  # taken in the meantime
            continue
        return src, ports
    raise AssertionError("no free UDP ports found")


class FlowgraphTestCase(gr_unittest.TestCase):
    """Gives every test a fresh top block (self.tb) and, when the class sets `seed`, a
    random generator seeded with it (self.rng)."""

    seed = None

    def setUp(self):
        self.tb = gr.top_block()
        if self.seed is not None:
            self.rng = np.random.default_rng(self.seed)

    def tearDown(self):
        self.tb = None


class FlowgraphAndTempDirTestCase(FlowgraphTestCase):
    """A FlowgraphTestCase with a temporary directory (self.dir, a TemporaryDirectory)
    that is removed after the test."""

    def setUp(self):
        super().setUp()
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        super().tearDown()
        self.dir.cleanup()


class ApiTestCase(gr_unittest.TestCase):
    """A test of the spead2-compatible API: a thread pool (self.pool), and receive
    streams that are stopped after the test."""

    def setUp(self):
        self.pool = spead.ThreadPool()

    def recv_stream(self, **kwargs):
        stream = spead.recv.Stream(self.pool, **kwargs)
        self.addCleanup(stream.stop)
        return stream

    def udp_recv_stream(self, **kwargs):
        """A receive stream with a UDP reader on a free port of 127.0.0.1; returns
        (stream, port)."""
        stream = self.recv_stream(**kwargs)
        port = free_udp_port()
        self.assertEqual(stream.add_udp_reader(port, bind_hostname="127.0.0.1"),
                         [("127.0.0.1", port)])
        return stream, port


def sink_block_into(stream, endpoint, data):
    """Sends int32 data with a spead.sink block (heaps of 1024 items, item 0x1000) to
    endpoint, where the Python receive stream listens; returns what the stream
    received of the item, as int32, once the sink's stop heap has ended it."""
    from gnuradio import blocks
    tb = gr.top_block()
    tb.connect(blocks.vector_source_i(data.tolist(), False),
               spead.sink(endpoints=endpoint, item_type="int32", len_tag_key="",
                          heap_items=1024, payload_item=0x1000, rate_gbps=1.0))
    run_to_completion(tb)
    ig = spead.ItemGroup()
    got = [updated["payload"].value.copy() for updated in map(ig.update, stream)
           if "payload" in updated]
    return np.concatenate(got).view(np.int32)


def source_block_output(src, send):
    """Runs an int32 spead.source block into a vector sink while send() sends to it,
    until the block has counted the stop heap; returns the sink (data(), tags())."""
    from gnuradio import blocks
    out = blocks.vector_sink_i()
    tb = gr.top_block()
    tb.connect(src, out)
    tb.start()
    try:
        send()
        wait_for(lambda: src.stats()["stop_heaps"] == 1)
        tb.wait()
    finally:
        tb.stop()
        tb.wait()
    return out


def run_to_completion(tb, timeout=30.0):
    """Runs a flowgraph that ends by itself; stops it and raises if it does not end in
    time."""
    tb.start()
    wait_to_end(tb, timeout)


def wait_to_end(tb, timeout=30.0, what="flowgraph"):
    """Waits for a started flowgraph to end by itself; stops it and raises if it does
    not end in time."""
    waiter = threading.Thread(target=tb.wait, daemon=True)
    waiter.start()
    waiter.join(timeout)
    if waiter.is_alive():
        tb.stop()
        waiter.join(10)
        raise AssertionError(f"{what} did not end within {timeout} s")


def wait_for(condition, timeout=10.0, interval=0.01):
    """Polls condition() until true; returns its last value (false on timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def stop_and_wait(tb, timeout=5.0):
    """tb.stop() + tb.wait(), bounded; returns the seconds it took."""
    t0 = time.monotonic()
    tb.stop()
    waiter = threading.Thread(target=tb.wait, daemon=True)
    waiter.start()
    waiter.join(timeout)
    if waiter.is_alive():
        raise AssertionError(f"flowgraph did not stop within {timeout} s")
    return time.monotonic() - t0


def tag(offset, key, value):
    t = gr.tag_t()
    t.offset = offset
    t.key = pmt.intern(key)
    t.value = value
    return t


def packet_tags(lengths, key="packet_len", extra=None):
    """Length tags for consecutive packets, plus extra(i, offset) -> [(key, pmt)]."""
    tags = []
    offset = 0
    for i, n in enumerate(lengths):
        tags.append(tag(offset, key, pmt.from_long(n)))
        if extra:
            for k, v in extra(i, offset):
                tags.append(tag(offset, k, v))
        offset += n
    return tags


def tags_by_offset(tags, skip=("packet_len",)):
    """{offset: {key: python value}} of a vector sink's tags."""
    out = {}
    for t in tags:
        key = pmt.symbol_to_string(t.key)
        if key in skip:
            continue
        out.setdefault(t.offset, {})[key] = pmt.to_python(t.value)
    return out


def sorted_tags(sink):
    """A vector sink's tags as sorted (offset, key, python value) tuples."""
    return sorted((t.offset, pmt.symbol_to_string(t.key), pmt.to_python(t.value))
                  for t in sink.tags())


def heap_starts(tags, key="packet_len"):
    """[(offset, length)] of the length tags, in order."""
    return sorted((t.offset, pmt.to_long(t.value)) for t in tags
                  if pmt.symbol_to_string(t.key) == key)


def descriptor_msg(item_id, name, description="", numpy_header="", shape=None):
    """A descriptor dict as spead.source emits it (for a sink's descriptors port)."""
    d = pmt.make_dict()
    d = pmt.dict_add(d, pmt.intern("id"), pmt.from_uint64(item_id))
    d = pmt.dict_add(d, pmt.intern("name"), pmt.intern(name))
    d = pmt.dict_add(d, pmt.intern("description"), pmt.intern(description))
    d = pmt.dict_add(d, pmt.intern("numpy_header"), pmt.intern(numpy_header))
    d = pmt.dict_add(d, pmt.intern("shape"), pmt.to_pmt(list(shape or [])))
    return d


def post(block, port, msg):
    """Queues a message on a block's input port (before or while it runs)."""
    block.to_basic_block()._post(pmt.intern(port), msg)


# ---- continuous output (output_mode="continuous") ------------------------------------

def chunk_positions(heap_bytes, window_heaps):
    """Positions per output chunk of a continuous source: about 1 MiB per substream, at
    most a quarter of the window (chunk_config::positions_per_chunk)."""
    return min(max(1, (1 << 20) // heap_bytes), max(1, window_heaps // 4))


def position_runs(positions, chunk):
    """[(first position, length)] of the runs of consecutive positions, cut where a
    chunk of `chunk` positions ends."""
    out = []
    for p in sorted(positions):
        if out and out[-1][0] + out[-1][1] == p and p % chunk != 0:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((p, 1))
    return out


def heap_missing_tags(positions, heap_items, heap_bytes, window_heaps):
    """The heap_missing tags, as sorted_tags() gives them, of one continuous output
    whose heaps at `positions` are zeros: one per run of consecutive positions, and
    again where a run goes on into the next chunk."""
    chunk = chunk_positions(heap_bytes, window_heaps)
    return [(p * heap_items, "heap_missing", n * heap_items)
            for p, n in position_runs(positions, chunk)]


# ---- crafting SPEAD packets (for hostile input) -------------------------------------

def item_pointer(item_id, value, immediate=True, address_bits=40):
    return ((1 << 63) if immediate else 0) | (item_id << address_bits) | value


def spead_packet(heap_cnt, payload, heap_size=None, offset=0, items=(),
                 address_bits=40):
    """One SPEAD packet: the specials, then (id, value, immediate) items, then payload."""
    pointers = [item_pointer(0x01, heap_cnt, address_bits=address_bits)]
    pointers.append(item_pointer(
        0x02, len(payload) if heap_size is None else heap_size, address_bits=address_bits))
    pointers.append(item_pointer(0x03, offset, address_bits=address_bits))
    pointers.append(item_pointer(0x04, len(payload), address_bits=address_bits))
    for item_id, value, immediate in items:
        pointers.append(item_pointer(item_id, value, immediate, address_bits))
    address_bytes = address_bits // 8
    header = struct.pack(">BBBBHH", 0x53, 4, 8 - address_bytes, address_bytes, 0,
                         len(pointers))
    return header + b"".join(struct.pack(">Q", p) for p in pointers) + bytes(payload)


def send_datagrams(port, datagrams, host="127.0.0.1", pause_every=32, pause=0.001):
    """Sends raw datagrams, pausing briefly now and then so a receiver keeps up."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for i, d in enumerate(datagrams):
            s.sendto(d, (host, port))
            if pause_every and i % pause_every == pause_every - 1:
                time.sleep(pause)


# ---- resources ------------------------------------------------------------------------

def add_traced_chunks(add_free_chunk, n, data_bytes, present_bytes):
    """Gives n new chunks to add_free_chunk and returns weak references to them, which
    die once nothing holds the chunks any more (a leak test's probe)."""
    class TracedChunk(spead.recv.Chunk):  # a Python subclass takes weak references
        pass

    refs = []
    for _ in range(n):
        chunk = TracedChunk(data=np.zeros(data_bytes, np.uint8),
                            present=np.zeros(present_bytes, np.uint8))
        refs.append(weakref.ref(chunk))
        add_free_chunk(chunk)
    return refs


def kill(proc, timeout=10):
    """Kills a child process that still runs, and reaps it (for addCleanup)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout)


def thread_count():
    return len(os.listdir("/proc/self/task"))


def fd_count():
    return len(os.listdir("/proc/self/fd"))


def udp_socket_inodes():
    """Inodes of the UDP sockets this process holds."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    udp = set()
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(table) as f:
                for line in f.readlines()[1:]:
                    fields = line.split()
                    if len(fields) > 9:
                        udp.add(fields[9])
        except OSError:
            pass
    return inodes & udp


# ---- two-host topology (the emulated-NIC tests) ---------------------------------------
# ctest runs such a test script in host 2 of tests/netns/netns-topology --hosts 2; the
# script runs itself as a peer (--peer ROLE ...) in either host for what this process
# cannot do there.

def topology_host(i):
    """{"ns", "ip", "netdev"} of host i of the topology ctest started."""
    return {"ns": os.environ[f"TOPO_NS_{i}"], "ip": os.environ[f"TOPO_IP_{i}"],
            "netdev": os.environ[f"TOPO_IF_{i}"]}


def have_two_host_topology():
    return all(f"TOPO_NS_{i}" in os.environ for i in (1, 2))


def run_peer_in_host(script, i, args, timeout, extra_env=None, prefix=()):
    """Runs `script` --peer ARGS in host i; returns (exit code, output)."""
    env = dict(os.environ)
    env.update(extra_env or {})
    cmd = list(prefix) + ["ip", "netns", "exec", topology_host(i)["ns"], sys.executable,
                          "-B", script, "--peer"] + [str(a) for a in args]
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout, text=True)
    return done.returncode, done.stdout


def peer_parser():
    """The command line of a script's peers: one subcommand per role. Returns (parser,
    roles, send); the `send` role runs a spead.sink and takes its transport, endpoints
    and --interface, the script adds what else it needs."""
    parser = argparse.ArgumentParser()
    roles = parser.add_subparsers(dest="role", required=True)
    send = roles.add_parser("send")
    send.add_argument("transport")
    send.add_argument("endpoints")
    send.add_argument("--interface", default="")
    return parser, roles, send


def run_peer_or_tests(test_class, peer_main):
    """The main of a script with peers: `--peer ARGS` runs peer_main(ARGS), anything
    else the tests."""
    if len(sys.argv) > 1 and sys.argv[1] == "--peer":
        sys.exit(peer_main(sys.argv[2:]))
    gr_unittest.run(test_class)


# ---- network namespaces ---------------------------------------------------------------

def can_use_netns():
    return os.geteuid() == 0 and subprocess.run(
        ["ip", "netns", "list"], capture_output=True).returncode == 0


class NetNamespace:
    """A private network namespace with loopback up and multicast routed to it;
    removed on exit."""

    def __init__(self, prefix="grspead"):
        self.name = f"{prefix}-{uuid.uuid4().hex[:8]}"

    def __enter__(self):
        subprocess.run(["ip", "netns", "add", self.name], check=True, timeout=10)
        try:
            for cmd in (["ip", "link", "set", "lo", "up"],
                        ["ip", "link", "set", "lo", "multicast", "on"],
                        ["ip", "route", "add", "224.0.0.0/4", "dev", "lo"]):
                self.run(cmd, check=True)
        except Exception:
            self.__exit__(None, None, None)
            raise
        return self

    def run(self, cmd, timeout=60, **kwargs):
        return subprocess.run(["ip", "netns", "exec", self.name] + cmd,
                              timeout=timeout, **kwargs)

    def __exit__(self, *exc):
        subprocess.run(["ip", "netns", "delete", self.name], timeout=10)
        return False


class TwoHostTestCase(gr_unittest.TestCase):
    """A test between the two hosts of `netns-topology --hosts 2` over the emulated NIC
    (ctest runs it there): skipped elsewhere; `me` is host 2, `peer` host 1."""

    def setUp(self):
        if not have_two_host_topology():
            self.skipTest("needs netns-topology --hosts 2 and the emulated NIC (ctest)")
        self.me = topology_host(2)
        self.peer = topology_host(1)


def uint32_item_group(values):
    """A send ItemGroup of one uint32 vector item, x (0x1000), holding values."""
    ig = spead.send.ItemGroup()
    ig.add_item(0x1000, "x", "test values", shape=(len(values),), dtype=np.uint32)
    ig["x"].value = np.asarray(values, dtype=np.uint32)
    return ig


def received_values(stream):
    """The values of item x in every heap of stream, until it ends."""
    ig = spead.ItemGroup()
    return [ig["x"].value.tolist() for heap in stream if "x" in ig.update(heap)]
