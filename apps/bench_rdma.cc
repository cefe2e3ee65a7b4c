/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_bench rdma: the rdma link in one run. For each --packet (max_packet_size, the
// largest message): the raw RDMA-write throughput of the wire (bench_rdma_raw), then
// recv::stream + rdma_reader in this process fed by a send::rdma_stream, on the
// RDMA-write path and on SendRecv (rdma_connections 0): each side's Gb/s and CPU
// seconds per GiB, and the receiver's Gb/s against the raw figure (the target:
// at least 0.8 x raw). Every receiving end is in this process, on --address; every
// sending end in the sender agent (bench_rdma_agent), a child process in
// --sender-netns's network namespace when given.

#include "bench_modes.h"
#include "bench_rdma_agent.h"
#include "bench_rdma_raw.h"
#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/recv_stream.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {

/*! The target: the link carries at least this share of the raw wire. */
constexpr double target_ratio = 0.8;

/*! A TCP port free on \p address (IPv4, checked with the options) now: rdma_cm's
 * ports are TCP's on RoCE and on the emulator. */
std::uint16_t free_tcp_port(const std::string& address)
{
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        throw std::system_error(errno, std::generic_category(), "socket");
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        const int err = errno;
        close(fd);
        throw std::system_error(err, std::generic_category(), "bind " + address + ":0");
    }
    close(fd);
    return ntohs(addr.sin_port);
}

/*! One run of the SPEAD link on one path. */
struct link_result {
    double recv_gbps = 0.0; //!< heap payload, first to last heap taken by the consumer
    double send_gbps = 0.0; //!< SPEAD bytes, the sender's figure
    std::uint64_t heaps_sent = 0;
    std::uint64_t heaps_received = 0;
    std::uint64_t messages = 0; //!< packets (messages) received
    std::optional<cpu_per_gib> recv_cpu;
    std::optional<cpu_per_gib> send_cpu;
};

link_result link_trial(const bench_options& options,
                       sender_agent& agent,
                       std::size_t packet,
                       bool rdma_write)
{
    const std::size_t heap_size = options.heap_size;
    const std::string endpoint = "verbs://" + options.address + ":" +
                                 std::to_string(free_tcp_port(options.address));

    recv::stream_config config;
    config.set_max_heap_size(2 * heap_size);
    recv::rdma_config rdma;
    rdma.set_endpoint(endpoint).set_max_packet_size(packet);
    if (!rdma_write)
        rdma.set_rdma_connections(0);
    recv::stream stream(config);
    stream.emplace_reader<recv::rdma_reader>(rdma);

    // The consumer: takes complete heaps as a block's work() would, timing them.
    std::atomic<std::uint64_t> received{ 0 };
    std::chrono::steady_clock::time_point first{};
    std::chrono::steady_clock::time_point last{};
    heap_consumer consumer(stream, [&] {
        last = std::chrono::steady_clock::now();
        if (received++ == 0)
            first = last;
    });

    cpu_times used;
    // The agent connects now that the reader listens.
    const sender_report sent = receive_until_settled(
        [&] { return agent.send(endpoint, options.sender(packet)); },
        stream,
        recv_stat::heaps,
        [&] { consumer.stop(); },
        used);

    link_result r;
    r.heaps_sent = sent.result.data_heaps;
    r.heaps_received = received.load();
    r.messages = stream.get_stats()[recv_stat::packets];
    r.send_gbps = sent.achieved_gbps;
    const double seconds = std::chrono::duration<double>(last - first).count();
    if (r.heaps_received > 1 && seconds > 0)
        r.recv_gbps = double(r.heaps_received - 1) * heap_size * 8e-9 / seconds;
    r.recv_cpu = cpu_per_gib::of(used, r.heaps_received * heap_size);
    r.send_cpu = cpu_per_gib::of(sent.cpu, r.heaps_sent * heap_size);
    return r;
}

std::string cpu_text(const std::optional<cpu_per_gib>& cpu)
{
    return cpu ? describe(*cpu) : std::string("no figure");
}

