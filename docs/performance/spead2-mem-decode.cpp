/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// spead2-mem-decode: spead2's counterpart of `spead_bench mem` (apps/bench_mem.cc),
// built against spead2 by docs/performance/regenerate (step 2) when spead2 is found.
//
//   spead2-mem-decode [--packet N...] [--heap-size N] [--total-bytes N] [--repeat N]
//                     [--round N] [--csv FILE]
//
// The same measurement as spead_bench mem, with spead2 on both ends:
// - the same heaps: total-bytes / heap-size heaps (at least one) of one item (id 0x1000,
//   heap-size bytes of pseudo-random payload), cnt 1, 2, 3 ..., flavour SPEAD-64-40, cut
//   into packets of at most the given size (the SPEAD packet, the UDP payload);
// - made beforehand, untimed: spead2's own sender (send::streambuf_stream) writes the
//   packets back to back into one buffer in memory, as spead_bench lays ours out;
// - timed: spead2's receive path decodes and assembles them on one thread: a
//   recv::mem_reader feeds the buffer to a recv::stream on a one-thread pool (the
//   calling thread only waits). The stream's heap_ready (called on that thread for each
//   complete heap) freezes the heap into a recv::heap, spead2's heap with its items
//   found, as our assembler hands a recv::heap with its items to its consumer; both
//   consumers hold the last few heaps (as many as the memcpy ring) and release the
//   older ones at once. Heap memory comes from a spead2::memory_pool of heap-sized
//   buffers made once per packet size and kept from run to run, as ours comes from
//   one pool of heap buffers per packet size; spead2's pool touches its buffers when
//   it makes them and ours are touched in the warm-up run (below), so neither side
//   faults in fresh pages in a timed span. The timed span is from handing over the
//   buffer until the stream has stopped at its end (spead_bench times its packet loop
//   alone: the difference is one hand-over to the pool thread per run);
// - in the same run the same memcpy ceiling as spead_bench's memcpy_pass(): each
//   packet's payload copied to its offset in a ring of four heap-sized buffers (made
//   and zeroed once per packet size, as spead_bench's), the ring advanced when a heap's
//   last byte is written, from a list of (payload start, heap offset, length) made
//   beforehand so that the ceiling parses nothing; the ceiling runs first in each
//   trial, then the decode, as spead_bench does, and on the same thread as the
//   decode (the pool's), as spead_bench runs both on one thread;
// - before the trials of each packet size, one untimed warm-up run of each side, as
//   spead_bench does, so that no trial is a process's first pass over its code and
//   buffers; each run prints the page faults the process took in its timed spans (0
//   on both sides once warm: spead_bench prints its own);
// - Gb/s of heap payload, memcpy Gb/s and their ratio per run; the median of the runs
//   is the middle element after sorting (the upper one for an even count), as
//   spead_bench's bench::median.
// Every run must deliver every heap whole (counted in heap_ready), else exit status 1.
// --csv FILE appends rows bench,impl,packet_bytes,offered_gbps,trial,metric,value:
// bench mem, impl spead2, metrics gbps, memcpy_gbps, ratio_to_memcpy, per run and median.
// --round N (from 1), as spead_bench mem --round: this invocation is round N of
// regenerate's pairing with spead_bench mem; trials are numbered from
// (N - 1) x repeat + 1, and the round's medians are written as bench mem_pair, trial N,
// instead of median rows.

#include <spead2/common_memory_pool.h>
#include <spead2/common_thread_pool.h>
#include <spead2/recv_heap.h>
#include <spead2/recv_live_heap.h>
#include <spead2/recv_mem.h>
#include <spead2/recv_packet.h>
#include <spead2/recv_stream.h>
#include <spead2/send_heap.h>
#include <spead2/send_stream_config.h>
#include <spead2/send_streambuf.h>
#include <sys/resource.h>
#include <boost/asio/post.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

/*! Heap-sized buffers the memcpy ceiling cycles through, and heaps the consumer holds:
 * spead_bench's copy_ring. */
constexpr std::size_t copy_ring = 4;

/*! The payload item's id, as spead_bench's heaps. */
constexpr spead2::s_item_pointer_t value_item = 0x1000;

