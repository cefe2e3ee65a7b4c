/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The setters of rdma_config_base, recv::rdma_config and send::rdma_config, the checks
// across settings, and the GR_SPEAD_RDMA_* environment overrides. The listening and
// connecting settings the rdma transport shares with tcp are listen_config_base's and
// dial_config_base's: one rule, one message.

#include "rdma_uri.h"
#include "transport/config_checks.h"
#include "transport/network_interface.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/recv_rdma.h>
#include <gnuradio/spead/send_rdma.h>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

namespace {

std::size_t in_range(const char* parameter,
                     std::size_t value,
                     std::size_t min,
                     std::size_t max,
                     const char* meaning)
{
    if (value < min || value > max)
        throw std::invalid_argument(std::string(parameter) + ": " +
                                    std::to_string(value) + " is out of range; use " +
                                    std::to_string(min) + " to " + std::to_string(max) +
                                    " (" + meaning + ")");
    return value;
}

std::size_t unsigned_variable(const char* name, const char* text)
{
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || text[0] == '-')
        throw std::invalid_argument(std::string(name) + ": '" + text +
                                    "' is not a non-negative integer; set a number or "
                                    "unset it");
    return std::size_t(v);
}

/*! Applies GR_SPEAD_RDMA_<name> when it is set and not empty (logged): \p set gets
 * its text, \p number its value as a non-negative integer. */
template <typename Set>
void override_text(const char* name, Set&& set)
{
    const char* value = std::getenv(name);
    if (!value || !*value)
        return;
    set(value);
    static gr::logger logger("spead rdma environment");
    logger.info("{}={}: overrides the configuration", name, value);
}
template <typename Set>
void override_number(const char* name, Set&& set)
{
    override_text(name, [&](const char* v) { set(unsigned_variable(name, v)); });
}
} // namespace

template <typename Derived>
Derived& rdma_config_base<Derived>::set_endpoint(const std::string& text)
{
    const rdma::uri u = rdma::parse_uri(text, "endpoint", Derived::receives);
    // A name is refused here when it does not resolve ("" listens on every address).
    if (!u.host.empty())
        rdma::resolve_host(u.host, "endpoint");
    d_host = u.host;
    d_port = u.port;
    return self();
}

template <typename Derived>
Derived& rdma_config_base<Derived>::set_interface(const std::string& address_or_name)
{
    d_interface = transport::checked_interface(address_or_name);
    return self();
}

template class rdma_config_base<recv::rdma_config>;
template class rdma_config_base<send::rdma_config>;

namespace recv {

rdma_config& rdma_config::set_rdma_connections(std::size_t n)
{
    d_rdma_connections =
        in_range("rdma_connections",
                 n,
                 0,
                 max_max_connections,
                 "connections using the RDMA-write path; 0 = SendRecv only");
    return *this;
}

rdma_config& rdma_config::set_rdma_depth(std::size_t n)
{
    d_rdma_depth = in_range(
        "rdma_depth", n, 0, max_rdma_depth, "RDMA writes in flight per connection");
    return *this;
}

rdma_config& rdma_config::set_recv_depth(std::size_t n)
{
    d_recv_depth =
        in_range("recv_depth", n, 1, max_recv_depth, "receives posted per connection");
    return *this;
}

void validate(const rdma_config& config)
{
    if (!config.has_endpoint())
        throw std::invalid_argument(
            "endpoint: none given; set verbs://ADDR:PORT or verbs://:PORT to listen on");
    if (config.get_rdma_connections() > 0 && config.get_rdma_depth() == 0)
        throw std::invalid_argument(
            "rdma_depth: 0 with rdma_connections " +
            std::to_string(config.get_rdma_connections()) +
            ": an RDMA-write connection needs room for at least one write; set "
            "rdma_depth to 1 or more, or rdma_connections to 0 (SendRecv only)");
    // The ring's offsets travel as 32-bit immediates.
    constexpr std::uint64_t max_ring = 0xffffffffu;
    const std::uint64_t ring =
        std::uint64_t(config.get_rdma_depth()) * config.get_max_packet_size();
    if (config.get_rdma_connections() > 0 && ring > max_ring)
        throw std::invalid_argument(
            "rdma_depth: " + std::to_string(config.get_rdma_depth()) +
            " messages of max_packet_size " +
            std::to_string(config.get_max_packet_size()) + " make a ring of " +
            std::to_string(ring) + " bytes, above the limit of " +
            std::to_string(max_ring) +
            " (its offsets are 32-bit immediates); lower rdma_depth or "
            "max_packet_size, or set rdma_connections to 0 (SendRecv only)");
    if (config.get_rdma_connections() > 0 &&
        config.get_recv_depth() < config.get_rdma_depth())
        throw std::invalid_argument(
            "recv_depth: " + std::to_string(config.get_recv_depth()) +
            " is below rdma_depth (" + std::to_string(config.get_rdma_depth()) +
            "): every RDMA write with immediate uses a posted receive; raise recv_depth "
            "to rdma_depth or more");
}

rdma_config with_environment(rdma_config config)
{
    override_text("GR_SPEAD_RDMA_INTERFACE",
                  [&](const char* v) { config.set_interface(v); });
    override_number("GR_SPEAD_RDMA_CONNECTIONS",
                    [&](std::size_t n) { config.set_rdma_connections(n); });
    override_number("GR_SPEAD_RDMA_DEPTH",
                    [&](std::size_t n) { config.set_rdma_depth(n); });
    return config;
}

} // namespace recv

namespace send {

rdma_config& rdma_config::set_inline_bytes(std::size_t bytes)
{
    d_inline_bytes = in_range("inline_bytes",
                              bytes,
                              0,
                              max_inline_bytes,
                              "bytes sent inline; the device may grant less");
    return *this;
}

rdma_config& rdma_config::set_send_depth(std::size_t n)
{
    d_send_depth = in_range("send_depth", n, 1, max_send_depth, "messages in flight");
    return *this;
}

rdma_config with_environment(rdma_config config)
{
    override_text("GR_SPEAD_RDMA_INTERFACE",
                  [&](const char* v) { config.set_interface(v); });
    override_number("GR_SPEAD_RDMA_INLINE_BYTES",
                    [&](std::size_t n) { config.set_inline_bytes(n); });
    return config;
}

} // namespace send

} // namespace spead
} // namespace gr
