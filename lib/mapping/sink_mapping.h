/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_SINK_MAPPING_H
#define INCLUDED_SPEAD_MAPPING_SINK_MAPPING_H

#include "mapping/item_type.h"
#include "mapping/send_slots.h" // logger, flavour, send heaps
#include <gnuradio/spead/descriptor.h>
#include <gnuradio/tags.h>
#include <gnuradio/types.h>
#include <unordered_map>
#include <atomic>
#include <map>

namespace gr {
namespace spead {

/*! What every heap spead.sink sends has, whatever the input mode (sink::make's
 * parameters). */
struct sink_heap_config {
    item_type type = item_type::parse("complex_float");
    std::size_t vlen = 1;
    std::uint64_t payload_item = 0x1000;
    gr::spead::flavour flavour;
    std::uint64_t cnt_start = 1; //!< cnt of the first heap (without a heap_cnt tag)
    std::uint64_t cnt_step = 1;
    /*! Heaps between repeated descriptors; 0: at the start and on change only. */
    std::size_t descriptor_interval = 0;
    std::string payload_name = "payload"; //!< empty: no descriptor for the payload
    std::string payload_description;
    byte_order_mode byte_order = byte_order_mode::as_is;
};

/*! What spead.sink's general_work() hands its mapping. */
struct sink_input {
    const gr_vector_const_void_star* items = nullptr; //!< per input
    const gr_vector_int* available = nullptr;         //!< items readable, per input
    std::uint64_t first = 0;  //!< stream offset of every input's first item
    std::size_t capacity = 0; //!< items the smallest upstream buffer holds at most
    /*! Unconsumed items stay where they are in the input buffers (GNU Radio's
     * double-mapped buffers), so heaps may be sent from them in place. */
    bool items_stay_put = true;
    /*! Appends input \p input's tags in [from, to) with key \p key (PMT_NIL: any). */
    std::function<void(std::size_t input,
                       std::uint64_t from,
                       std::uint64_t to,
                       const pmt::pmt_t& key,
                       std::vector<gr::tag_t>& tags)>
        tags;
    /*! Reads the `descriptors` port now (a tag names an item not yet described). */
    std::function<void()> read_descriptors;
};

/*!
 * \brief What spead.sink runs, one per input mode: stream_to_heap (`heaps`) and
 * stream_to_chunk (`continuous`). What both share lives here: the descriptors (the
 * payload's and those learnt), control heaps (start, descriptors, stop), the payload
 * in the configured byte order (or, as it is, in place from the input buffer: its
 * items are then consumed once sent), sending through send_slots, and the counters
 * data_heaps, control_heaps and heaps_rejected.
 *
 * Not thread-safe (the block's work thread); the counters may be read from any thread.
 */
class SPEAD_API sink_mapping
{
public:
    sink_mapping(const sink_heap_config& config, gr::logger_ptr logger);
    virtual ~sink_mapping();

    /*! Sends heaps of the input available (whole heaps only). \return the items
     * consumed, the same on every input. */
    virtual std::size_t send(const sink_input& in, send_slots& out) = 0;
    /*! Items each input needs before send() can send the next heap. */
    virtual std::size_t items_needed() const = 0;
    /*! The last send() left items sent in place unconsumed: the block must be called
     * again whatever arrives (send() then waits for their sends), not only once
     * items_needed() more are there, which the buffer might never hold beside them. */
    bool holds_input() const { return d_holds_input; }
    /*! Items per heap when heaps are cut by count (the scheduler then hands over
     * whole heaps); 0 when a length tag frames them. */
    virtual std::size_t fixed_heap_items() const = 0;
    /*! A new run: cnts start again, descriptors are due, counters are zeroed. */
    virtual void reset();
    /*! Counters by name: data_heaps, control_heaps, heaps_rejected and the mode's. */
    virtual std::map<std::string, std::uint64_t> counters() const;

    /*! Learns a descriptor (from the `descriptors` port): its name can then key tags,
     * and it goes out with the sink's descriptors. */
    void learn_descriptor(const descriptor& d);
    /*! Whether descriptors must go out before a data heap of \p items items: at the
     * start of a run, when they (or the payload's shape) changed, and every
     * descriptor_interval heaps. */
    bool descriptors_due(std::size_t items);
    /*! Builds a control heap: the descriptors (with stream start before the run's first
     * ones), stream stop. Empty when there is nothing to say. */
    void build_control_heap(send::heap& h, bool descriptors, bool stop);
    /*! The run's first descriptors went out (so a stop heap is worth sending). */
    bool run_started() const { return d_run_started; }
    /*! cnt of the next control heap: counting down from the flavour's largest, so
     * control heaps never take a cnt a heap_cnt tag might give. */
    std::uint64_t next_control_cnt() { return d_next_control_cnt--; }
    /*! Sends a control heap to every substream of \p out (errors logged). */
    void send_control_heap(send_slots& out, bool descriptors, bool stop);
    /*! At the end of a run: a stop heap to every substream, whatever the run sent. */
    void send_stop_heap(send_slots& out);

    /*! Copies \p items items to a heap's payload buffer in the configured byte order. */
    void
    copy_payload(std::uint8_t* dst, const std::uint8_t* src, std::size_t items) const;
    /*! A data heap was handed to the stream. */
    void data_heap_sent() { d_data_heaps++, d_heaps_since_descriptors++; }
    /*! A heap the stream refused (counted in heaps_rejected, said once). */
    void heap_rejected(const std::string& why);
    /*! A control heap was handed to the stream. */
    void control_heap_sent() { d_control_heaps++; }
    /*! Logs \p message as a warning the first time \p what happens. */
    void warn_once(const std::string& what, const std::string& message);

