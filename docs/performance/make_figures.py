#!/usr/bin/python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""make_figures: the figures and the summary table of docs/performance.md, from tidy CSV.

Reads rows `bench,impl,packet_bytes,offered_gbps,trial,metric,value` (written by
apps/spead_compare.py --csv, spead_bench --csv and docs/performance/regenerate) and
writes into the output directory:

  receive_vs_spead2.png  compare_recv: Gb/s and CPU s/GiB per packet size, gr-spead
                         against spead2 (medians, bars from the trials' min to max)
  send_vs_spead2.png     compare_send: the same for the senders at unlimited rate
  loss_vs_rate.png       recv, loopback: fraction of packets lost against offered rate
  scaling.png            mem_threads_N: placement's speed-up from 1 reader thread to N,
                         memcpy's in the same runs, and the share of memcpy's gain
  mem_vs_memcpy.png      mem, mem_continuous: decode + assembly rate as a fraction of memcpy,
                         and spead2's (mem rows of impl spead2, when there) with the ratio
  blocks.png             recv, loopback: highest lossless rate (hatched and marked ≥ where
                         the search was sender-limited: a lower bound); send, sink: send rate
  ibv_instructions.png   ibv_recv_*: callgrind instructions per packet on the emulated NIC,
                         gr-spead and (when its rows are there) spead2, with the ratio
  results.md             a Markdown table of every median, per bench (ibv_recv_* and mem:
                         and the ratio gr-spead/spead2 of the instructions, or of the rate
                         and its fraction of memcpy, when spead2 ran); for mem_pair (the
                         pairs of spead_bench mem and spead2-mem-decode regenerate
                         alternates) each pair's two ratios to memcpy, whether gr-spead's
                         is at least spead2's, and in how many pairs it is

With --doc, the `<!-- generated: NAME -->` blocks of docs/performance.md are filled from
the same medians (and machine.md), so that the page quotes only measured numbers.

A figure whose rows are absent is skipped with a note. A malformed CSV stops the script
with its file and line (exit status 2).
"""

import argparse
import csv
import glob
import math
import os
import re
import statistics
import sys

COLUMNS = ["bench", "impl", "packet_bytes", "offered_gbps", "trial", "metric", "value"]
IMPL_STYLE = {"gr-spead": ("#1f77b4", "gr-spead"), "spead2": ("#ff7f0e", "spead2")}


class CsvError(Exception):
    """A row that cannot be read; str() names the file and line."""


class Row:
    __slots__ = ("bench", "impl", "packet", "offered", "trial", "metric", "value")

    def __init__(self, bench, impl, packet, offered, trial, metric, value):
        self.bench, self.impl, self.packet, self.offered = bench, impl, packet, offered
        self.trial, self.metric, self.value = trial, metric, value


def read_csv(path):
    """Rows of one tidy CSV; CsvError names the file and line of the first bad one."""
    rows = []
    with open(path, newline="") as f:
        for line, fields in enumerate(csv.reader(f), start=1):
            where = f"{path}:{line}"
            if line == 1:
                if fields != COLUMNS:
                    raise CsvError(f"{where}: the header is {','.join(fields)!r}; expected "
                                   f"{','.join(COLUMNS)!r}")
                continue
            if not fields:
                continue
            if len(fields) != len(COLUMNS):
                raise CsvError(f"{where}: {len(fields)} fields, expected {len(COLUMNS)} "
                               f"({','.join(COLUMNS)})")
            bench, impl, packet, offered, trial, metric, value = fields
            try:
                packet = int(packet)
            except ValueError:
                raise CsvError(f"{where}: packet_bytes {packet!r} is not a whole number") \
                    from None
            try:
                # Empty: as fast as possible (spead_bench), the same as 0.
                offered = float(offered) if offered else 0.0
            except ValueError:
                raise CsvError(f"{where}: offered_gbps {offered!r} is neither a number nor "
                               f"empty") from None
            if trial != "median":
                try:
                    trial = int(trial)
                except ValueError:
                    raise CsvError(f"{where}: trial {trial!r} is neither a number nor "
                                   f"'median'") from None
            try:
                value = float(value)
            except ValueError:
                raise CsvError(f"{where}: value {value!r} is not a number") from None
            if not bench or not impl or not metric:
                raise CsvError(f"{where}: bench, impl and metric must not be empty")
            rows.append(Row(bench, impl, packet, offered, trial, metric, value))
    if not rows:
        print(f"note: {path} holds no rows")
    return rows


class Data:
    def __init__(self, rows):
        self.rows = rows

    def select(self, bench=None, impl=None, metric=None, packet=None, offered=None):
        return [r for r in self.rows
                if (bench is None or r.bench == bench) and (impl is None or r.impl == impl)
                and (metric is None or r.metric == metric)
                and (packet is None or r.packet == packet)
                and (offered is None or r.offered == offered)]

    def impl_of(self, bench, metric):
        """gr-spead when the bench has gr-spead rows of the metric, else any impl (None):
        spead_bench's rows may carry other impls (e.g. a memcpy reference)."""
        return "gr-spead" if self.select(bench, "gr-spead", metric) else None

    def packets(self, bench, metric):
        return sorted({r.packet for r in self.select(bench=bench, metric=metric)})

    def summary(self, bench, impl, metric, packet, offered=None):
        """(median, low, high) of a metric: the median row when there is one (else the
        median of the trials), and the trials' min and max (None, None without trials);
        None when there are no rows at all."""
        rows = self.select(bench, impl, metric, packet, offered)
        trials = [r.value for r in rows if r.trial != "median"]
        medians = [r.value for r in rows if r.trial == "median"]
        if medians:
            centre = statistics.median(medians)
        elif trials:
            centre = statistics.median(trials)
        else:
            return None
        if trials:
            return centre, min(trials), max(trials)
        return centre, None, None


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def error_bars(summaries):
    """matplotlib's yerr (distances below and above) from (median, low, high)."""
    below = [0 if s[1] is None else max(s[0] - s[1], 0) for s in summaries]
    above = [0 if s[2] is None else max(s[2] - s[0], 0) for s in summaries]
    return [below, above]


def bars_by_packet(ax, packets, series, number="{:.3g}"):
    """Bars per packet size (x) and series (colour): medians, error bars from min to max,
    each labelled with its median. series: (label, colour or None, {packet: summary})."""
    drawn = bars_by_group(ax, packets, [f"{p} B" for p in packets], series, number)
    ax.set_xlabel("packet size (UDP payload)")
    return drawn


def bars_by_group(ax, groups, group_labels, series, number="{:.3g}"):
    """Bars per group (x: a packet size, a queue kind) and series (colour), as
    bars_by_packet. series: (label, colour or None, {group: summary}[, bounds]) where
    bounds, if there, holds the groups whose value is only a lower bound: their bars
    are hatched and labelled "≥ value"."""
    series = [one for one in series if any(one[2].get(g) for g in groups)]
    width = 0.8 / max(len(series), 1)
    for i, (label, colour, by_group, *rest) in enumerate(series):
        bounds = rest[0] if rest else set()
        points = [(k, g, by_group[g]) for k, g in enumerate(groups) if by_group.get(g)]
        xs = [k + (i - (len(series) - 1) / 2) * width for k, _, _ in points]
        summaries = [s for _, _, s in points]
        bars = ax.bar(xs, [s[0] for s in summaries], width, yerr=error_bars(summaries),
                      capsize=4, color=colour, label=label)
        # Labels at the foot of each bar, clear of the error bars.
        for bar, x, (_, g, s) in zip(bars, xs, points):
            bound = g in bounds
            if bound:
                bar.set_hatch("//")
            ax.annotate(("≥ " if bound else "") + number.format(s[0]), (x, 0),
                        textcoords="offset points", xytext=(0, 4), ha="center",
                        va="bottom", fontsize=7,
                        color="black" if colour is None else "white")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(group_labels)
    ax.margins(y=0.15)
    return bool(series)


def grouped_bars(ax, data, bench, metric, impls, ylabel, title):
    """gr-spead and spead2 side by side per packet size."""
    packets = data.packets(bench, metric)
    series = [(*reversed(IMPL_STYLE.get(impl, (None, impl))),
               {p: data.summary(bench, impl, metric, p) for p in packets}) for impl in impls]
    if bars_by_packet(ax, packets, series):
        ax.legend(fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)


def save(fig, out_dir, name, written):
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
    written.append(path)
    print(f"wrote {path}")


def skip(name, why):
    print(f"note: skipped {name}: {why}")


def figure_versus_spead2(data, out_dir, written, bench, name, what):
    if not data.select(bench=bench):
        skip(name, f"no {bench} rows (apps/spead_compare.py{' --send' if 'send' in bench else ''} "
                   f"--csv writes them)")
        return
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    impls = ["gr-spead", "spead2"]
    grouped_bars(axes[0], data, bench, "gbps", impls, "Gb/s (heap payload)",
                 f"{what}: rate")
    grouped_bars(axes[1], data, bench, "cpu_s_per_gib", impls,
                 "CPU s per GiB of heap payload (user + sys)", f"{what}: CPU cost")
    ratios = [(p, data.summary(bench, "ratio", "cpu_ratio", p))
              for p in data.packets(bench, "cpu_s_per_gib")]
    text = ", ".join(f"{p} B: {s[0]:.2f}" for p, s in ratios if s)
    if text:
        axes[1].margins(y=0.45)
        axes[1].text(0.02, 0.97, f"gr-spead / spead2, median of trials:\n{text}",
                     transform=axes[1].transAxes, va="top", fontsize=8,
                     bbox=dict(boxstyle="round", facecolor="white", alpha=0.8))
    offered = sorted({r.offered for r in data.select(bench=bench)})
    rates = ", ".join("unlimited" if o == 0 else f"{o:g} Gb/s" for o in offered)
    fig.suptitle(f"{what}, gr-spead vs spead2 (offered: {rates}); median of trials, "
                 f"bars from min to max", fontsize=10)
    save(fig, out_dir, name, written)


def figure_loss(data, out_dir, written):
    name = "loss_vs_rate.png"
    benches = [b for b in ("recv", "loopback") if data.select(bench=b, metric="loss_fraction")]
    if not benches:
        skip(name, "no loss_fraction rows from spead_bench recv or loopback")
        return
    plt = pyplot()
    fig, axes = plt.subplots(1, len(benches), figsize=(5.5 * len(benches), 4), squeeze=False)
    for ax, bench in zip(axes[0], benches):
        for packet in data.packets(bench, "loss_fraction"):
            impl = data.impl_of(bench, "loss_fraction")
            offered = sorted({r.offered for r in data.select(bench, impl, "loss_fraction",
                                                             packet)})
            points = []
            for o in offered:
                rows = data.select(bench, impl, "loss_fraction", packet, o)
                values = [r.value for r in rows if r.trial != "median"] or \
                    [r.value for r in rows]
                points.append((o, statistics.median(values), min(values), max(values)))
            xs = [p[0] for p in points]
            ys = [p[1] for p in points]
            ax.errorbar(xs, ys, yerr=[[y - p[2] for y, p in zip(ys, points)],
                                      [p[3] - y for y, p in zip(ys, points)]],
                        marker="o", capsize=3, label=f"{packet} B")
        # Zero (lossless) stays visible on a log scale: linear below 1e-5.
        ax.set_yscale("symlog", linthresh=1e-5)
        top = max(1e-5, *(v for line in ax.get_lines() for v in line.get_ydata()))
        ax.set_yticks([0] + [10.0 ** e for e in range(-5, 1) if 10.0 ** e <= top * 10])
        ax.set_ylim(bottom=0)
        ax.set_xlabel("offered rate (Gb/s)")
        ax.set_ylabel("fraction of heaps lost")
        title = {"recv": "recv::stream alone (spead_bench recv)",
                 "loopback": "spead.source in a flowgraph (spead_bench loopback)"}[bench]
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Kernel UDP receive on 127.0.0.1: loss against offered rate "
                 "(median of runs, bars from min to max)", fontsize=10)
    save(fig, out_dir, name, written)


