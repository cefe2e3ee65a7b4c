/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_common.h"
#include <gnuradio/spead/send_udp.h>
#include <condition_variable>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <system_error>
#include <type_traits>
#include <unistd.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {
const char* const rmem_max_path = "/proc/sys/net/core/rmem_max";

bool write_rmem_max(std::size_t bytes)
{
    std::ofstream out(rmem_max_path);
    out << bytes << "\n";
    out.flush();
    return bool(out);
}

std::string gbps(double value)
{
    std::ostringstream out;
    out << std::setprecision(value < 10 ? 3 : 4) << value;
    return out.str();
}

double seconds_of(const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; }

/*! What a forked_sender's child writes back: plain bytes through a pipe. */
struct sender_message {
    std::uint64_t data_heaps = 0;
    std::uint64_t control_heaps = 0;
    std::uint64_t heaps_failed = 0;
    std::uint64_t bytes = 0;
    double seconds = 0.0;
    double achieved_gbps = 0.0;
    send_stats stats;
    cpu_times cpu;
    enum class outcome : std::uint8_t { sent, send_error, setup_error, invalid_argument };
    outcome result = outcome::sent;
    char text[512] = {}; //!< what went wrong, when it did
};
static_assert(std::is_trivially_copyable_v<sender_message>);

bool write_all(int fd, const void* data, std::size_t size)
{
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        size -= std::size_t(n);
    }
    return true;
}

/*! \return bytes read: \p size, or fewer at end of file or on error */
std::size_t read_all(int fd, void* data, std::size_t size)
{
    char* p = static_cast<char*>(data);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::read(fd, p + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += std::size_t(n);
    }
    return done;
}

/*! The child of a forked_sender: waits for the start byte, sends, reports.
 * \return its exit status */
int run_sender_child(const sender_options& options, int start_fd, int report_fd) noexcept
{
    char start = 0;
    if (read_all(start_fd, &start, 1) != 1)
        return 1; // the parent gave up before starting it
    sender_message m;
    const auto say = [&m](sender_message::outcome o, const std::string& text) {
        m.result = o;
        std::strncpy(m.text, text.c_str(), sizeof(m.text) - 1);
    };
    try {
        const sender_report r = send_heaps(options);
        m.data_heaps = r.result.data_heaps;
        m.control_heaps = r.result.control_heaps;
        m.heaps_failed = r.result.heaps_failed;
        m.bytes = r.result.bytes;
        m.seconds = r.result.seconds;
        m.achieved_gbps = r.achieved_gbps;
        m.stats = r.stats;
        m.cpu = r.cpu;
        if (r.result.error)
            say(sender_message::outcome::send_error, r.result.error.message());
    } catch (const std::invalid_argument& e) {
        say(sender_message::outcome::invalid_argument, e.what());
    } catch (const std::exception& e) {
        say(sender_message::outcome::setup_error, e.what());
    }
    return write_all(report_fd, &m, sizeof(m)) ? 0 : 1;
}
} // namespace

cpu_times cpu_times::of_process()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return { seconds_of(usage.ru_utime), seconds_of(usage.ru_stime) };
}

std::optional<cpu_per_gib> cpu_per_gib::of(const cpu_times& used, std::uint64_t bytes)
{
    if (bytes == 0)
        return std::nullopt;
    const double gib = bytes / double(std::uint64_t(1) << 30);
    return cpu_per_gib{ used.user / gib, used.sys / gib };
}

std::string describe(const cpu_per_gib& cpu)
{
    std::ostringstream out;
    out << std::setprecision(3) << cpu.user << " user + " << cpu.sys
        << " sys = " << cpu.total() << " CPU s/GiB";
    return out.str();
}

