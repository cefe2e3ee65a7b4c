/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_STREAM_WATCH_H
#define INCLUDED_SPEAD_APPS_STREAM_WATCH_H

// --metrics HOST:PORT and --progress SECONDS, which spead_recv and spead_send share:
// the tool's streams served to Prometheus (lib/metrics) and a live line on stderr,
// both read from the stats snapshots the streams keep.

#include "metrics/metrics_exposer.h"
#include "metrics/progress_line.h"
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/send_stream.h>
#include <boost/program_options.hpp>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace apps {

struct watch_options {
    std::string metrics;   //!< HOST:PORT; empty: not served
    double progress = 0.0; //!< seconds between progress lines; 0: none

    void add_to(boost::program_options::options_description& options);
    /*! \throws boost::program_options::error naming the flag and the fix */
    void check() const;
};

/*! Heaps and payload bytes a receiving tool took from its streams (any thread). */
struct taken_counts {
    std::atomic<std::uint64_t> heaps{ 0 };
    std::atomic<std::uint64_t> bytes{ 0 };

    void took(std::uint64_t payload_bytes)
    {
        heaps.fetch_add(1, std::memory_order_relaxed);
        bytes.fetch_add(payload_bytes, std::memory_order_relaxed);
    }
};

/*! What one tool's streams are watched with; destroy it before the streams. */
class stream_watch
{
public:
    stream_watch(const watch_options& options, std::string tool);

    /*! spead_recv: each stream (one per SOURCE, or one for them all with --joint)
     * labelled with its sources; \p transport of the endpoints (a source that is a
     * file is pcap). The progress line counts \p taken (continuous streams: the
     * heaps placed). */
    void watch_receivers(const std::vector<recv::stream*>& streams,
                         const std::vector<std::string>& sources,
                         const std::string& transport,
                         bool continuous,
                         const taken_counts& taken);
    /*! spead_send: its one stream, sending to \p endpoint over \p transport. */
    void watch_sender(const send::stream& stream,
                      const std::string& transport,
                      const std::string& endpoint);

private:
    /*! "TOOL: metrics at http://HOST:PORT/metrics" on stderr. */
    void say_where() const;

    watch_options d_options;
    std::string d_tool;
    metrics::registration d_registration;
    std::unique_ptr<metrics::progress_reporter> d_progress; // first to go
};

} // namespace apps
} // namespace spead
} // namespace gr

#endif