def one_axis_figure(data, name, benches, metric, absent, size):
    """(the benches with rows of metric, figure, axes), or None after a note that the
    figure is skipped because `absent`."""
    benches = [b for b in benches if data.select(bench=b, metric=metric)]
    if not benches:
        skip(name, absent)
        return None
    fig, ax = pyplot().subplots(figsize=size)
    return benches, fig, ax


def figure_mem(data, out_dir, written):
    name = "mem_vs_memcpy.png"
    drawing = one_axis_figure(data, name, ("mem", "mem_continuous"), "ratio_to_memcpy",
                              "no ratio_to_memcpy rows from spead_bench mem", (6.5, 4))
    if drawing is None:
        return
    benches, fig, ax = drawing
    metric = "ratio_to_memcpy"
    packets = sorted({p for b in benches for p in data.packets(b, metric)})
    labels = {"mem": "heaps (assembler)", "mem_continuous": "continuous (chunk placement)"}
    with_spead2 = bool(data.select("mem", "spead2", metric))
    if with_spead2:
        # gr-spead's own rows only (the spead2 rows share the bench), beside spead2's
        # decode and assembly of the same heaps (docs/performance/spead2-mem-decode.cpp).
        series = [(f"gr-spead, {labels[bench]}",
                   IMPL_STYLE["gr-spead"][0] if bench == "mem" else "#2ca02c",
                   {p: data.summary(bench, "gr-spead", metric, p) for p in packets})
                  for bench in benches]
        # spead2's bars next to gr-spead's heaps, the kind it measures.
        series.insert(1 if "mem" in benches else 0,
                      ("spead2, heaps (recv::stream)", IMPL_STYLE["spead2"][0],
                       {p: data.summary("mem", "spead2", metric, p) for p in packets}))
    else:
        series = [(labels[bench], None,
                   {p: data.summary(bench, data.impl_of(bench, metric), metric, p)
                    for p in packets}) for bench in benches]
    bars_by_packet(ax, packets, series, number="{:.2f}")
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
    lines = []
    for p in packets:
        rate = ratio_to_spead2(data, "mem", p, "gbps")
        share = ratio_to_spead2(data, "mem", p, metric)
        if rate is not None or share is not None:
            lines.append(f"{p} B: rate {'-' if rate is None else f'{rate:.2f}'}, "
                         f"of memcpy {'-' if share is None else f'{share:.2f}'}")
    counts = pair_counts(data)
    if counts:
        lines.append("pairs with gr-spead ≥ spead2: " + ", ".join(
            f"{p} B {held}/{both}" for p, (held, both) in sorted(counts.items())))
    if lines:
        ax.margins(y=0.45)
        ax.text(0.02, 0.97, "heaps, gr-spead / spead2 (medians):\n" + "\n".join(lines),
                transform=ax.transAxes, va="top", fontsize=8,
                bbox=dict(boxstyle="round", facecolor="white", alpha=0.8))
    ax.set_ylabel("decode + assembly rate / memcpy rate")
    ax.set_title("In-memory receive path against a memcpy of the same payload\n"
                 "(spead_bench mem" + (", spead2-mem-decode" if with_spead2 else "") +
                 "; median of trials, bars from min to max)", fontsize=9)
    ax.legend(fontsize=8, loc="upper right")
    save(fig, out_dir, name, written)


