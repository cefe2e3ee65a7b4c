/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_METRICS_METRICS_EXPOSER_H
#define INCLUDED_SPEAD_METRICS_METRICS_EXPOSER_H

/* Prometheus's pull exposition: one HTTP exposer per process and listen address,
 * shared by every block, tool stream and Python stream that names that address. Each
 * registers a sampler; a scrape of /metrics calls every sampler of the address and
 * serves what they report. The exposer closes when its last registration goes. */

#include "metrics/stream_sample.h"
#include <gnuradio/spead/api.h>
#include <cstdint>
#include <memory>
#include <string>

namespace gr {
namespace spead {
namespace metrics {

/*!
 * Checks a `metrics` listen address: IPV4:PORT, [IPV6]:PORT or :PORT (every
 * interface); port 0 takes a free one (registration::port() says which). Returns the
 * form the HTTP server takes.
 * \throws std::invalid_argument naming \p option, the value and the fix
 */
SPEAD_API std::string listen_address(const std::string& address,
                                     const std::string& option = "metrics");

class exposer_endpoint;

/*! A sampler served on an address, until this is destroyed (then no scrape calls
 * it again: destruction waits for a scrape in progress). Movable. */
class SPEAD_API registration
{
public:
    registration() = default;
    ~registration();
    registration(registration&& other) noexcept;
    registration& operator=(registration&& other) noexcept;
    registration(const registration&) = delete;
    registration& operator=(const registration&) = delete;

    explicit operator bool() const { return bool(d_endpoint); }
    /*! The TCP port the exposer listens on (the one chosen, for port 0). */
    std::uint16_t port() const;

private:
    friend SPEAD_API registration expose(const std::string&, sampler);
    registration(std::shared_ptr<exposer_endpoint> endpoint, std::uint64_t id);
    void reset();

    std::shared_ptr<exposer_endpoint> d_endpoint;
    std::uint64_t d_id = 0;
};

/*!
 * Serves \p sample's streams on http://ADDRESS/metrics, starting the address's
 * exposer if this process has none there yet.
 * \throws std::invalid_argument for a malformed address (see listen_address()),
 * std::runtime_error when the address cannot be listened on (in use, not local)
 */
SPEAD_API registration expose(const std::string& address, sampler sample);

} // namespace metrics
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_METRICS_METRICS_EXPOSER_H */