void sender_cpu_rows(csv_writer& csv,
                     const csv_writer::run& row,
                     const std::optional<cpu_per_gib>& cpu)
{
    if (!cpu)
        return;
    csv.row(row, "sender_cpu_user_s_per_gib", cpu->user);
    csv.row(row, "sender_cpu_sys_s_per_gib", cpu->sys);
    csv.row(row, "sender_cpu_s_per_gib", cpu->total());
}

/*! One path's runs and medians; \return its median receive Gb/s. */
double run_path(const bench_options& options,
                sender_agent& agent,
                std::size_t packet,
                bool rdma_write,
                double raw_gbps,
                csv_writer& csv)
{
    const std::string name = rdma_write ? "rdma-write" : "send-recv";
    const std::string bench = rdma_write ? "rdma_write" : "rdma_send_recv";
    std::vector<double> recv_rates;
    std::vector<double> send_rates;
    std::vector<cpu_per_gib> recv_cpus;
    std::vector<cpu_per_gib> send_cpus;
    for (int run = 1; run <= options.runs; run++) {
        const link_result r = link_trial(options, agent, packet, rdma_write);
        std::cout << "  " << name << " run " << run << "/" << options.runs
                  << ": received " << r.heaps_received << "/" << r.heaps_sent
                  << " heaps (" << r.messages << " messages) at " << r.recv_gbps
                  << " Gb/s, sent at " << r.send_gbps << " Gb/s; receiver "
                  << cpu_text(r.recv_cpu) << ", sender " << cpu_text(r.send_cpu)
                  << std::endl;
        if (r.heaps_received != r.heaps_sent)
            throw std::runtime_error(name + ": " + std::to_string(r.heaps_sent) +
                                     " heaps sent but " +
                                     std::to_string(r.heaps_received) +
                                     " received complete: a reliable link lost heaps");
        recv_rates.push_back(r.recv_gbps);
        send_rates.push_back(r.send_gbps);
        if (r.recv_cpu)
            recv_cpus.push_back(*r.recv_cpu);
        if (r.send_cpu)
            send_cpus.push_back(*r.send_cpu);
        const csv_writer::run row{ bench, packet, 0.0, std::to_string(run) };
        csv.row(row, "gbps", r.recv_gbps);
        csv.row(row, "send_gbps", r.send_gbps);
        csv.row(row, "heaps_sent", r.heaps_sent);
        csv.row(row, "heaps_received", r.heaps_received);
        csv.row(row, "packets_received", r.messages);
        csv.cpu_rows(row, r.recv_cpu);
        sender_cpu_rows(csv, row, r.send_cpu);
    }
    const double recv_gbps = median(recv_rates);
    const double ratio = raw_gbps > 0 ? recv_gbps / raw_gbps : 0.0;
    const auto recv_cpu = median_cpu(recv_cpus);
    const auto send_cpu = median_cpu(send_cpus);
    std::cout << "rdma " << name << " packet " << packet << ": received " << recv_gbps
              << " Gb/s, sent " << median(send_rates) << " Gb/s (medians of "
              << options.runs << "); " << ratio << " x raw (target >= " << target_ratio
              << ": " << (ratio >= target_ratio ? "met" : "missed") << ")\n"
              << "rdma " << name << " packet " << packet << " CPU: receiver "
              << cpu_text(recv_cpu) << ", sender " << cpu_text(send_cpu)
              << " of heap payload (medians)" << std::endl;
    const csv_writer::run medians{ bench, packet, 0.0, "median" };
    csv.row(medians, "gbps", recv_gbps);
    csv.row(medians, "send_gbps", median(send_rates));
    csv.row(medians, "ratio_to_raw", ratio);
    csv.cpu_rows(medians, recv_cpu);
    sender_cpu_rows(csv, medians, send_cpu);
    return recv_gbps;
}

} // namespace