struct options {
    std::vector<std::size_t> packets{ 8972, 1472 };
    std::size_t heap_size = 1 << 20;
    std::uint64_t total_bytes = std::uint64_t(1) << 30;
    int repeat = 11;
    int round = 0; //!< round of regenerate's pairing with spead_bench mem (0: none)
    std::string csv;
};

/*! A streambuf that appends what spead2's sender writes to a byte vector, so that the
 * packets end up back to back in one buffer without a copy out of a stringbuf. */
class vector_streambuf : public std::streambuf
{
public:
    explicit vector_streambuf(std::vector<std::uint8_t>& out) : d_out(out) {}

protected:
    std::streamsize xsputn(const char* data, std::streamsize count) override
    {
        d_out.insert(d_out.end(),
                     reinterpret_cast<const std::uint8_t*>(data),
                     reinterpret_cast<const std::uint8_t*>(data) + count);
        return count;
    }
    int_type overflow(int_type c) override
    {
        if (!traits_type::eq_int_type(c, traits_type::eof()))
            d_out.push_back(std::uint8_t(traits_type::to_char_type(c)));
        return traits_type::not_eof(c);
    }

private:
    std::vector<std::uint8_t>& d_out;
};

/*! spead2's packets of the heaps, back to back, and what the ceiling copies. */
struct packet_set {
    std::vector<std::uint8_t> bytes;
    /*! Per packet: where its payload is in bytes, where it belongs in its heap and
     * how long it is, found with spead2's decode_packet before any timing. */
    struct copy {
        std::size_t payload_start;
        std::size_t heap_offset;
        std::size_t length;
    };
    std::vector<copy> copies;
    std::size_t heaps = 0;
    std::uint64_t payload_bytes = 0;
};

packet_set make_packets(spead2::thread_pool& pool,
                        std::size_t heap_size,
                        std::size_t packet_size,
                        std::uint64_t total)
{
    packet_set set;
    std::vector<std::uint8_t> value(heap_size);
    std::minstd_rand rng;
    for (auto& b : value)
        b = std::uint8_t(rng());
    set.heaps = std::max<std::uint64_t>(1, total / heap_size);
    // Room for the payload and a generous header allowance per packet, so that the
    // vector does not grow (and briefly double) while the sender writes.
    const std::size_t per_heap = heap_size / (packet_size / 2) + 2;
    set.bytes.reserve(set.heaps * (heap_size + per_heap * 128));
    {
        vector_streambuf out(set.bytes);
        spead2::send::streambuf_stream sender(
            pool, out, spead2::send::stream_config().set_max_packet_size(packet_size));
        spead2::send::heap h; // default flavour: SPEAD-64-40, as ours
        h.add_item(value_item, value.data(), value.size(), false);
        boost::system::error_code error; // set on the pool's thread, read after flush
        for (std::size_t k = 0; k < set.heaps && !error; k++) {
            // cnt 1, 2, 3 ... (the sender's default sequence), one heap in flight: the
            // heap object is reused once the sender is done with it.
            sender.async_send_heap(
                h, [&error](const boost::system::error_code& ec, spead2::item_pointer_t) {
                    if (ec)
                        error = ec;
                });
            sender.flush();
        }
        if (error)
            throw std::runtime_error("spead2's sender into memory: " + error.message());
    }
    // Find each packet's payload with spead2's own decoder (untimed).
    std::size_t pos = 0;
    std::size_t heap_count = 0;
    while (pos < set.bytes.size()) {
        spead2::recv::packet_header header;
        const std::size_t size = spead2::recv::decode_packet(
            header, set.bytes.data() + pos, set.bytes.size() - pos);
        if (size == 0 || size > packet_size)
            throw std::runtime_error(
                "spead2's sender wrote a packet that does not decode "
                "or is larger than " +
                std::to_string(packet_size) + " bytes at byte " + std::to_string(pos));
        set.copies.push_back({ std::size_t(header.payload - set.bytes.data()),
                               std::size_t(header.payload_offset),
                               std::size_t(header.payload_length) });
        if (std::size_t(header.payload_offset + header.payload_length) == heap_size)
            heap_count++;
        pos += size;
    }
    if (heap_count != set.heaps)
        throw std::runtime_error("spead2's sender wrote " + std::to_string(heap_count) +
                                 " heaps of " + std::to_string(set.heaps));
    set.payload_bytes = std::uint64_t(set.heaps) * heap_size;
    return set;
}

