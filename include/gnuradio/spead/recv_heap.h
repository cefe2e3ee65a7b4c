/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RECV_HEAP_H
#define INCLUDED_SPEAD_RECV_HEAP_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/descriptor.h>
#include <gnuradio/spead/flavour.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace gr {
namespace spead {
namespace recv {

/*! What a heap that leaves the live window incomplete becomes. */
enum class incomplete_heaps {
    drop,   //!< counted (incomplete_heaps_evicted / _flushed) and freed
    deliver //!< handed on zero-filled, counted also in incomplete_heaps_delivered
};

/*! One item of a received heap, in wire order. */
struct item {
    std::uint64_t id = 0;
    bool is_immediate = false;
    /*! Addressed: points into the heap payload. Immediate: the value as big-endian
     * bytes, flavour::heap_address_bytes() wide (right-aligned, as on the wire). */
    const std::uint8_t* data = nullptr;
    std::size_t length = 0;
    /*! The immediate value as a number (immediates only). */
    std::uint64_t immediate_value = 0;
};

namespace detail {
struct heap_storage;
class heap_pool;
/*! Returns storage to its pool (or frees it if the pool is gone). */
struct SPEAD_API heap_storage_release {
    std::shared_ptr<heap_pool> pool;
    void operator()(heap_storage* storage) const;
};
using heap_storage_ptr = std::unique_ptr<heap_storage, heap_storage_release>;
} // namespace detail

/*!
 * \brief A received heap: its cnt, items in wire order and payload.
 *
 * Move-only; its memory comes from the stream's pool and goes back there when the
 * heap is destroyed. Item data pointers stay valid as long as the heap lives.
 */
class SPEAD_API heap
{
public:
    heap() = default;
    explicit heap(detail::heap_storage_ptr storage) : d_storage(std::move(storage)) {}
    // Inline: a heap is moved several times on its way to the consumer, and each
    // move is then a few instructions, not a call. Only the release of the storage
    // (heap_storage_release) is out of line.
    heap(heap&&) noexcept = default;
    heap& operator=(heap&&) noexcept = default;
    ~heap() = default;

    /*! False for a default-constructed or moved-from heap. */
    explicit operator bool() const { return bool(d_storage); }

    std::uint64_t cnt() const;
    const gr::spead::flavour& get_flavour() const;
    /*! All payload bytes arrived. Incomplete heaps are only delivered under the
     * deliver policy, zero-filled where packets were missing. */
    bool is_complete() const;
    /*! Payload size: HEAP_SIZE, or the extent received when no packet carried it. */
    std::uint64_t size() const;
    /*! Payload bytes that actually arrived (== size() when complete). */
    std::uint64_t received_bytes() const;
    /*! Packets that contributed to this heap. */
    std::size_t packets() const;
    /*! Payload byte ranges [begin, end) that arrived, sorted and coalesced (one
     * range [0, size()) for a complete heap). */
    std::vector<std::pair<std::uint64_t, std::uint64_t>> received_ranges() const;
    const std::uint8_t* payload() const;
    const std::vector<item>& items() const;
    /*! First item with this id, or nullptr. */
    const item* find(std::uint64_t id) const;
    /*! STREAM_CTRL value if the heap has one. */
    bool has_stream_ctrl(std::uint64_t value) const;
    bool is_stop() const;
    /*! Decoded DESCRIPTOR items (malformed ones are skipped). */
    std::vector<descriptor> descriptors(bool pyspead_widths = false) const;


private:
    detail::heap_storage_ptr d_storage;
};

} // namespace recv
} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RECV_HEAP_H */
