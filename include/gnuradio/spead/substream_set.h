/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_SUBSTREAM_SET_H
#define INCLUDED_SPEAD_SUBSTREAM_SET_H

#include <gnuradio/spead/api.h>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {

/*!
 * \brief The substreams a receiver takes (values of substream_item), in output
 * order: output i carries substream id(i); heaps of any other substream are another
 * host's share (heaps_other_substream).
 *
 * Two ways to say it, one set: first_substream F with N substreams is the range
 * F .. F + N - 1 (the simple form); substream_ids names them one by one, in any
 * order ("8-11", "8,9,10,11", "0-1,8-9"; a list or range in Python). choose() is the
 * one validation of both, used by spead.source, spead_recv, recv::continuous_config
 * and the declarative chunk placement.
 */
class SPEAD_API substream_set
{
public:
    static constexpr std::size_t npos = ~std::size_t(0);

    /*! Substreams \p first .. \p first + \p count - 1. */
    explicit substream_set(std::uint64_t first = 0, std::size_t count = 1);

    /*!
     * The set a receiver with \p substreams outputs takes: \p ids when given (then
     * first_substream must be 0 and \p ids hold one id per output, none twice), else
     * first_substream on. Anything but substream 0 alone needs a substream_item.
     * \throws std::invalid_argument naming the parameter, the value and the fix
     */
    static substream_set choose(std::uint64_t first_substream,
                                const std::vector<std::uint64_t>& ids,
                                std::size_t substreams,
                                std::uint64_t substream_item);

    /*! Ids from text: comma-separated ids and ranges FIRST-LAST (inclusive), e.g.
     * "8-11" or "8,9,10,11". \throws std::invalid_argument naming substream_ids */
    static std::vector<std::uint64_t> parse(const std::string& text);

    std::size_t size() const { return d_count; }
    /*! The substream output \p index carries. */
    std::uint64_t id(std::size_t index) const
    {
        return d_by_value.empty() ? d_first + index : d_ids[index];
    }
    /*! The output of substream \p value, or npos if this receiver does not take it.
     * A range costs a subtraction, a list a binary search. */
    std::size_t index_of(std::uint64_t value) const
    {
        if (d_by_value.empty()) {
            // Values below first wrap to large ones, so one comparison covers both.
            const std::uint64_t offset = value - d_first;
            return offset < d_count ? std::size_t(offset) : npos;
        }
        return index_in_list(value);
    }
    /*! "8 .. 11" or "8, 10, 9": for messages. */
    std::string describe() const;

private:
    std::size_t index_in_list(std::uint64_t value) const;

    std::uint64_t d_first = 0;
    std::size_t d_count = 1;
    std::vector<std::uint64_t> d_ids; //!< a list that is no range: output order
    /*! (id, output) sorted by id; empty for a range */
    std::vector<std::pair<std::uint64_t, std::size_t>> d_by_value;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_SUBSTREAM_SET_H */