sender_report send_heaps(const sender_options& options)
{
    generator_config gen;
    gen.heap_size = options.heap_size;
    gen.items = 1;
    gen.timestamp_item = options.timestamp_item;
    gen.stop_heap = options.timestamp_item != 0; // a continuous receiver ends on it
    gen.max_heaps = options.max_heaps;
    if (options.rate_gbps > 0)
        gen.heaps = static_cast<std::int64_t>(
            std::ceil(options.rate_gbps * 1e9 / 8 * options.seconds / options.heap_size));
    heap_generator generator(gen);

    send::stream_config config;
    config.set_max_packet_size(options.packet)
        .set_rate(options.rate_gbps * 1e9 / 8)
        .set_burst_size(options.burst)
        .set_max_heaps(options.max_heaps)
        // as spead_send: the writer refills its own queue, never waiting for this
        // thread to be scheduled (it shares the cores with the receiver)
        .set_inline_completions(true);
    send::udp_config udp;
    udp.set_endpoints(options.destination).set_buffer_size(options.buffer);
    boost::asio::io_context io;
    send::udp_stream stream(io, config, udp);

    // Unlimited rate: send for the time asked. A timer thread ends the run.
    std::atomic<bool> stop{ false };
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false;
    std::thread timer;
    if (options.rate_gbps <= 0)
        timer = std::thread([&] {
            std::unique_lock<std::mutex> lock(mutex);
            done.wait_for(lock,
                          std::chrono::duration<double>(options.seconds),
                          [&finished] { return finished; });
            stop = true;
        });

    sender_report report;
    const cpu_times before = cpu_times::of_process();
    report.result = generator.run(stream, io, stop);
    report.cpu = cpu_times::of_process() - before;
    if (timer.joinable()) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            finished = true;
        }
        done.notify_all();
        timer.join();
    }
    report.stats = stream.get_stats();
    if (report.result.seconds > 0)
        report.achieved_gbps = report.result.bytes * 8e-9 / report.result.seconds;
    return report;
}

forked_sender::forked_sender(const sender_options& options)
{
    int start[2];
    int report[2];
    if (pipe2(start, O_CLOEXEC) != 0)
        throw std::system_error(errno, std::generic_category(), "pipe");
    if (pipe2(report, O_CLOEXEC) != 0) {
        const int err = errno;
        close(start[0]);
        close(start[1]);
        throw std::system_error(err, std::generic_category(), "pipe");
    }
    d_pid = fork();
    if (d_pid == 0) {
        close(start[1]);
        close(report[0]);
        // _exit: no destructor or atexit handler of the parent's objects runs twice,
        // and the parent's unflushed output is not written again.
        _exit(run_sender_child(options, start[0], report[1]));
    }
    const int err = errno;
    close(start[0]);
    close(report[1]);
    d_start_fd = start[1];
    d_report_fd = report[0];
    if (d_pid < 0) {
        close(d_start_fd);
        close(d_report_fd);
        throw std::system_error(err, std::generic_category(), "fork (the sender)");
    }
}

forked_sender::~forked_sender()
{
    if (d_start_fd >= 0)
        close(d_start_fd);
    if (d_report_fd >= 0)
        close(d_report_fd);
    if (d_pid > 0) {
        kill(d_pid, SIGKILL);
        waitpid(d_pid, nullptr, 0);
    }
}

void forked_sender::start()
{
    const char go = 1;
    if (!write_all(d_start_fd, &go, 1))
        throw std::system_error(errno, std::generic_category(), "starting the sender");
    close(d_start_fd);
    d_start_fd = -1;
}

sender_report forked_sender::wait()
{
    sender_message m;
    const bool whole = read_all(d_report_fd, &m, sizeof(m)) == sizeof(m);
    close(d_report_fd);
    d_report_fd = -1;
    int status = 0;
    waitpid(d_pid, &status, 0);
    d_pid = -1;
    if (!whole)
        throw std::runtime_error(
            "the sender process ended without a report (" +
            (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                 : "exit status " + std::to_string(WEXITSTATUS(status))) +
            ")");
    switch (m.result) {
    case sender_message::outcome::sent:
        break;
    case sender_message::outcome::send_error:
        throw std::runtime_error(std::string("sending failed: ") + m.text);
    case sender_message::outcome::invalid_argument:
        throw std::invalid_argument(m.text);
    case sender_message::outcome::setup_error:
        throw std::runtime_error(m.text);
    }
    sender_report r;
    r.result.data_heaps = m.data_heaps;
    r.result.control_heaps = m.control_heaps;
    r.result.heaps_failed = m.heaps_failed;
    r.result.bytes = m.bytes;
    r.result.seconds = m.seconds;
    r.achieved_gbps = m.achieved_gbps;
    r.stats = m.stats;
    r.cpu = m.cpu;
    return r;
}