def figure_scaling(data, out_dir, written):
    """scaling.png: per packet size and reader-thread count n, continuous placement's
    speed-up from 1 thread to n, memcpy's in the same runs, and the share (the first
    over the second, per run): what placement keeps of what the memory offers."""
    name = "scaling.png"
    benches = sorted({r.bench for r in data.rows if r.bench.startswith("mem_threads_")
                      and r.metric == "share_of_memcpy_gain"},
                     key=lambda b: int(b.rsplit("_", 1)[1]))
    if not benches:
        skip(name, "no share_of_memcpy_gain rows from spead_bench mem --continuous "
                   "--threads N")
        return
    fig, axes = pyplot().subplots(1, 2, figsize=(10, 4))
    packets = sorted({p for b in benches for p in data.packets(b, "share_of_memcpy_gain")})
    speedups = []
    for b in benches:
        n = b.rsplit("_", 1)[1]
        speedups.append((f"placement, {n} threads ÷ 1", None,
                         {p: data.summary(b, "gr-spead", "ratio_to_1_thread", p)
                          for p in packets}))
        speedups.append((f"memcpy alone, {n} ÷ 1", "#bbbbbb",
                         {p: data.summary(b, "gr-spead", "memcpy_ratio_to_1_thread", p)
                          for p in packets}))
    bars_by_packet(axes[0], packets, speedups, number="{:.2f}")
    axes[0].axhline(1.0, color="grey", linestyle="--", linewidth=1)
    axes[0].set_ylabel("aggregate rate, n threads / 1 thread")
    axes[0].set_title("Speed-up from more reader threads, same run", fontsize=9)
    axes[0].legend(fontsize=7)
    shares = [(f"{b.rsplit('_', 1)[1]} threads", None,
               {p: data.summary(b, "gr-spead", "share_of_memcpy_gain", p)
                for p in packets}) for b in benches]
    bars_by_packet(axes[1], packets, shares, number="{:.2f}")
    axes[1].axhline(1.0, color="grey", linestyle="--", linewidth=1)
    axes[1].set_ylabel("placement's speed-up / memcpy's")
    axes[1].set_title("Share of memcpy's gain placement keeps\n(spead_bench mem "
                      "--continuous --threads N; median, bars min to max)", fontsize=9)
    axes[1].legend(fontsize=7)
    save(fig, out_dir, name, written)