/*! Page faults (minor and major) of the whole process so far: the decode runs on the
 * pool's thread while the calling thread waits. */
std::uint64_t process_page_faults()
{
    rusage use{};
    getrusage(RUSAGE_SELF, &use);
    return std::uint64_t(use.ru_minflt + use.ru_majflt);
}

/*! One timed run of a side, as spead_bench's timed_pass. */
struct timed_pass {
    double seconds = 0;
    std::uint64_t page_faults = 0; //!< taken by the process within the timed span
};

/*! The ceiling's destination, as spead_bench's make_copy_buffers(): copy_ring
 * heap-sized buffers, zeroed (so faulted in) when made, once per packet size. */
using copy_buffers = std::vector<std::vector<std::uint8_t>>;

/*! The ceiling, as spead_bench's memcpy_pass(): each packet's payload copied to its
 * heap offset in \p buffers, the next buffer for each heap. */
timed_pass memcpy_pass(const packet_set& set, copy_buffers& buffers)
{
    const std::size_t heap_size = buffers[0].size();
    std::size_t heap_index = 0;
    const std::uint64_t faults = process_page_faults();
    const auto start = clock_type::now();
    for (const auto& c : set.copies) {
        std::memcpy(buffers[heap_index % buffers.size()].data() + c.heap_offset,
                    set.bytes.data() + c.payload_start,
                    c.length);
        if (c.heap_offset + c.length == heap_size)
            heap_index++;
    }
    const std::chrono::duration<double> elapsed = clock_type::now() - start;
    const timed_pass pass{ elapsed.count(), process_page_faults() - faults };
    volatile std::uint8_t sink = buffers[0][heap_size / 2];
    (void)sink;
    return pass;
}

/*! memcpy_pass() run on the pool's thread, where the decode runs, the caller waiting.
 * Timed on the calling thread, the ceiling and the decode ran on two threads that the
 * 2-core VM places as it likes, and the 8972 B ratio scattered from 1.00 to 1.10 over
 * alternated runs; on the pool's thread it held at 1.006 to 1.020. spead_bench times
 * both sides on one thread. */
timed_pass
memcpy_pass_on(spead2::thread_pool& pool, const packet_set& set, copy_buffers& buffers)
{
    std::promise<timed_pass> done;
    boost::asio::post(pool.get_io_context(), [&] {
        try {
            done.set_value(memcpy_pass(set, buffers));
        } catch (...) {
            done.set_exception(std::current_exception());
        }
    });
    return done.get_future().get();
}

/*!
 * A recv::stream whose consumer is heap_ready itself, on the reader's thread: each
 * complete heap is frozen into a recv::heap and held among the last copy_ring, the
 * older released at once (their memory back to the pool); incomplete heaps are
 * counted. Tells the waiting thread when the stream has stopped.
 */
class holding_stream : public spead2::recv::stream
{
public:
    holding_stream(spead2::thread_pool& pool, const spead2::recv::stream_config& config)
        : spead2::recv::stream(pool, config)
    {
    }
    ~holding_stream() override { stop(); }

    std::future<void> stopped() { return d_stopped.get_future(); }
    std::size_t complete() const { return d_complete; }
    std::size_t incomplete() const { return d_incomplete; }

private:
    void heap_ready(spead2::recv::live_heap&& live) override
    {
        if (!live.is_contiguous()) {
            d_incomplete++;
            return;
        }
        d_held.emplace_back(std::move(live));
        d_complete++;
        if (d_held.size() >= copy_ring)
            d_held.pop_front();
    }

    void stop_received() override
    {
        spead2::recv::stream::stop_received();
        d_held.clear();
        d_stopped.set_value();
    }

    std::deque<spead2::recv::heap> d_held;
    std::size_t d_complete = 0;
    std::size_t d_incomplete = 0;
    std::promise<void> d_stopped;
};

struct decode_result {
    timed_pass pass;
    std::uint64_t heaps = 0;   //!< spead2's "heaps" statistic
    std::uint64_t packets = 0; //!< spead2's "packets" statistic
};

/*! Pool of heap-sized buffers: as many as our heap_pool (copy_ring + 4), all made and
 * touched now (spead2's default allocator prefaults what it allocates). */