std::string describe(const trial_result& r)
{
    std::ostringstream out;
    out << gbps(r.target_gbps) << " Gb/s: sent " << r.heaps_sent << " heaps ("
        << r.packets_sent << " packets) at " << gbps(r.achieved_gbps)
        << " Gb/s, received " << r.heaps_received << " (" << r.packets_received
        << " packets), lost " << r.heaps_lost();
    for (const auto& [name, value] : r.drops)
        if (value)
            out << ", " << name << " " << value;
    if (r.receiver_cpu)
        out << "; receive side " << describe(*r.receiver_cpu)
            << " of heap payload received";
    return out.str();
}

std::optional<cpu_per_gib> median_cpu(const std::vector<cpu_per_gib>& figures)
{
    if (figures.empty())
        return std::nullopt;
    std::vector<double> user, sys;
    for (const cpu_per_gib& f : figures) {
        user.push_back(f.user);
        sys.push_back(f.sys);
    }
    return cpu_per_gib{ median(user), median(sys) };
}

namespace {
/*! The receive side's medians over the runs that have a figure. */
std::optional<cpu_per_gib> median_cpu(const std::vector<trial_result>& runs)
{
    std::vector<cpu_per_gib> figures;
    for (const trial_result& r : runs)
        if (r.receiver_cpu)
            figures.push_back(*r.receiver_cpu);
    return median_cpu(figures);
}
} // namespace

double search_lossless_rate(const trial_function& trial,
                            const search_options& options,
                            const std::string& label,
                            const csv_scope& rows)
{
    // A run that loses nothing but sent well below the rate asked says nothing about
    // that rate: the sender (sharing the CPUs) is the limit, and the search ends.
    constexpr double reached = 0.95;
    enum class outcome { pass, loss, sender_short };
    std::vector<double> rates = options.rates;
    std::sort(rates.begin(), rates.end());
    std::vector<trial_result> runs_at_best;
    double sender_short_at = -1.0;
    double sender_short_achieved = 0.0;

    auto attempt = [&](double rate) {
        std::vector<trial_result> runs;
        for (int run = 1; run <= options.runs; run++) {
            const trial_result r = trial(rate);
            std::cout << "  " << label << " run " << run << "/" << options.runs << " at "
                      << describe(r) << std::endl;
            rows.csv.trial_rows(
                { rows.bench, rows.packet_bytes, rate, std::to_string(run) }, r);
            runs.push_back(r);
            if (r.heaps_lost() > 0 || r.heaps_sent == 0)
                return outcome::loss;
            if (r.achieved_gbps < reached * rate) {
                sender_short_at = rate;
                sender_short_achieved = r.achieved_gbps;
                return outcome::sender_short;
            }
        }
        runs_at_best = runs;
        return outcome::pass;
    };

    double best = 0.0;
    double first_fail = -1.0;
    for (double rate : rates) {
        const outcome o = attempt(rate);
        if (o == outcome::pass) {
            best = rate;
            continue;
        }
        if (o == outcome::loss)
            first_fail = rate;
        break;
    }
    if (first_fail > 0) {
        double lo = best;
        double hi = first_fail;
        for (int i = 0; i < options.refine; i++) {
            const double mid = (lo + hi) / 2;
            const outcome o = attempt(mid);
            if (o == outcome::pass)
                lo = mid;
            else if (o == outcome::loss)
                hi = mid;
            else
                break;
        }
        best = lo;
        first_fail = hi;
    }

    std::cout << label << ": highest lossless rate " << gbps(best) << " Gb/s";
    const csv_writer::run at_best{ rows.bench, rows.packet_bytes, best, "median" };
    rows.csv.row(at_best, "lossless_gbps", best);
    if (!runs_at_best.empty() && best > 0) {
        std::vector<double> achieved;
        for (const trial_result& r : runs_at_best)
            achieved.push_back(r.achieved_gbps);
        const auto [lo, hi] = std::minmax_element(achieved.begin(), achieved.end());
        std::cout << " (" << options.runs << " consecutive runs without loss, achieved "
                  << gbps(*lo) << "-" << gbps(*hi) << " Gb/s)";
        const std::optional<cpu_per_gib> cpu = median_cpu(runs_at_best);
        if (cpu)
            std::cout << ", receive side " << describe(*cpu) << " (medians)";
        rows.csv.row(at_best, "gbps", median(achieved));
        rows.csv.cpu_rows(at_best, cpu);
    }
    if (first_fail > 0)
        std::cout << "; heaps lost at " << gbps(first_fail) << " Gb/s";
    if (sender_short_at > 0)
        std::cout << "; the sender reached only " << gbps(sender_short_achieved)
                  << " Gb/s of " << gbps(sender_short_at)
                  << " (sender-limited: the receiver's limit was not found)";
    if (first_fail <= 0 && sender_short_at <= 0)
        std::cout << "; no loss up to the highest rate tried";
    std::cout << "; " << load_average() << std::endl;
    return best;
}

