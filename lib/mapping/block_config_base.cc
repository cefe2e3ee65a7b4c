/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mapping/block_transport.h"
#include "mapping/sink_options.h"
#include "mapping/source_options.h"
#include "mapping/stats_timer.h"
#include "metrics/metrics_exposer.h"
#include <gnuradio/spead/block_config_base.h>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

const std::vector<option_rule<source_config>>& rules_of(const source_config*)
{
    return source_option_rules();
}

const std::vector<option_rule<sink_config>>& rules_of(const sink_config*)
{
    return sink_option_rules();
}

/*! The block's name in messages: spead.source, spead.sink. */
const char* block_of(const source_config*) { return "source"; }
const char* block_of(const sink_config*) { return "sink"; }

} // namespace

template <typename Derived>
void block_config_base<Derived>::apply(const option_list& options)
{
    const auto& rules = rules_of(&self());
    for (const auto& rule : rules)
        rule.apply(self(), rule.info.name, rule.info.default_value);
    // The transport first: the others go to its config (and to the others').
    for (const auto& [name, value] : options)
        if (name == "transport")
            set(name, value);
    for (const auto& [name, value] : options)
        if (name != "transport")
            set(name, value);
    check_refusal(d_transport == "auto" ? "udp" : d_transport);
}

template <typename Derived>
Derived& block_config_base<Derived>::set(const std::string& name,
                                         const option_value& value)
{
    const auto& rule = find_rule(rules_of(&self()), name, block_of(&self()));
    value.check(rule.info.kind, name);
    rule.apply(self(), name, value);
    return self();
}

template <typename Derived>
const std::vector<option_info>& block_config_base<Derived>::options()
{
    static const std::vector<option_info> infos = [] {
        std::vector<option_info> out;
        for (const auto& rule : rules_of(static_cast<const Derived*>(nullptr)))
            out.push_back(rule.info);
        return out;
    }();
    return infos;
}

template <typename Derived>
Derived& block_config_base<Derived>::set_transport(const std::string& name)
{
    check_transport_name(name,
                         Derived::receives ? transport_direction::receive
                                           : transport_direction::send);
    d_transport = name;
    return self();
}

template <typename Derived>
Derived& block_config_base<Derived>::set_stats_interval(double seconds)
{
    check_stats_interval(seconds);
    d_stats_interval = seconds;
    return self();
}

template <typename Derived>
Derived& block_config_base<Derived>::set_metrics(const std::string& address)
{
    if (!address.empty())
        metrics::listen_address(address); // throws naming metrics
    d_metrics = address;
    return self();
}

template <typename Derived>
std::string block_config_base<Derived>::refusal(const std::string& transport) const
{
    return first_refusal(d_refusals, transport);
}

template <typename Derived>
void block_config_base<Derived>::check_refusal(const std::string& transport) const
{
    const std::string refused = refusal(transport);
    if (!refused.empty())
        throw std::invalid_argument(refused);
}

template class block_config_base<source_config>;
template class block_config_base<sink_config>;

} // namespace spead
} // namespace gr
