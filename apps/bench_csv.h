/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_CSV_H
#define INCLUDED_SPEAD_APPS_BENCH_CSV_H

// spead_bench --csv: the tidy rows docs/performance/make_figures.py plots.

#include "cpu_usage.h"
#include <initializer_list>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

/*!
 * spead_bench --csv: appends tidy rows for plotting,
 * "bench,impl,packet_bytes,offered_gbps,trial,metric,value", with the header only when
 * the file is new or empty. impl is "gr-spead"; offered_gbps is empty for runs as fast
 * as possible; trial is the run number (from 1) or "median". Default-constructed, it
 * writes nothing (no --csv).
 */
class csv_writer
{
public:
    csv_writer() = default;
    /*! \throws std::invalid_argument naming --csv when \p path cannot be written */
    explicit csv_writer(const std::string& path);

    /*! Which run the rows describe. */
    struct run {
        std::string bench; //!< "recv", "mem_continuous", ...
        std::size_t packet_bytes = 0;
        double offered_gbps = 0.0; //!< 0: as fast as possible (written empty)
        std::string trial;         //!< "1", "2", ... or "median"
    };
    /*! \throws std::runtime_error when the file cannot be written any more */
    void row(const run& r, const std::string& metric, double value);
    void row(const run& r, const std::string& metric, std::uint64_t value);
    void row(const run& r, const std::string& metric, std::int64_t value);
    /*! A row per (metric, value). */
    void rows(const run& r,
              std::initializer_list<std::pair<const char*, double>> metrics);
    /*! cpu_user_s_per_gib, cpu_sys_s_per_gib and cpu_s_per_gib, if there is a figure. */
    void cpu_rows(const run& r, const std::optional<cpu_per_gib>& cpu);

private:
    void write(const run& r, const std::string& metric, const std::string& value);

    std::string d_path;
    std::ofstream d_out;
};

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
