#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Watching streams with Prometheus (docs/monitoring.md): blocks, tools and Python
streams serve their counters over HTTP, several in one process on one port with
distinct labels; Debian's prometheus scrapes them and its HTTP API answers with what
the streams counted; promtool accepts the shipped alerting rules. Where prometheus
or promtool is not installed (.ci/install-deps installs them), those tests say so and
skip."""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import numpy as np
from gnuradio import blocks, gr, gr_unittest

import gnuradio.spead.recv  # noqa: F401 (spead.recv)
import gnuradio.spead.send  # noqa: F401 (spead.send)
from spead_qa_support import (TESTS_DIR, ApiTestCase, FlowgraphTestCase, app_path,
                              app_stats, free_tcp_port, free_udp_port, make_source,
                              run_to_completion, spead, wait_for)

EXAMPLES = os.path.join(TESTS_DIR, "..", "examples")
HEAPS = 20
HEAP_ITEMS = 256


def scrape(address):
    """The text /metrics serves at address (HOST:PORT)."""
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
        return r.read().decode()


def series(text, name, **labels):
    """The value of metric name whose labels include labels, or None."""
    for line in text.splitlines():
        m = re.match(r"^(\w+)\{(.*)\} (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        if all(have.get(k) == v for k, v in labels.items()):
            return float(m.group(3))
    return None


def sender(tb, endpoint, alias, metrics="", heaps=HEAPS, stop_heap=True):
    """int32 heaps of HEAP_ITEMS items from a vector source to endpoint through a
    spead.sink named alias."""
    data = np.arange(heaps * HEAP_ITEMS, dtype=np.int32)
    snk = spead.sink(endpoints=endpoint, item_type="int32", len_tag_key="",
                     heap_items=HEAP_ITEMS, payload_item=0x1000, rate_gbps=0.5,
                     send_stop_heap=stop_heap, metrics=metrics)
    snk.set_block_alias(alias)
    tb.connect(blocks.vector_source_i(data.tolist(), False), snk)
    return snk


class qa_monitoring(FlowgraphTestCase):

    def test_two_sources_and_a_sink_serve_three_streams_on_one_port(self):
        address = f"127.0.0.1:{free_tcp_port()}"
        rx_a, port_a = make_source(item_type="int32", metrics=address)
        rx_b, port_b = make_source(item_type="int32", metrics=address)
        rx_a.set_block_alias("rx_a")
        rx_b.set_block_alias("rx_b")
        tx = sender(self.tb, f"127.0.0.1:{port_a}", "tx", metrics=address)
        out_a, out_b = blocks.vector_sink_i(), blocks.vector_sink_i()
        self.tb.connect(rx_a, out_a)
        self.tb.connect(rx_b, out_b)
        self.tb.start()
        try:
            self.assertTrue(wait_for(lambda: rx_a.stats()["stop_heaps"] == 1, 30),
                            rx_a.stats())
            text = scrape(address)
        finally:
            self.tb.stop()
            self.tb.wait()
        received = rx_a.stats()["heaps"]
        self.assertEqual(received, HEAPS + 1)  # and the descriptor heap
        self.assertEqual(series(text, "spead_recv_heaps_total", stream="rx_a",
                                transport="udp", endpoint=f"127.0.0.1:{port_a}"),
                         received, text)
        self.assertEqual(series(text, "spead_recv_heaps_total", stream="rx_b",
                                endpoint=f"127.0.0.1:{port_b}"), 0, text)
        self.assertEqual(series(text, "spead_send_heaps_total", stream="tx",
                                transport="udp", endpoint=f"127.0.0.1:{port_a}"),
                         tx.stats()["heaps"], text)
        self.assertEqual(series(text, "spead_recv_heaps_output_total", stream="rx_a"),
                         HEAPS, text)
        self.assertIsNotNone(series(text, "spead_recv_queue_heaps", stream="rx_b"), text)
        # one family per metric, whatever the number of blocks
        self.assertEqual(text.count("# TYPE spead_recv_heaps_total counter"), 1)

    def test_a_metrics_address_that_is_not_host_port_names_the_option(self):
        with self.assertRaisesRegex(ValueError, r"metrics: 'localhost:1' does not start "
                                    r"with a numeric address"):
            spead.source(endpoints=f"127.0.0.1:{free_udp_port()}", metrics="localhost:1")


class qa_monitoring_python_api(ApiTestCase):

    def test_python_streams_serve_their_counters(self):
        address = f"127.0.0.1:{free_tcp_port()}"
        stream, port = self.udp_recv_stream(config=spead.recv.StreamConfig(metrics=address))
        tx = spead.send.UdpStream(self.pool, [("127.0.0.1", port)],
                                  spead.send.StreamConfig(rate=1e8, metrics=address))
        ig = spead.send.ItemGroup()
        ig.add_item(0x1000, "payload", "", shape=(64,), dtype=np.int32)
        for i in range(5):
            ig["payload"].value = np.full(64, i, np.int32)
            tx.send_heap(ig.get_heap())
        self.assertTrue(wait_for(lambda: stream.stats["heaps"] == 5, 10))
        text = scrape(address)
        self.assertEqual(series(text, "spead_recv_heaps_total"), 5, text)
        self.assertEqual(series(text, "spead_send_heaps_total", transport="udp",
                                endpoint=f"127.0.0.1:{port}"), 5, text)
        self.assertRegex(text, r'spead_recv_heaps_total\{stream="recv_stream_\d+"\}')

    def test_a_chunk_stream_serves_its_counters_too(self):
        address = f"127.0.0.1:{free_tcp_port()}"
        place = spead.recv.ChunkPlacement(timestamp_item=0x1600, timestamp_step=1024,
                                          heap_size=1024, heaps_per_chunk=4)
        ring = spead.recv.ChunkRingStream(
            self.pool, spead.recv.StreamConfig(metrics=address),
            spead.recv.ChunkStreamConfig(place=place), spead.recv.ChunkRingbuffer(2),
            spead.recv.ChunkRingbuffer(2))
        self.addCleanup(ring.stop)
        text = scrape(address)
        self.assertEqual(series(text, "spead_recv_heaps_total"), 0, text)
        self.assertRegex(text, r'spead_recv_positions_released_total\{stream="recv_stream_')


class qa_monitoring_prometheus(FlowgraphTestCase):

    def setUp(self):
        super().setUp()
        self.prometheus = shutil.which("prometheus")
        if not self.prometheus or not app_path("spead_recv"):
            self.skipTest("prometheus (Debian's package prometheus, which "
                          ".ci/install-deps installs) or spead_recv is not installed")
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def start_prometheus(self, targets):
        """Debian's prometheus scraping targets every second, its own data directory
        in a temporary folder, on 127.0.0.1; returns its address once ready."""
        config = os.path.join(self.dir.name, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: gr-spead\n    static_configs:\n"
                    f"      - targets: {json.dumps(targets)}\n")
        address = f"127.0.0.1:{free_tcp_port()}"
        log = open(os.path.join(self.dir.name, "prometheus.log"), "w")
        self.addCleanup(log.close)
        server = subprocess.Popen(
            [self.prometheus, f"--config.file={config}",
             f"--storage.tsdb.path={os.path.join(self.dir.name, 'data')}",
             f"--web.listen-address={address}"], stdout=log, stderr=log)
        self.addCleanup(lambda: (server.terminate(), server.wait(30)))

        def ready():
            try:
                with urllib.request.urlopen(f"http://{address}/-/ready", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        if not wait_for(ready, 60, 0.2):
            with open(os.path.join(self.dir.name, "prometheus.log")) as f:
                self.fail("prometheus did not start:\n" + f.read()[-2000:])
        return address

    def query(self, server, promql):
        """Prometheus's HTTP API: [(labels, value)] of an instant query."""
        url = f"http://{server}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=10) as r:
            answer = json.load(r)
        self.assertEqual(answer["status"], "success", answer)
        return [(x["metric"], float(x["value"][1])) for x in answer["data"]["result"]]

    def test_prometheus_reads_the_heaps_spead_recv_received(self):
        recv_metrics = f"127.0.0.1:{free_tcp_port()}"
        flowgraph_metrics = f"127.0.0.1:{free_tcp_port()}"
        udp = free_udp_port()
        recv = subprocess.Popen(
            [app_path("spead_recv"), "--quiet", "--metrics", recv_metrics,
             f"127.0.0.1:{udp}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        self.addCleanup(lambda: recv.poll() is None and recv.kill())
        self.assertTrue(wait_for(lambda: self.reachable(recv_metrics), 20))
        server = self.start_prometheus([recv_metrics, flowgraph_metrics])

        # the flowgraph sends without a stop heap, so spead_recv stays up to be scraped
        tx = sender(self.tb, f"127.0.0.1:{udp}", "tx", metrics=flowgraph_metrics,
                    stop_heap=False)
        run_to_completion(self.tb)
        # the descriptor heap and the data heaps
        self.assertTrue(wait_for(lambda: series(scrape(recv_metrics),
                                                "spead_recv_heaps_total") == HEAPS + 1, 20))
        done = time.time()

        # two scrapes after the last heap arrived
        def scraped_twice():
            samples = self.query(server, 'count_over_time(spead_recv_heaps_total'
                                 f'{{stream="spead_recv"}}[{int(time.time() - done) + 1}s])')
            return samples and samples[0][1] >= 2
        self.assertTrue(wait_for(scraped_twice, 30, 0.5), "prometheus did not scrape twice")
        [(labels, heaps)] = self.query(server, 'spead_recv_heaps_total{stream="spead_recv"}')
        self.assertEqual(labels["endpoint"], f"127.0.0.1:{udp}")
        self.assertEqual(labels["transport"], "udp")
        self.assertEqual(labels["instance"], recv_metrics)
        self.assertEqual(self.query(server, 'spead_send_heaps_total{stream="tx"}')[0][1],
                         tx.stats()["heaps"])

        recv.send_signal(signal.SIGINT)
        out, err = recv.communicate(timeout=30)
        self.assertEqual(recv.returncode, 0, err)
        self.assertEqual(heaps, app_stats(out)["heaps"])  # what the stream delivered
        self.assertEqual(heaps, HEAPS + 1)

    @staticmethod
    def reachable(address):
        try:
            scrape(address)
            return True
        except OSError:
            return False


class qa_monitoring_rules(gr_unittest.TestCase):

    def setUp(self):
        self.promtool = shutil.which("promtool")
        if not self.promtool:
            self.skipTest("promtool (Debian's package prometheus, which .ci/install-deps "
                          "installs) is not installed")

    def test_promtool_accepts_the_alerting_rules(self):
        rules = os.path.join(EXAMPLES, "spead_alerts.yml")
        result = subprocess.run([self.promtool, "check", "rules", rules],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("SUCCESS: 8 rules found", result.stdout + result.stderr)

    def test_promtool_accepts_the_scrape_configuration(self):
        # as installed, with the rules it names where the installed examples are
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(EXAMPLES, "prometheus.yml")) as f:
                text = f.read()
            shutil.copy(os.path.join(EXAMPLES, "spead_alerts.yml"), tmp)
            config = os.path.join(tmp, "prometheus.yml")
            with open(config, "w") as f:
                f.write(text.replace("/usr/share/gr-spead/examples/", tmp + "/"))
            result = subprocess.run([self.promtool, "check", "config", config],
                                    capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


if __name__ == "__main__":
    gr_unittest.run(qa_monitoring)