int run_rdma(const bench_options& options, csv_writer& csv)
{
    // First: the agent must be forked before this process uses verbs.
    sender_agent agent(options.sender_netns);
    std::cout << "rdma: the rdma link on " << options.address
              << " (receiving ends in this process, sending ends in a child process"
              << (options.sender_netns.empty()
                      ? std::string()
                      : " in network namespace " + options.sender_netns)
              << "), " << options.heap_size << "-byte heaps, " << options.seconds
              << " s per run, beside raw RDMA writes of the same message size between "
                 "two RC QPs (rdma_cm, no SPEAD) in the same run (CPU figures: each "
                 "process's user and sys time, emulator threads included, per GiB of "
                 "heap payload); "
              << load_average() << "\n";
    std::vector<std::string> summary;
    for (std::size_t packet : options.packets) {
        std::vector<double> raw_rates;
        std::vector<cpu_per_gib> raw_cpus;
        std::vector<cpu_per_gib> writer_cpus;
        for (int run = 1; run <= options.runs; run++) {
            raw_write_options raw;
            raw.address = options.address;
            raw.port = free_tcp_port(options.address);
            raw.message = packet;
            raw.depth = recv::rdma_config::default_rdma_depth;
            raw.seconds = options.seconds;
            const cpu_times before = cpu_times::of_process();
            cpu_times written;
            const raw_write_result r =
                run_raw_writes(raw, [&](const raw_write_options& o) {
                    const raw_sent sent = agent.write_raw(o);
                    written = sent.cpu;
                    return sent.result;
                });
            // This process is the target end alone, the agent the writer alone.
            const std::uint64_t bytes = r.messages * r.message_bytes;
            const auto cpu = cpu_per_gib::of(cpu_times::of_process() - before, bytes);
            const auto writer_cpu = cpu_per_gib::of(written, bytes);
            std::cout << "  raw RDMA writes run " << run << "/" << options.runs << ": "
                      << r.gbps() << " Gb/s (" << r.messages << " writes of "
                      << r.message_bytes << " bytes, " << raw.depth << " in flight, in "
                      << r.seconds << " s); target " << cpu_text(cpu) << ", writer "
                      << cpu_text(writer_cpu) << std::endl;
            raw_rates.push_back(r.gbps());
            if (cpu)
                raw_cpus.push_back(*cpu);
            if (writer_cpu)
                writer_cpus.push_back(*writer_cpu);
            const csv_writer::run row{ "rdma_raw", packet, 0.0, std::to_string(run) };
            csv.row(row, "gbps", r.gbps());
            csv.row(row, "messages", r.messages);
            csv.cpu_rows(row, cpu);
            sender_cpu_rows(csv, row, writer_cpu);
        }
        const double raw_gbps = median(raw_rates);
        const auto raw_cpu = median_cpu(raw_cpus);
        const auto writer_cpu = median_cpu(writer_cpus);
        std::cout << "rdma raw packet " << packet << ": " << raw_gbps
                  << " Gb/s (median of " << options.runs << "); target "
                  << cpu_text(raw_cpu) << ", writer " << cpu_text(writer_cpu)
                  << " (medians)" << std::endl;
        const csv_writer::run medians{ "rdma_raw", packet, 0.0, "median" };
        csv.row(medians, "gbps", raw_gbps);
        csv.cpu_rows(medians, raw_cpu);
        sender_cpu_rows(csv, medians, writer_cpu);
        std::ostringstream lines;
        lines << "rdma_raw_gbps_" << packet << ": " << raw_gbps << "\n";
        for (bool rdma_write : { true, false }) {
            const double gbps =
                run_path(options, agent, packet, rdma_write, raw_gbps, csv);
            const std::string key = rdma_write ? "rdma_write" : "rdma_send_recv";
            lines << key << "_gbps_" << packet << ": " << gbps << "\n"
                  << key << "_ratio_" << packet << ": "
                  << (raw_gbps > 0 ? gbps / raw_gbps : 0.0) << "\n";
        }
        summary.push_back(lines.str());
    }
    std::cout << "load: " << load_average() << "\n";
    for (const std::string& s : summary)
        std::cout << s;
    return 0;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
