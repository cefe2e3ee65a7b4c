/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/spead/stats.h>
#include <algorithm>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {
#define GR_SPEAD_STAT_NAME(name, text) #name,
#define GR_SPEAD_STAT_TEXT(name, text) text,
constexpr const char* recv_names[] = { GR_SPEAD_RECV_STATS(GR_SPEAD_STAT_NAME) };
constexpr const char* recv_texts[] = { GR_SPEAD_RECV_STATS(GR_SPEAD_STAT_TEXT) };
constexpr const char* send_names[] = { GR_SPEAD_SEND_STATS(GR_SPEAD_STAT_NAME) };
constexpr const char* send_texts[] = { GR_SPEAD_SEND_STATS(GR_SPEAD_STAT_TEXT) };
#undef GR_SPEAD_STAT_NAME
#undef GR_SPEAD_STAT_TEXT

const char* const* names_of(recv_stat) { return recv_names; }
const char* const* names_of(send_stat) { return send_names; }
} // namespace

const char* stat_name(recv_stat s) { return recv_names[static_cast<std::size_t>(s)]; }
const char* stat_name(send_stat s) { return send_names[static_cast<std::size_t>(s)]; }
const char* stat_description(recv_stat s)
{
    return recv_texts[static_cast<std::size_t>(s)];
}
const char* stat_description(send_stat s)
{
    return send_texts[static_cast<std::size_t>(s)];
}

template <typename Stat>
std::uint64_t counter_set<Stat>::at(const std::string& name) const
{
    const char* const* names = names_of(Stat{});
    for (std::size_t i = 0; i < size; i++)
        if (name == names[i])
            return d_values[i];
    throw std::out_of_range("no statistic named '" + name + "'");
}

template <typename Stat>
counter_set<Stat>& counter_set<Stat>::operator+=(const counter_set& other)
{
    for (std::size_t i = 0; i < size; i++)
        d_values[i] += other.d_values[i];
    // a maximum does not add up
    if constexpr (std::is_same_v<Stat, recv_stat>) {
        const auto m = static_cast<std::size_t>(recv_stat::max_batch);
        d_values[m] -= other.d_values[m];
        d_values[m] = std::max(d_values[m], other.d_values[m]);
    }
    return *this;
}

template <typename Stat>
std::vector<std::pair<std::string, std::uint64_t>> counter_set<Stat>::items() const
{
    const char* const* names = names_of(Stat{});
    std::vector<std::pair<std::string, std::uint64_t>> out;
    out.reserve(size);
    for (std::size_t i = 0; i < size; i++)
        out.emplace_back(names[i], d_values[i]);
    return out;
}

template class counter_set<recv_stat>;
template class counter_set<send_stat>;

} // namespace spead
} // namespace gr
