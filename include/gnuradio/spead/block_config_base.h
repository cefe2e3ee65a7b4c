/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_BLOCK_CONFIG_BASE_H
#define INCLUDED_SPEAD_BLOCK_CONFIG_BASE_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/block_options.h>
#include <gnuradio/spead/config_setter.h>
#include <map>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief What source_config and sink_config share: options by name, the transport,
 * the stats interval and the capture file (\p Derived adds its parts).
 *
 * An option of the transport's config (endpoints, interface, buffer_size, ...) given
 * by name goes to every transport's config that has it, so that the order of the
 * options does not matter: a transport whose config refuses the value (an address
 * range for tcp, which takes one address) keeps the refusal, and reports it, naming
 * the option, if it is or becomes the transport. Setters throw std::invalid_argument
 * naming the option, the value and the fix.
 */
template <typename Derived>
class SPEAD_API block_config_base
{
public:
    /*! Sets one option by name (options() lists them). \throws std::invalid_argument
     * naming the option: unknown, of the wrong kind, or refused by its config */
    Derived& set(const std::string& name, const option_value& value);

    /*! The options: name, GRC id and tab, kind, default and documentation. */
    static const std::vector<option_info>& options();

    /*! `udp` (default), `ibverbs`, `auto` (ibverbs where usable, else udp), `pcap`,
     * `tcp` or `rdma`. */
    Derived& set_transport(const std::string& name);
    const std::string& get_transport() const { return d_transport; }

    /*! Seconds between `stats` messages, >= 0 (0, default: none). */
    Derived& set_stats_interval(double seconds);
    double get_stats_interval() const { return d_stats_interval; }

    /*! Serve the block's counters to Prometheus on this HOST:PORT (e.g.
     * 127.0.0.1:9148; :9148 on every interface), shared with every block of the process
     * that names it; empty (default): none. docs/monitoring.md. */
    Derived& set_metrics(const std::string& address);
    const std::string& get_metrics() const { return d_metrics; }

    /*! pcap: the capture file replayed (source) or written (sink). */
    Derived& set_capture_file(const std::string& path)
    {
        return detail::assign(self(), d_capture_file, path);
    }
    const std::string& get_capture_file() const { return d_capture_file; }

    /*! What a transport's config refused of the options given by name, or empty. */
    std::string refusal(const std::string& transport) const;
    /*! \throws std::invalid_argument with refusal(transport), if there is one */
    void check_refusal(const std::string& transport) const;

protected:
    block_config_base() = default;
    /*! Every option at its default, then \p options by name (the transport first).
     * Derived's constructors call it once their parts exist.
     * \throws std::invalid_argument naming the first bad option */
    void apply(const option_list& options);

private:
    template <typename>
    friend struct option_routes;

    Derived& self() { return static_cast<Derived&>(*this); }

    std::string d_transport = "udp";
    double d_stats_interval = 0.0;
    std::string d_capture_file;
    std::string d_metrics;
    /*! transport → option → why its config refused the value given by name */
    std::map<std::string, std::map<std::string, std::string>> d_refusals;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_BLOCK_CONFIG_BASE_H */