    std::size_t item_size() const { return d_item_size; }
    std::uint64_t data_heaps() const { return d_data_heaps.load(); }

protected:
    /*! Items of the input that are one heap's payload. */
    struct payload_span {
        const std::uint8_t* data;
        std::size_t items;
        std::uint64_t offset; //!< stream offset of the first
    };
    /*!
     * Sends \p p as a data heap on \p substream: descriptors first when due, then a
     * slot whose heap \p build (send::heap&, const std::uint8_t* payload,
     * std::uint64_t& cnt) -> bool fills with the heap's items and cnt (false: not
     * sent). The payload is sent in place, from the input buffer, when it is as it
     * goes out (no byte swap) and \p in's buffers keep items where they are and hold
     * two such heaps (one is sent while the next is written); the items are then held
     * until the heap is sent (settle()). Otherwise it is copied into the slot.
     */
    template <typename Build>
    void send_data_heap(send_slots& out,
                        const payload_span& p,
                        const sink_input& in,
                        std::size_t substream,
                        Build&& build)
    {
        if (sends_in_place(p.items, in, out)) {
            send_descriptors_if_due(out, p.items);
            const send_slots::slot_ref slot =
                out.acquire_in_place(d_heap_config.flavour, p.offset);
            finish_data_heap(out, slot, p.data, substream, std::forward<Build>(build));
            return;
        }
        const send_slots::slot_ref slot = begin_data_heap(out, p.items);
        copy_payload(slot.payload, p.data, p.items);
        finish_data_heap(out, slot, slot.payload, substream, std::forward<Build>(build));
    }
    /*! The first half of send_data_heap(), for a payload copied in parts: sends the
     * descriptors when due and takes a slot for \p items items. */
    send_slots::slot_ref begin_data_heap(send_slots& out, std::size_t items)
    {
        send_descriptors_if_due(out, items);
        return out.acquire(items * d_item_size, d_heap_config.flavour);
    }
    /*! Before a data heap of \p items items: the descriptors, when due. A name
     * resolved from a tag may have come with a descriptor just now, and it must go
     * out before the heap that uses it. */
    void send_descriptors_if_due(send_slots& out, std::size_t items)
    {
        if (descriptors_due(items))
            send_control_heap(out, true, false);
    }
    /*! The second half: \p build fills \p slot's heap with \p payload (the slot's
     * copy, or the input's), and the heap is sent. */
    template <typename Build>
    void finish_data_heap(send_slots& out,
                          const send_slots::slot_ref& slot,
                          const std::uint8_t* payload,
                          std::size_t substream,
                          Build&& build)
    {
        std::uint64_t cnt = 0;
        if (!build(slot.heap, payload, cnt)) {
            out.release(slot.index);
            return;
        }
        try {
            out.send(slot.index, cnt, substream);
        } catch (const std::invalid_argument& e) {
            heap_rejected(e.what());
            return;
        }
        data_heap_sent();
    }
    /*! Whether a payload of \p items items goes out from \p in's buffers in place
     * (send_data_heap()). Says once per run when a buffer too small makes the sink
     * copy, and what buffer would let \p out's heaps all fly from it. */
    bool sends_in_place(std::size_t items, const sink_input& in, const send_slots& out);
    /*! Items of \p in that earlier calls handed on (sent, or dropped) but the block
     * has not consumed yet: the next call goes on after them. */
    std::size_t handed(const sink_input& in) const
    {
        return d_handed_until > in.first ? std::size_t(d_handed_until - in.first) : 0;
    }
    /*! The end of a send() that handed on the first \p handed items of \p in: the
     * items the block consumes now, those before the first still being sent in place.
     * While those are none but some are handed on, waits for sends to complete: the
     * upstream cannot write more until items are consumed, so nothing else can
     * happen. */
    std::size_t settle(const sink_input& in, std::size_t handed, send_slots& out);
    /*! The id a learnt descriptor (or the payload's) gives \p name; 0: none. */
    std::uint64_t id_of_name(const std::string& name) const;

    const sink_heap_config d_heap_config;
    const std::size_t d_item_size;
    gr::logger_ptr d_logger;
    std::atomic<std::uint64_t> d_heaps_rejected{ 0 };

private:
    // ---- descriptors the sink sends and names it understands ----
    std::map<std::uint64_t, descriptor> d_descriptors; //!< learnt
    std::unordered_map<std::string, std::uint64_t> d_name_to_id;
    std::size_t d_described_items = 0; //!< payload shape in the last descriptor sent
    bool d_descriptors_dirty = true;
    bool d_run_started = false;
    std::size_t d_heaps_since_descriptors = 0;
    std::set<std::string> d_warned;
    std::uint64_t d_next_control_cnt;
    /*! Stream offset up to which the input was handed on (see handed()). */
    std::uint64_t d_handed_until = 0;
    bool d_said_copying = false; //!< sends_in_place() said why it copies
    bool d_holds_input = false;

    std::atomic<std::uint64_t> d_data_heaps{ 0 };
    std::atomic<std::uint64_t> d_control_heaps{ 0 };
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_SINK_MAPPING_H */
