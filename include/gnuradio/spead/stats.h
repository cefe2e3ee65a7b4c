/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_STATS_H
#define INCLUDED_SPEAD_STATS_H

#include <gnuradio/spead/api.h>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace spead {

/*
 * Every counter is listed once here: enum name = printed name, and the sentence
 * that docs/statistics.md, the apps and the bindings show. Names follow spead2's
 * where the meaning is the same. Nothing is dropped without a counter saying so.
 */
#define GR_SPEAD_RECV_STATS(X)                                                           \
    X(heaps, "complete heaps handed on (incomplete ones are counted below)")             \
    X(incomplete_heaps_evicted, "incomplete heaps pushed out of the live-heap window")   \
    X(incomplete_heaps_flushed, "incomplete heaps still live when the stream stopped")   \
    X(packets, "valid SPEAD packets decoded")                                            \
    X(batches, "batches of packets handed over by the transport")                        \
    X(max_batch, "largest batch")                                                        \
    X(single_packet_heaps, "heaps that arrived in a single packet")                      \
    X(search_dist, "live heaps searched to place packets, summed")                       \
    X(packets_truncated, "rejected: shorter than its header, pointers or payload")       \
    X(packets_size_mismatch, "rejected: longer than 8 + 8 items + payload length")       \
    X(packets_bad_header, "rejected: wrong magic, version or flavour widths")            \
    X(packets_bad_specials,                                                              \
      "rejected: missing, repeated or addressed heap cnt/offset/length")                 \
    X(packets_bad_offset, "rejected: heap offset + payload length beyond the heap size") \
    X(packets_flavour_mismatch,                                                          \
      "rejected: flavour differs from its heap's first packet")                          \
    X(packets_heap_size_mismatch, "rejected: disagrees with its heap's size")            \
    X(packets_duplicate, "dropped: payload range already received")                      \
    X(packets_overlap, "rejected: payload range partly overlaps one received")           \
    X(packets_over_heap_limits,                                                          \
      "rejected: heap would exceed its fragment or item-pointer limits")                 \
    X(packets_late, "dropped: its heap was already retired incomplete")                  \
    X(packets_unsized, "rejected: no HEAP_SIZE, and the stream wants sized heaps")       \
    X(packets_out_of_order,                                                              \
      "rejected: not the next bytes of its heap, and the stream takes them in order")    \
    X(packets_heap_too_large, "dropped: belongs to a heap above max_heap_size")          \
    X(packets_after_stop, "ignored: arrived in a batch after the stream stopped")        \
    X(heaps_too_large, "dropped: heaps above max_heap_size")                             \
    X(incomplete_heaps_delivered,                                                        \
      "incomplete heaps handed on zero-filled (policy deliver)")                         \
    X(heaps_dropped_queue_full, "dropped: heap queue full (newest heap dropped)")        \
    X(reader_waits_queue_full,                                                           \
      "times a reader waited for the consumer: heap queue full (policy block)")          \
    X(heaps_dropped_partial_item, "dropped: payload not a whole number of stream items") \
    X(heaps_dropped_too_large_for_output,                                                \
      "dropped: payload larger than the output buffer allows")                           \
    X(heaps_without_payload,                                                             \
      "heaps with no stream payload (descriptors, control): metadata only")              \
    X(stop_heaps, "stream-stop heaps received")                                          \
    X(items_bad_address, "items dropped: address beyond the heap size")                  \
    X(datagrams_oversize, "dropped: datagram larger than the reader's max_size")         \
    X(reader_errors, "readers that failed for good (each ends the stream)")              \
    X(packets_dropped_socket_overflow, "dropped by the kernel: socket buffer full")      \
    X(runs_dropped_socket_overflow,                                                      \
      "dropped by the kernel, socket buffer full: coalesced runs, counted once each")    \
    X(frames_dropped_no_buffer, "dropped by the NIC: no receive buffer posted")          \
    X(ibv_multi_packet_queues,                                                           \
      "ibverbs readers receiving through a multi-packet (striding) queue; 0: slots")     \
    X(frames_not_ipv4_udp, "rejected frames: not IPv4 UDP")                              \
    X(frames_vlan, "rejected frames: VLAN tagged")                                       \
    X(frames_ip_options, "rejected frames: IPv4 header with options")                    \
    X(frames_fragmented, "rejected frames: IPv4 fragments")                              \
    X(frames_truncated, "rejected frames: shorter than their IPv4/UDP lengths")          \
    X(frames_filtered, "frames for other destinations (capture replay port filter)")     \
    X(positions_released,                                                                \
      "continuous: positions handed on (one heap per substream at each)")                \
    X(heaps_missing,                                                                     \
      "continuous: heaps output as zeros (none arrived, or dropped incomplete)")         \
    X(bytes_zero_filled, "continuous: bytes output as zeros (missing heaps and gaps)")   \
    X(heaps_late, "continuous: dropped: its position was already output")                \
    X(heaps_misaligned, "continuous: dropped: timestamp not first + k x timestamp_step") \
    X(heaps_duplicate_position,                                                          \
      "continuous: dropped: another heap already took its position and substream")       \
    X(heaps_bad_substream,                                                               \
      "continuous: dropped: substream item missing or not below substreams")             \
    X(heaps_wrong_size, "continuous: dropped: HEAP_SIZE missing or not the stream's")    \
    X(timestamp_resyncs,                                                                 \
      "continuous: timestamp jumps beyond the window (a sender restart): "               \
      "resynchronised")                                                                  \
    X(packets_refused_heap,                                                              \
      "continuous: dropped: packet of a heap refused (late, misaligned, wrong size...)") \
    X(control_heaps,                                                                     \
      "continuous: complete heaps without the timestamp item (descriptors)")             \
    X(packets_dropped_queue_full,                                                        \
      "continuous: dropped: its chunk was lost because the consumer fell behind")        \
    X(ibv_port_down_events,                                                              \
      "ibverbs: times the port went down (IBV_EVENT_PORT_ERR); frames then are lost")    \
    X(ibv_qp_recoveries,                                                                 \
      "ibverbs: times the receive queue went to the error state and was reset")          \
    X(heaps_other_substream,                                                             \
      "continuous: dropped: a substream this receiver does not take (outside "           \
      "first_substream .. + substreams - 1, or not in substream_ids)")                   \
    X(connections_accepted, "connected: connections accepted (each ends in one below)")  \
    X(connections_refused,                                                               \
      "connected: connections refused: peer not in allowed_peers, or max_connections "   \
      "reached")                                                                         \
    X(accept_failures,                                                                   \
      "connected: connections that could not be taken for want of descriptors, memory "  \
      "or registrations (the listener then rests)")                                      \
    X(connections_closed, "connected: connections the peer closed cleanly")              \
    X(connections_lost,                                                                  \
      "connected: connections ended by an error: reset, dead peer (peer_timeout)")       \
    X(connections_framing_errors,                                                        \
      "connected: connections ended: bytes that are not a SPEAD packet header")          \
    X(connections_frame_too_large,                                                       \
      "connected: connections ended: a packet longer than max_packet_size")              \
    X(connections_partial_frame,                                                         \
      "connected: connections closed mid-packet (the half-sent packet discarded)")       \
    X(connections_idle_timeout,                                                          \
      "connected: connections ended: nothing received for idle_timeout")                 \
    X(connections_stopped, "connected: connections still open when the stream stopped")  \
    X(receive_waits,                                                                     \
      "connected: times the heap queue was full and the reader waited (back-pressure)")

