/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "bench_csv.h"
#include <system_error>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

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

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