std::shared_ptr<spead2::memory_pool> heap_memory(std::size_t heap_size)
{
    return std::make_shared<spead2::memory_pool>(
        heap_size, heap_size, copy_ring + 4, copy_ring + 4);
}

decode_result decode_pass(spead2::thread_pool& pool,
                          const std::shared_ptr<spead2::memory_pool>& memory,
                          const packet_set& set)
{
    holding_stream stream(pool,
                          spead2::recv::stream_config().set_memory_allocator(memory));
    std::future<void> stopped = stream.stopped();
    const std::uint64_t faults = process_page_faults();
    const auto start = clock_type::now();
    stream.emplace_reader<spead2::recv::mem_reader>(set.bytes.data(), set.bytes.size());
    stopped.wait();
    const std::chrono::duration<double> elapsed = clock_type::now() - start;
    const timed_pass pass{ elapsed.count(), process_page_faults() - faults };
    // The reader merges its statistics after stop_received, still holding the stream's
    // lock: stop() takes that lock, so the statistics read below are whole.
    stream.stop();
    if (stream.complete() != set.heaps)
        throw std::runtime_error("spead2 assembled " + std::to_string(stream.complete()) +
                                 " of " + std::to_string(set.heaps) + " heaps whole (" +
                                 std::to_string(stream.incomplete()) + " incomplete)");
    const auto stats = stream.get_stats();
    return { pass, stats["heaps"], stats["packets"] };
}

/*! spead_bench's bench::median: the middle element after sorting. */
double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values.empty() ? 0.0 : values[values.size() / 2];
}

/*! Appends rows as spead_bench --csv does (header only in a new or empty file). */
class csv_writer
{
public:
    explicit csv_writer(const std::string& path) : d_path(path)
    {
        if (path.empty())
            return;
        std::error_code ec;
        const auto size = std::filesystem::file_size(path, ec);
        d_out.open(path, std::ios::out | std::ios::app);
        if (!d_out)
            throw std::invalid_argument("--csv: cannot write '" + path + "'");
        if (ec || size == 0)
            d_out << "bench,impl,packet_bytes,offered_gbps,trial,metric,value\n";
    }

    void row(const char* bench,
             std::size_t packet,
             const std::string& trial,
             const char* metric,
             double value)
    {
        if (!d_out.is_open())
            return;
        std::ostringstream text;
        text << std::setprecision(6) << value;
        d_out << bench << ",spead2," << packet << ",," << trial << "," << metric << ","
              << text.str() << "\n";
        d_out.flush();
        if (!d_out)
            throw std::runtime_error("--csv: writing '" + d_path + "' failed");
    }

private:
    std::string d_path;
    std::ofstream d_out;
};

template <typename T>
T parse_number(const std::string& flag, const std::string& text)
{
    std::size_t used = 0;
    unsigned long long value = 0;
    try {
        value = std::stoull(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || text[0] == '-' || value == 0)
        throw std::invalid_argument(flag + ": '" + text +
                                    "' is not a positive whole number");
    return T(value);
}

options parse(int argc, char** argv)
{
    options o;
    bool packets_given = false;
    for (int i = 1; i < argc; i++) {
        const std::string flag = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                throw std::invalid_argument(flag + ": needs a value");
            return argv[++i];
        };
        if (flag == "--packet") {
            if (!packets_given)
                o.packets.clear();
            packets_given = true;
            o.packets.push_back(parse_number<std::size_t>(flag, value()));
            while (i + 1 < argc && argv[i + 1][0] != '-')
                o.packets.push_back(parse_number<std::size_t>(flag, argv[++i]));
        } else if (flag == "--heap-size") {
            o.heap_size = parse_number<std::size_t>(flag, value());
        } else if (flag == "--total-bytes") {
            o.total_bytes = parse_number<std::uint64_t>(flag, value());
        } else if (flag == "--repeat") {
            o.repeat = parse_number<int>(flag, value());
        } else if (flag == "--round") {
            o.round = parse_number<int>(flag, value());
        } else if (flag == "--csv") {
            o.csv = value();
            if (o.csv.empty())
                throw std::invalid_argument("--csv: give a file name");
        } else {
            throw std::invalid_argument("unknown argument '" + flag +
                                        "'; usage: spead2-mem-decode [--packet N...] "
                                        "[--heap-size N] [--total-bytes N] [--repeat N] "
                                        "[--round N] [--csv FILE]");
        }
    }
    return o;
}

} // namespace

