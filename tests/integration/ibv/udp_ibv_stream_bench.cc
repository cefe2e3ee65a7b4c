/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead_ibv_stream_bench: sends heaps through send::udp_ibv_stream as fast as the NIC
// takes them, for counting instructions per packet under callgrind (not a test; the
// emulated NIC's wall-clock speed means nothing). Run it in host 1 of a two-host
// topology with the emulator injected, under callgrind collecting only the writer
// thread and leaving out the emulator's entry points:
//
//   tests/netns/netns-topology --hosts 2 --link veth -- bash -c 'ip netns exec
//     $TOPO_NS_1 env LD_LIBRARY_PATH=build/tests/emulator/lib SPEAD_EMU_NETDEVS=eth0
//     valgrind --tool=callgrind
//       --toggle-collect="gr::spead::send::stream::impl::writer_loop()"
//       --toggle-collect="spead_emu::operations::post_send(ibv_qp*, ibv_send_wr*,
//                                                          ibv_send_wr**)"
//       --toggle-collect="spead_emu::operations::poll_cq(ibv_cq*, int, ibv_wc*)"
//       --toggle-collect="spead_emu::operations::req_notify_cq(ibv_cq*, int)"
//       --toggle-collect=ibv_get_cq_event --toggle-collect=ibv_ack_cq_events
//       build/tests/integration/ibv/spead_ibv_stream_bench --heaps 200 --mode copy'
//
// (one command line; each toggle-collect entered inside writer_loop switches
// collection off until it returns). Under valgrind glibc's memcpy copies large blocks
// with rep movsb, which callgrind counts per byte: add
// GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=4294967295 for a vector copy loop.
//
// Options: --interface ADDRESS  --destination IP:PORT (239.10.0.1:7148, nobody listens)
//          --heaps N (200)  --heap-size BYTES (1 MiB)  --packet-size BYTES (8972)
//          --mode zero-copy|copy  --comp-vector N (0; negative busy-polls)
// Prints the stream's counters; exit 0 when every heap was sent.

#include <gnuradio/spead/send_udp_ibv.h>
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace gr::spead;

int main(int argc, char** argv)
{
    std::map<std::string, std::string> options{
        { "interface", "10.77.0.1" }, { "destination", "239.10.0.1:7148" },
        { "heaps", "200" },           { "heap-size", "1048576" },
        { "packet-size", "8972" },    { "mode", "zero-copy" },
        { "comp-vector", "0" }
    };
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strncmp(argv[i], "--", 2) != 0 || !options.count(argv[i] + 2)) {
            std::cerr << "spead_ibv_stream_bench: unknown option " << argv[i] << "\n";
            return 2;
        }
        options[argv[i] + 2] = argv[i + 1];
    }
    const std::size_t heaps = std::stoul(options["heaps"]);
    const std::size_t heap_size = std::stoul(options["heap-size"]);
    const bool zero_copy = options["mode"] == "zero-copy";

    // Two heaps' worth of item memory; heaps alternate between them (the contents do
    // not matter here).
    std::vector<std::uint8_t> memory(2 * heap_size);
    for (std::size_t i = 0; i < memory.size(); i++)
        memory[i] = std::uint8_t(i * 7);

    send::stream_config config;
    config.set_max_packet_size(std::stoul(options["packet-size"])).set_max_heaps(4);
    send::udp_ibv_config ibv;
    ibv.set_interface(options["interface"])
        .set_endpoints(options["destination"])
        .set_comp_vector(std::stoi(options["comp-vector"]));
    if (zero_copy)
        ibv.add_memory_region(memory.data(), memory.size());
    boost::asio::io_context io;
    send::udp_ibv_stream stream(io, config, ibv);

    std::vector<send::heap> hs(2);
    for (int i = 0; i < 2; i++)
        hs[i].add_item(0x1000, memory.data() + i * heap_size, heap_size, false);
    std::atomic<std::size_t> sent{ 0 };
    auto handler = [&sent](const boost::system::error_code& ec, std::size_t) {
        sent += !ec;
    };
    for (std::size_t i = 0; i < heaps; i++) {
        // The queue holds a few heaps so the writer never idles; when it is full, wait
        // (outside the writer thread, so outside what callgrind collects).
        while (!stream.async_send_heap(hs[i % 2], handler, std::int64_t(i + 1)))
            std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    stream.flush();
    io.run(); // the handlers
    for (const auto& [name, value] : stream.get_stats().items())
        std::cout << name << ": " << value << "\n";
    return sent == heaps ? 0 : 1;
}