int report_lossless_rates(const boost::program_options::variables_map& vm,
                          const std::string& mode,
                          const packet_trial& trial,
                          csv_writer& csv)
{
    search_options search;
    search.rates = parse_rates(vm["rates"].as<std::string>());
    search.runs = vm["runs"].as<int>();
    search.refine = vm["refine"].as<int>();
    std::vector<std::pair<std::size_t, double>> figures;
    for (std::size_t packet : vm["packet"].as<std::vector<std::size_t>>()) {
        bool first = true;
        const auto at_rate = [&](double rate) {
            auto r = trial(packet, rate, first);
            first = false;
            return r;
        };
        figures.emplace_back(
            packet,
            search_lossless_rate(at_rate,
                                 search,
                                 mode + " packet " + std::to_string(packet),
                                 { csv, mode, packet }));
    }
    for (const auto& [packet, gbps] : figures)
        std::cout << mode << "_lossless_gbps_" << packet << ": " << gbps << "\n";
    return 0;
}

csv_writer::csv_writer(const std::string& path)
    : d_path(path), d_out(path, std::ios::out | std::ios::app)
{
    if (path.empty())
        throw std::invalid_argument("--csv: give a file name, e.g. --csv bench.csv");
    if (!d_out)
        throw std::invalid_argument("--csv: cannot write '" + path +
                                    "': " + std::strerror(errno) +
                                    "; give a file in a directory you can write to");
    // Appending: a file that already has rows has its header.
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec || size == 0) {
        d_out << "bench,impl,packet_bytes,offered_gbps,trial,metric,value\n";
        d_out.flush();
    }
}

void csv_writer::write(const run& r, const std::string& metric, const std::string& value)
{
    if (!d_out.is_open())
        return;
    std::ostringstream offered;
    if (r.offered_gbps > 0)
        offered << std::setprecision(6) << r.offered_gbps;
    d_out << r.bench << ",gr-spead," << r.packet_bytes << "," << offered.str() << ","
          << r.trial << "," << metric << "," << value << "\n";
    d_out.flush();
    if (!d_out)
        throw std::runtime_error("--csv: writing '" + d_path + "' failed");
}

void csv_writer::row(const run& r, const std::string& metric, double value)
{
    std::ostringstream text;
    text << std::setprecision(6) << value;
    write(r, metric, text.str());
}

void csv_writer::row(const run& r, const std::string& metric, std::uint64_t value)
{
    write(r, metric, std::to_string(value));
}

void csv_writer::row(const run& r, const std::string& metric, std::int64_t value)
{
    write(r, metric, std::to_string(value));
}