#define GR_SPEAD_SEND_STATS(X)                                                       \
    X(heaps, "heaps sent")                                                           \
    X(packets, "packets sent")                                                       \
    X(bytes, "UDP payload bytes sent")                                               \
    X(heaps_rejected_queue_full, "heaps refused: send queue full")                   \
    X(heaps_failed, "heaps not (fully) sent because of an error")                    \
    X(packets_failed, "packets the transport failed to send")                        \
    X(packets_zero_copy, "packets whose payload went out from a user memory region") \
    X(packets_copied, "packets whose payload was copied into a transmit slot")       \
    X(rate_limit_waits, "times the rate limiter made the writer wait")               \
    X(connections_established, "connected: connections made (first and reconnects)") \
    X(connect_failures,                                                              \
      "connected: connection attempts failed (refused, timed out, unreachable)")     \
    X(connections_lost, "connected: connections failed (reset, peer_timeout)")       \
    X(heaps_lost_in_flight,                                                          \
      "heaps that failed after part of them had gone out (cut short by an error)")   \
    X(send_waits, "connected: times the writer waited for a full socket")            \
    X(send_wait_us, "connected: microseconds the writer waited for the socket")      \
    X(writer_errors, "transports that failed for good (the device died; ends the sink)")

#define GR_SPEAD_STAT_ENUM(name, text) name,
enum class recv_stat : std::size_t { GR_SPEAD_RECV_STATS(GR_SPEAD_STAT_ENUM) count };
enum class send_stat : std::size_t { GR_SPEAD_SEND_STATS(GR_SPEAD_STAT_ENUM) count };
#undef GR_SPEAD_STAT_ENUM

/*! Printed name of a counter, e.g. "incomplete_heaps_evicted". */
SPEAD_API const char* stat_name(recv_stat s);
SPEAD_API const char* stat_name(send_stat s);
/*! One-line meaning of a counter. */
SPEAD_API const char* stat_description(recv_stat s);
SPEAD_API const char* stat_description(send_stat s);

/*!
 * \brief A snapshot of a stream's counters, indexed by enum or by name.
 */
template <typename Stat>
class counter_set
{
public:
    static constexpr std::size_t size = static_cast<std::size_t>(Stat::count);

    std::uint64_t& operator[](Stat s) { return d_values[static_cast<std::size_t>(s)]; }
    std::uint64_t operator[](Stat s) const
    {
        return d_values[static_cast<std::size_t>(s)];
    }
    /*! \throws std::out_of_range for an unknown name */
    std::uint64_t at(const std::string& name) const;

    /*! Adds another snapshot counter by counter; max_batch takes the maximum. */
    counter_set& operator+=(const counter_set& other);

    /*! (name, value) in declaration order: what the apps print as "name: value". */
    std::vector<std::pair<std::string, std::uint64_t>> items() const;

private:
    std::array<std::uint64_t, size> d_values{};
};

using recv_stats = counter_set<recv_stat>;
using send_stats = counter_set<send_stat>;

extern template class SPEAD_API counter_set<recv_stat>;
extern template class SPEAD_API counter_set<send_stat>;

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_STATS_H */
