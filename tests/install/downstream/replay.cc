/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// A downstream program: replays a SPEAD capture through an installed spead.source
// into a vector sink and says what came out.
//
//     spead_replay CAPTURE.pcap

#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/spead/source.h>
#include <gnuradio/top_block.h>
#include <cstdint>
#include <iostream>

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::cerr << "usage: spead_replay CAPTURE.pcap\n";
        return 2;
    }
    auto tb = gr::make_top_block("spead_replay");
    // The parts of the config in C++ (GRC and Python give the same options by name).
    gr::spead::source_config config;
    config.set_transport("pcap").set_capture_file(argv[1]).set("endpoints", "");
    config.items.set_item_type("int32");
    auto source = gr::spead::source::make(config);
    auto sink = gr::blocks::vector_sink_i::make();
    tb->connect(source, 0, sink, 0);
    tb->run();

    const auto stats = source->stats();
    std::cout << "downstream: replayed " << stats.at("heaps_output") << " heaps, "
              << sink->data().size() << " items, " << sink->tags().size() << " tags from "
              << argv[1] << std::endl;
    return sink->data().empty() ? 1 : 0;
}
