/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_ibv_reader_bench: heaps of jumbo packets from a kernel sender in host 1 to a
// recv::udp_ibv_reader in host 2, over the emulated NIC, for counting the instructions
// the reader and the assembler spend per packet under callgrind (the emulator's own
// work is excluded by collecting only inside the reader's per-batch function, which
// parses the frames a poll of the receive queue returned and hands them to the stream;
// the queue's poll and repost are outside it):
//
//   tests/netns/netns-topology --hosts 2 --link veth -- env
//       LD_LIBRARY_PATH=<build>/tests/emulator/lib SPEAD_EMU_NETDEVS=eth0
//       valgrind --tool=callgrind
//       --toggle-collect='gr::spead::recv::udp_ibv_reader::impl::handle_completions*'
//       <build>/tests/integration/ibv/spead_ibv_reader_bench [heaps] [packets per heap]
//       [comp_vector]
//
// (one command line). With SPEAD_EMU_MODEL=cx5 the reader uses a multi-packet receive
// queue; without, fixed slots. Collecting in gr::spead::recv::udp_ibv_reader::run*
// instead counts the whole receive thread (the emulator's CQ too).
//
// Not a test: it prints what arrived (and what was dropped) and exits 0 if every heap
// arrived whole.

#include "ibv_test_support.h"
#include <gnuradio/spead/recv_udp_ibv.h>
#include <gnuradio/spead/send_udp.h>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <vector>

using namespace gr::spead;
using namespace std::chrono_literals;

int main(int argc, char** argv)
{
    const std::size_t heaps = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 250;
    const std::size_t packets_per_heap =
        argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 8;
    const int comp_vector = argc > 3 ? std::atoi(argv[3]) : 0;
    constexpr std::size_t packet = 8972; // UDP payload of a 9000-byte frame
    constexpr std::uint64_t payload_id = 0x1000;
    if (!ibv_test::have_topology(2)) {
        std::cerr << "run under tests/netns/netns-topology --hosts 2" << std::endl;
        return 2;
    }
    ibv_test::enter_host(2);

    // SPEAD packet headers take 8 + 8 * 5 bytes: the payload fills the rest.
    const std::size_t payload_per_packet = packet - 48;
    const std::size_t heap_size = payload_per_packet * packets_per_heap;
    recv::stream rs(recv::stream_config().set_max_heaps(4).set_queue_heaps(64));
    recv::udp_ibv_config config;
    config.set_endpoints(ibv_test::host(2).ip + ":7170")
        .set_interface(ibv_test::host(2).ip)
        .set_comp_vector(comp_vector);
    const bool multi_packet =
        rs.emplace_reader<recv::udp_ibv_reader>(config).uses_multi_packet_receive_queue();

    std::thread sender([&] {
        ibv_test::in_host there(1);
        boost::asio::io_context io;
        // Slow enough that the emulator, under valgrind too, keeps up.
        send::udp_stream tx(
            io,
            send::stream_config().set_max_packet_size(packet).set_rate(20e6),
            send::udp_config().set_endpoints(ibv_test::host(2).ip + ":7170"));
        std::vector<std::uint8_t> payload(heap_size);
        for (std::size_t i = 0; i < heaps; i++) {
            ibv_test::fill_pattern(payload.data(), payload.size(), i + 1);
            send::heap h;
            h.add_item(payload_id, payload.data(), payload.size(), false);
            tx.send_heap(h, std::int64_t(i + 1));
        }
    });

    std::size_t whole = 0;
    const auto deadline = std::chrono::steady_clock::now() + 600s;
    while (whole < heaps && std::chrono::steady_clock::now() < deadline) {
        recv::heap h;
        if (rs.pop(h, 1s) != recv::stream::pop_result::heap)
            continue;
        whole += ibv_test::pattern_mismatches(h, payload_id, heap_size, h.cnt()) == 0;
    }
    sender.join();
    rs.stop();
    const recv_stats stats = rs.get_stats();
    std::cout << "receive queue: " << (multi_packet ? "multi-packet" : "slots") << "\n"
              << "heaps whole: " << whole << " of " << heaps << "\n"
              << "packets: " << stats[recv_stat::packets] << "\n"
              << "frames_dropped_no_buffer: "
              << stats[recv_stat::frames_dropped_no_buffer] << "\n"
              << "batches: " << stats[recv_stat::batches] << "\n"
              << "max_batch: " << stats[recv_stat::max_batch] << std::endl;
    return whole == heaps ? 0 : 1;
}