void csv_writer::rows(const run& r,
                      std::initializer_list<std::pair<const char*, double>> metrics)
{
    for (const auto& [metric, value] : metrics)
        row(r, metric, value);
}

void csv_writer::cpu_rows(const run& r, const std::optional<cpu_per_gib>& cpu)
{
    if (!cpu)
        return;
    row(r, "cpu_user_s_per_gib", cpu->user);
    row(r, "cpu_sys_s_per_gib", cpu->sys);
    row(r, "cpu_s_per_gib", cpu->total());
}

void csv_writer::trial_rows(const run& r, const trial_result& trial)
{
    row(r, "gbps", trial.achieved_gbps);
    row(r, "heaps_sent", trial.heaps_sent);
    row(r, "heaps_received", trial.heaps_received);
    row(r, "packets_sent", trial.packets_sent);
    row(r, "packets_received", trial.packets_received);
    row(r,
        "packets_lost",
        std::int64_t(trial.packets_sent) - std::int64_t(trial.packets_received));
    if (trial.heaps_sent > 0)
        row(r, "loss_fraction", double(trial.heaps_lost()) / trial.heaps_sent);
    cpu_rows(r, trial.receiver_cpu);
}

std::string load_average()
{
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return "load average " + a + " " + b + " " + c;
}

double median(std::vector<double> values)
{
    if (values.empty())
        return 0.0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

std::size_t read_rmem_max()
{
    std::ifstream in(rmem_max_path);
    std::size_t value = 0;
    in >> value;
    return value;
}

rmem_max_raise::rmem_max_raise(std::size_t bytes)
    : d_original(read_rmem_max()), d_effective(d_original)
{
    if (d_original == 0 || d_original >= bytes || geteuid() != 0)
        return;
    if (write_rmem_max(bytes)) {
        d_raised = true;
        d_effective = bytes;
    }
}

rmem_max_raise::~rmem_max_raise()
{
    if (d_raised)
        write_rmem_max(d_original);
}

std::string describe_receive_buffer(std::size_t asked,
                                    const rmem_max_raise& raise,
                                    std::size_t granted)
{
    std::ostringstream out;
    out << "receive socket buffer: asked " << asked << " bytes, net.core.rmem_max "
        << raise.original();
    if (raise.effective() != raise.original())
        out << " (raised to " << raise.effective()
            << " while the socket was made, as root, then restored)";
    else if (raise.original() < asked)
        out << " (not raised: run as root to lift it)";
    out << ", granted " << granted;
    return out.str();
}

discard_socket::discard_socket()
{
    d_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (d_fd < 0)
        throw std::system_error(errno, std::generic_category(), "socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(d_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(d_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        const int err = errno;
        close(d_fd);
        throw std::system_error(err, std::generic_category(), "bind 127.0.0.1:0");
    }
    d_port = ntohs(addr.sin_port);
}

discard_socket::~discard_socket() { close(d_fd); }

std::uint64_t discard_socket::drops() const
{
    std::uint32_t meminfo[SK_MEMINFO_VARS] = {};
    socklen_t len = sizeof(meminfo);
    if (getsockopt(d_fd, SOL_SOCKET, SO_MEMINFO, meminfo, &len) != 0)
        return 0;
    return meminfo[SK_MEMINFO_DROPS];
}

unsigned short free_udp_port()
{
    discard_socket probe;
    return probe.port();
}

std::vector<double> parse_rates(const std::string& text)
{
    std::string spaced = text;
    std::replace(spaced.begin(), spaced.end(), ',', ' ');
    std::istringstream in(spaced);
    std::vector<double> out;
    std::string word;
    while (in >> word) {
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(word, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != word.size() || !(v > 0) || !std::isfinite(v))
            throw std::invalid_argument("--rates: '" + word +
                                        "' is not a rate; give Gb/s > 0, e.g. 2,4,8");
        out.push_back(v);
    }
    if (out.empty())
        throw std::invalid_argument(
            "--rates: give at least one rate in Gb/s, e.g. 2,4,8");
    return out;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
