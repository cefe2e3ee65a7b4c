/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Which substreams a receiver takes: first_substream's range or substream_ids' list,
// validated once, and the lookup from a heap's substream to its output.

#include <gnuradio/spead/substream_set.h>
#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace gr {
namespace spead {

namespace {

/*! More ids than any receiver has outputs: a typo, not a plan. */
constexpr std::uint64_t max_ids = 65536;

std::string trimmed(const std::string& text)
{
    std::size_t begin = 0;
    std::size_t end = text.size();
    while (begin < end && std::isspace(static_cast<unsigned char>(text[begin])))
        begin++;
    while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1])))
        end--;
    return text.substr(begin, end - begin);
}

bool parse_id(const std::string& text, std::uint64_t& value)
{
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
        return false;
    try {
        std::size_t used = 0;
        value = std::stoull(text, &used, 0);
        return used == text.size();
    } catch (const std::exception&) {
        return false;
    }
}

} // namespace

substream_set::substream_set(std::uint64_t first, std::size_t count)
    : d_first(first), d_count(count)
{
}

std::vector<std::uint64_t> substream_set::parse(const std::string& text)
{
    std::vector<std::uint64_t> ids;
    if (trimmed(text).empty())
        return ids;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = text.find(',', start);
        const std::string part = trimmed(text.substr(start, comma - start));
        const std::size_t dash = part.find('-', 1);
        std::uint64_t first = 0;
        std::uint64_t last = 0;
        const bool ok = dash == std::string::npos
                            ? parse_id(part, first) && parse_id(part, last)
                            : parse_id(trimmed(part.substr(0, dash)), first) &&
                                  parse_id(trimmed(part.substr(dash + 1)), last) &&
                                  first <= last;
        if (!ok)
            throw std::invalid_argument(
                "substream_ids: '" + part + "' in '" + text +
                "' is not a substream id or range; give ids and ranges FIRST-LAST, "
                "e.g. 8-11 or 8,9,10,11");
        if (last - first >= max_ids || ids.size() + (last - first) >= max_ids)
            throw std::invalid_argument("substream_ids: '" + text + "' names more than " +
                                        std::to_string(max_ids) +
                                        " substreams; give this receiver's share only");
        for (std::uint64_t id = first;; id++) {
            ids.push_back(id);
            if (id == last)
                break;
        }
        if (comma == std::string::npos)
            return ids;
        start = comma + 1;
    }
}

substream_set substream_set::choose(std::uint64_t first_substream,
                                    const std::vector<std::uint64_t>& ids,
                                    std::size_t substreams,
                                    std::uint64_t substream_item)
{
    if (ids.empty()) {
        if (first_substream != 0 && substream_item == 0)
            throw std::invalid_argument(
                "first_substream: " + std::to_string(first_substream) +
                " with no substream_item; give the id of the immediate item naming "
                "each heap's substream, or use first_substream 0");
        if (first_substream > ~std::uint64_t(0) - substreams)
            throw std::invalid_argument(
                "first_substream: " + std::to_string(first_substream) + " + " +
                std::to_string(substreams) +
                " substreams passes 2^64; give a smaller first substream");
        return substream_set(first_substream, substreams);
    }
    if (first_substream != 0)
        throw std::invalid_argument(
            "first_substream: " + std::to_string(first_substream) +
            " with substream_ids: give one or the other (first_substream F is short "
            "for substream_ids F .. F + substreams - 1); use first_substream 0");
    if (ids.size() != substreams)
        throw std::invalid_argument(
            "substream_ids: " + std::to_string(ids.size()) + " ids for " +
            std::to_string(substreams) +
            " substreams (outputs); give one id per output, or set substreams to " +
            std::to_string(ids.size()));
    if (substream_item == 0 && !(ids.size() == 1 && ids[0] == 0))
        throw std::invalid_argument(
            "substream_ids: given with no substream_item; give the id of the "
            "immediate item naming each heap's substream");
    substream_set set(ids[0], ids.size());
    bool is_range = true;
    for (std::size_t i = 0; i < ids.size(); i++)
        is_range = is_range && ids[i] - ids[0] == i && ids[i] >= ids[0];
    if (is_range)
        return set;
    for (std::size_t i = 0; i < ids.size(); i++)
        set.d_by_value.emplace_back(ids[i], i);
    std::sort(set.d_by_value.begin(), set.d_by_value.end());
    for (std::size_t i = 1; i < set.d_by_value.size(); i++)
        if (set.d_by_value[i].first == set.d_by_value[i - 1].first)
            throw std::invalid_argument(
                "substream_ids: " + std::to_string(set.d_by_value[i].first) +
                " is given twice; each output takes a substream of its own");
    set.d_ids = ids;
    return set;
}

std::size_t substream_set::index_in_list(std::uint64_t value) const
{
    const auto it = std::lower_bound(
        d_by_value.begin(), d_by_value.end(), std::make_pair(value, std::size_t(0)));
    return it != d_by_value.end() && it->first == value ? it->second : npos;
}

std::string substream_set::describe() const
{
    if (d_by_value.empty())
        return d_count == 1 ? std::to_string(d_first)
                            : std::to_string(d_first) + " .. " +
                                  std::to_string(d_first + d_count - 1);
    std::string text;
    for (std::uint64_t id : d_ids)
        text += (text.empty() ? "" : ", ") + std::to_string(id);
    return text;
}

} // namespace spead
} // namespace gr