def sender_limited(data, bench, impl, packet, offered=None):
    """Whether a rate search's lossless_gbps is only a lower bound: its sender could not
    reach the rate asked (spead_bench's median row sender_limited = 1)."""
    s = data.summary(bench, impl, "sender_limited", packet, offered)
    return s is not None and s[0] >= 0.5


def figure_blocks(data, out_dir, written):
    name = "blocks.png"
    series = [(b, m) for b, m in (("recv", "lossless_gbps"), ("loopback", "lossless_gbps"),
                                  ("send", "gbps"), ("sink", "gbps"),
                                  ("sink_null_source", "gbps"))
              if data.select(bench=b, metric=m)]
    if not series:
        skip(name, "no lossless_gbps (recv, loopback) or gbps (send, sink) rows from "
                   "spead_bench")
        return
    labels = {"recv": "recv::stream, highest lossless rate",
              "loopback": "spead.source, highest lossless rate",
              "send": "send::udp_stream, send rate", "sink": "spead.sink, send rate",
              "sink_null_source": "spead.sink after blocks.null_source, send rate"}
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4))
    packets = sorted({p for b, m in series for p in data.packets(b, m)})
    bounds = {bench: {p for p in packets
                      if sender_limited(data, bench, data.impl_of(bench, metric), p)}
              for bench, metric in series}
    bars_by_packet(ax, packets, [
        (labels[bench], None,
         {p: data.summary(bench, data.impl_of(bench, metric), metric, p) for p in packets},
         bounds[bench])
        for bench, metric in series])
    for bench, limited in bounds.items():
        for p in sorted(limited):
            print(f"note: {name}: {bench} at {p} B is a lower bound (sender-limited)")
    if any(bounds.values()):
        ax.text(0.01, 0.98, "hatched, ≥: sender-limited, the receiver's limit is higher",
                transform=ax.transAxes, va="top", fontsize=8)
    ax.set_ylabel("Gb/s")
    ax.set_title("Kernel UDP on 127.0.0.1: transport alone and the GNU Radio blocks "
                 "(spead_bench)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    save(fig, out_dir, name, written)


IBV_BENCHES = ("ibv_recv_slots", "ibv_recv_mprq")
IBV_METRIC = "instructions_per_packet"


def ratio_to_spead2(data, bench, packet, metric=IBV_METRIC):
    """gr-spead's median of a metric over spead2's in one bench (ibv_recv_*, mem), or
    None when either has no rows (spead2's come only where regenerate found spead2)."""
    ours = data.summary(bench, "gr-spead", metric, packet)
    theirs = data.summary(bench, "spead2", metric, packet)
    if ours is None or theirs is None or theirs[0] == 0:
        return None
    return ours[0] / theirs[0]


def figure_ibv(data, out_dir, written):
    name = "ibv_instructions.png"
    drawing = one_axis_figure(data, name, IBV_BENCHES, IBV_METRIC,
                              "no ibv_recv_* instructions_per_packet rows (regenerate's "
                              "callgrind run)", (6.5, 4))
    if drawing is None:
        return
    benches, fig, ax = drawing
    labels = {"ibv_recv_slots": "fixed slots", "ibv_recv_mprq": "multi-packet receive queue"}
    packets = sorted({p for b in benches for p in data.packets(b, IBV_METRIC)})
    # One group per queue kind (and packet size, should there be several), one colour
    # per receiver: gr-spead alone, or beside spead2 when its rows are there.
    groups = [(b, p) for b in benches for p in packets
              if data.select(b, metric=IBV_METRIC, packet=p)]
    group_labels = [labels[b] + (f", {p} B" if len(packets) > 1 else "") for b, p in groups]
    impls = [impl for impl in ("gr-spead", "spead2")
             if any(data.select(b, impl, IBV_METRIC) for b in benches)]
    bars_by_group(ax, groups, group_labels, [
        (*reversed(IMPL_STYLE[impl]),
         {(b, p): data.summary(b, impl, IBV_METRIC, p) for b, p in groups})
        for impl in impls], number="{:.0f}")
    ratios = [(label, ratio_to_spead2(data, b, p)) for label, (b, p) in zip(group_labels, groups)]
    text = "\n".join(f"{label}: {r:.2f}" for label, r in ratios if r is not None)
    if text:
        ax.margins(y=0.45)
        ax.text(0.02, 0.97, f"gr-spead / spead2 (medians):\n{text}",
                transform=ax.transAxes, va="top", fontsize=8,
                bbox=dict(boxstyle="round", facecolor="white", alpha=0.8))
    ax.legend(fontsize=8, loc="upper right")
    ax.set_ylabel("instructions per packet")
    ax.set_xlabel("receive queue (packets of 8972 B)" if packets == [8972] else
                  "receive queue")
    ax.set_title("ibverbs receive thread on the emulated NIC, besides the payload copy\n"
                 "(callgrind; median of trials, bars from min to max)", fontsize=9)
    save(fig, out_dir, name, written)


def format_value(v):
    if v == 0 or (1e-3 <= abs(v) < 1e6):
        return f"{v:.4g}"
    return f"{v:.3e}"


def bench_table(data, bench):
    """Markdown lines: every median of one bench (the median row, else the median of the
    trials); rows are (packet, offered, impl), columns the metrics."""
    rows = data.select(bench=bench)
    metrics = sorted({r.metric for r in rows},
                     key=lambda m: (METRIC_ORDER.index(m) if m in METRIC_ORDER else 99, m))
    keys = sorted({(r.packet, r.offered, r.impl) for r in rows},
                  key=lambda k: (k[0], k[1], IMPL_ORDER.get(k[2], 9), k[2]))
    trials = {r.trial for r in rows if r.trial != "median"}
    lines = [f"Medians of {len(trials)} trial(s) per row." if trials else "Medians.", "",
             "| packet (B) | offered (Gb/s) | impl | " + " | ".join(metrics) + " |",
             "|---:|---:|---|" + "---:|" * len(metrics)]
    for i, (packet, offered, impl) in enumerate(keys):
        cells = []
        for metric in metrics:
            s = data.summary(bench, impl, metric, packet, offered)
            bound = metric == "lossless_gbps" and sender_limited(data, bench, impl, packet,
                                                                  offered)
            cells.append("" if s is None else ("≥ " if bound else "") + format_value(s[0]))
        if not any(cells):
            continue
        if offered > 0:
            shown = f"{offered:g}"
        else:  # no network, or as fast as possible
            shown = "" if bench.startswith(("mem", "ibv")) else "unlimited"
        lines.append(f"| {packet} | {shown} | {impl} | " + " | ".join(cells) + " |")
        if i + 1 == len(keys) or keys[i + 1][0] != packet:
            lines += spead2_ratio_row(data, bench, packet, metrics)
    return lines


PAIR_BENCH = "mem_pair"


def pairs(data):
    """regenerate's alternated pairs of spead_bench mem and spead2-mem-decode (bench
    mem_pair, trial = the pair): [(pair, packet, gr-spead's median ratio to memcpy,
    spead2's)], either None where that side has no row."""
    ratio = {(r.trial, r.packet, r.impl): r.value
             for r in data.select(PAIR_BENCH, metric="ratio_to_memcpy")
             if r.trial != "median"}
    keys = sorted({(pair, packet) for pair, packet, _ in ratio})
    return [(pair, packet, ratio.get((pair, packet, "gr-spead")),
             ratio.get((pair, packet, "spead2"))) for pair, packet in keys]


def at_least_spead2(ours, theirs):
    """Whether gr-spead's ratio to memcpy is at least spead2's in a pair (issue 37's
    test); None when a side is missing."""
    return None if ours is None or theirs is None else ours >= theirs


def pair_counts(data):
    """{packet: (pairs where gr-spead's ratio to memcpy ≥ spead2's, pairs with both)}."""
    counts = {}
    for _, packet, ours, theirs in pairs(data):
        holds = at_least_spead2(ours, theirs)
        if holds is not None:
            held, both = counts.get(packet, (0, 0))
            counts[packet] = (held + holds, both + 1)
    return counts


def pairs_table(data):
    """Markdown lines: one row per pair and packet size, each side's median ratio to
    memcpy in that pair and whether gr-spead's is at least spead2's, then in how many
    pairs it is; none without mem_pair rows."""
    rows = pairs(data)
    if not rows:
        return []
    lines = ["Each pair: `spead_bench mem --round N`, then `spead2-mem-decode --round N`, "
             "one after the other; each side's median of its runs in the pair.", "",
             "| pair | packet (B) | gr-spead ratio to memcpy | spead2 ratio to memcpy | "
             "gr-spead ≥ spead2 |",
             "|---:|---:|---:|---:|---|"]
    for pair, packet, ours, theirs in rows:
        verdict = {None: "(one side missing)", True: "yes",
                   False: "**no**"}[at_least_spead2(ours, theirs)]
        cells = ["" if v is None else f"{v:.3f}" for v in (ours, theirs)]
        lines.append(f"| {pair} | {packet} | {cells[0]} | {cells[1]} | {verdict} |")
    counts = pair_counts(data)
    held = sum(h for h, _ in counts.values())
    both = sum(b for _, b in counts.values())
    lines += ["", f"gr-spead ≥ spead2 in {held} of {both} pairs and sizes"
              + (": " + ", ".join(f"{p} B {h} of {b}" for p, (h, b) in sorted(counts.items()))
                 if counts else "") + "."]
    return lines


def compared_with_spead2(bench, metric):
    """Whether the table of bench shows gr-spead/spead2 for metric: the instructions of
    ibv_recv_*, and the rate and its fraction of memcpy of mem."""
    if bench in IBV_BENCHES:
        return metric.startswith("instructions_")
    return bench == "mem" and metric in ("gbps", "ratio_to_memcpy")


def spead2_ratio_row(data, bench, packet, metrics):
    """A table row `gr-spead/spead2` for one packet size: the ratio of the two medians
    of each compared metric; none without spead2 rows."""
    cells = []
    for metric in metrics:
        r = ratio_to_spead2(data, bench, packet, metric) \
            if compared_with_spead2(bench, metric) else None
        cells.append("" if r is None else f"{r:.3f}")
    if not any(cells):
        return []
    return [f"| {packet} |  | gr-spead/spead2 | " + " | ".join(cells) + " |"]


def headline_table(data, bench):
    """Markdown lines: per packet size, each side's median CPU s/GiB and Gb/s and the
    median ratio gr-spead / spead2."""
    if not data.select(bench=bench):
        return []
    lines = ["| packet (B) | offered | spead2 CPU s/GiB | gr-spead CPU s/GiB | "
             "ratio gr-spead/spead2 (median of trials) | spead2 Gb/s | gr-spead Gb/s |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for packet in data.packets(bench, "cpu_s_per_gib"):
        cell = {}
        for impl in ("spead2", "gr-spead"):
            for metric in ("cpu_s_per_gib", "gbps"):
                s = data.summary(bench, impl, metric, packet)
                cell[impl, metric] = "" if s is None else format_value(s[0])
        ratio = data.summary(bench, "ratio", "cpu_ratio", packet)
        offered = sorted({r.offered for r in data.select(bench=bench, packet=packet)})
        shown = ", ".join("unlimited" if o == 0 else f"{o:g} Gb/s" for o in offered)
        lines.append(f"| {packet} | {shown} | {cell['spead2', 'cpu_s_per_gib']} | "
                     f"{cell['gr-spead', 'cpu_s_per_gib']} | "
                     f"{'' if ratio is None else f'{ratio[0]:.3f}'} | "
                     f"{cell['spead2', 'gbps']} | {cell['gr-spead', 'gbps']} |")
    return lines


def ordered_benches(data):
    return sorted({r.bench for r in data.rows},
                  key=lambda b: (BENCH_ORDER.index(b) if b in BENCH_ORDER else 99, b))


def write_results(data, path, sources):
    lines = ["# Performance results (medians)", "",
             "Generated by `docs/performance/make_figures.py` from "
             + ", ".join(f"`{os.path.relpath(s, os.path.dirname(path))}`" for s in sources)
             + ". Do not edit: run `docs/performance/regenerate`.", ""]
    for bench in ordered_benches(data):
        table = pairs_table(data) if bench == PAIR_BENCH else bench_table(data, bench)
        lines += [f"## {bench}", ""] + table + [""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {path}")


GENERATED = re.compile(r"(<!-- generated: ([a-z0-9_]+) -->\n)(.*?)(<!-- end generated -->)",
                       re.DOTALL)


def update_doc(data, doc, machine):
    """Fills each `<!-- generated: NAME -->` ... `<!-- end generated -->` block of the
    doc: NAME is a bench (its table; mem_pair: pairs_table()), headline_recv /
    headline_send (the comparison with spead2 per packet size) or machine (the table of
    machine.md)."""
    with open(doc) as f:
        text = f.read()

    def fill(match):
        name = match.group(2)
        if name == "machine":
            body = machine_table(machine)
        elif name.startswith("headline_"):
            body = headline_table(data, "compare_" + name[len("headline_"):])
        elif name == PAIR_BENCH:
            body = pairs_table(data)
        elif data.select(bench=name):
            body = bench_table(data, name)
        else:
            body = []
        if not body:
            body = [f"*No `{name}` data in this run (see the steps of "
                    f"`docs/performance/regenerate`).*"]
        return match.group(1) + "\n".join(body) + "\n" + match.group(4)

    updated, count = GENERATED.subn(fill, text)
    if count == 0:
        print(f"note: {doc} has no <!-- generated: NAME --> blocks; left as it is")
        return
    with open(doc, "w") as f:
        f.write(updated)
    print(f"wrote {count} table(s) into {doc}")


def machine_table(path):
    """The table rows of machine.md (written by regenerate), or nothing."""
    try:
        with open(path) as f:
            return [line.rstrip("\n") for line in f if line.startswith("|")]
    except OSError:
        return []


BENCH_ORDER = ["compare_recv", "compare_send", "ibv_recv_slots", "ibv_recv_mprq", "mem",
               "mem_pair", "mem_continuous", "mem_threads", "mem_threads_2", "mem_threads_3",
               "mem_threads_4", "recv", "recv_threads_1", "recv_threads_2", "loopback", "loopback_vs_recv", "send", "sink",
               "sink_null_source", "sink_vs_send", "sink_vs_send_null_source"]
METRIC_ORDER = ["cpu_ratio", "gbps_ratio", "cpu_s_per_gib", "cpu_user_s_per_gib",
                "cpu_sys_s_per_gib", "gbps", "lossless_gbps", "sender_limited", "heaps_received", "heaps_sent",
                "packets_lost", "loss_fraction", "ratio_to_memcpy", "memcpy_gbps"]
IMPL_ORDER = {"gr-spead": 0, "spead2": 1, "ratio": 2}


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="*",
                        help="tidy CSV files (default: data/*.csv next to this script)")
    parser.add_argument("--out", default=here,
                        help="directory for the PNGs and results.md (default: this "
                             "script's directory)")
    parser.add_argument("--doc", nargs="?", const=os.path.join(here, "..", "performance.md"),
                        help="also fill the generated tables of this Markdown file "
                             "(default with no value: docs/performance.md)")
    args = parser.parse_args(argv)
    sources = args.csv or sorted(glob.glob(os.path.join(here, "data", "*.csv")))
    if not sources:
        print(f"make_figures: no CSV given and none in {os.path.join(here, 'data')}; "
              f"run docs/performance/regenerate", file=sys.stderr)
        return 2
    rows = []
    try:
        for path in sources:
            rows += read_csv(path)
    except CsvError as e:
        print(f"make_figures: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"make_figures: cannot read {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    bad = [r for r in rows if not math.isfinite(r.value)]
    if bad:
        print(f"note: {len(bad)} row(s) with a value that is not finite are left out")
        rows = [r for r in rows if math.isfinite(r.value)]
    os.makedirs(args.out, exist_ok=True)
    data = Data(rows)
    written = []
    figure_versus_spead2(data, args.out, written, "compare_recv", "receive_vs_spead2.png",
                         "Kernel UDP receive")
    figure_versus_spead2(data, args.out, written, "compare_send", "send_vs_spead2.png",
                         "Kernel UDP send")
    figure_loss(data, args.out, written)
    figure_mem(data, args.out, written)
    figure_scaling(data, args.out, written)
    figure_blocks(data, args.out, written)
    figure_ibv(data, args.out, written)
    write_results(data, os.path.join(args.out, "results.md"), sources)
    if args.doc:
        update_doc(data, args.doc, os.path.join(args.out, "machine.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