int main(int argc, char** argv)
{
    options o;
    try {
        o = parse(argc, argv);
    } catch (const std::invalid_argument& e) {
        std::cerr << "spead2-mem-decode: " << e.what() << "\n";
        return 2;
    }
    try {
        csv_writer csv(o.csv);
        spead2::thread_pool pool(1); // the one thread that decodes and assembles
        // In a round of regenerate's pairing, trials are numbered on from the earlier
        // rounds' and the round's medians go to mem_pair, trial = round.
        const int first_trial = o.round > 0 ? (o.round - 1) * o.repeat + 1 : 1;
        if (o.round > 0)
            std::cout << "mem (spead2): round " << o.round << " (trials " << first_trial
                      << " to " << first_trial + o.repeat - 1 << ")\n";
        for (std::size_t packet_size : o.packets) {
            const packet_set set =
                make_packets(pool, o.heap_size, packet_size, o.total_bytes);
            std::cout << "mem (spead2 " << SPEAD2_VERSION << "): " << set.copies.size()
                      << " packets of at most " << packet_size << " bytes, " << set.heaps
                      << " heaps of " << o.heap_size << " bytes, "
                      << set.bytes.size() / double(1 << 20) << " MiB in memory\n";
            // One ring and one pool for every run of this packet size, as spead_bench
            // keeps them.
            copy_buffers ring(copy_ring, std::vector<std::uint8_t>(o.heap_size));
            const auto memory = heap_memory(o.heap_size);
            // An untimed warm-up run of each side first, as spead_bench does.
            const timed_pass warm_copy = memcpy_pass_on(pool, set, ring);
            const timed_pass warm_decode = decode_pass(pool, memory, set).pass;
            std::cout << "  warm-up run (not counted): page faults memcpy "
                      << warm_copy.page_faults << ", decode+assemble "
                      << warm_decode.page_faults << std::endl;
            std::vector<double> rates, ceilings, ratios;
            decode_result last;
            for (int r = 0; r < o.repeat; r++) {
                // the ceiling first, as spead_bench does
                const timed_pass copy = memcpy_pass_on(pool, set, ring);
                last = decode_pass(pool, memory, set);
                const double gbps = set.payload_bytes * 8 / last.pass.seconds / 1e9;
                const double ceiling = set.payload_bytes * 8 / copy.seconds / 1e9;
                rates.push_back(gbps);
                ceilings.push_back(ceiling);
                ratios.push_back(gbps / ceiling);
                const std::string trial = std::to_string(first_trial + r);
                std::cout << "  run " << trial << ": decode+assemble " << gbps
                          << " Gb/s, memcpy ceiling " << ceiling << " Gb/s, ratio "
                          << gbps / ceiling << "; page faults memcpy " << copy.page_faults
                          << ", decode+assemble " << last.pass.page_faults << std::endl;
                csv.row("mem", packet_size, trial, "gbps", gbps);
                csv.row("mem", packet_size, trial, "memcpy_gbps", ceiling);
                csv.row("mem", packet_size, trial, "ratio_to_memcpy", gbps / ceiling);
            }
            const char* const medians = o.round > 0 ? "mem_pair" : "mem";
            const std::string medians_trial =
                o.round > 0 ? std::to_string(o.round) : "median";
            csv.row(medians, packet_size, medians_trial, "gbps", median(rates));
            csv.row(medians, packet_size, medians_trial, "memcpy_gbps", median(ceilings));
            csv.row(
                medians, packet_size, medians_trial, "ratio_to_memcpy", median(ratios));
            std::cout << "packet " << packet_size << ": decode+assemble " << median(rates)
                      << " Gb/s, memcpy " << median(ceilings) << " Gb/s, ratio "
                      << median(ratios) << " (median of " << o.repeat << ")\n";
            std::cout << "  heaps: " << last.heaps << " packets: " << last.packets
                      << "\n";
        }
    } catch (const std::invalid_argument& e) {
        std::cerr << "spead2-mem-decode: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "spead2-mem-decode: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
