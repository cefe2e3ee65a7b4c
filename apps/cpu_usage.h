/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_CPU_USAGE_H
#define INCLUDED_SPEAD_APPS_CPU_USAGE_H

// spead_bench's CPU accounting: this process's CPU time, CPU seconds per GiB of heap
// payload, medians of both, and the machine's load for context.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

/*! CPU time, seconds, split as getrusage() splits it. */
struct cpu_times {
    double user = 0.0;
    double sys = 0.0;

    /*! This process, all its threads (getrusage(RUSAGE_SELF)). */
    static cpu_times of_process();
    cpu_times operator-(const cpu_times& earlier) const
    {
        return { user - earlier.user, sys - earlier.sys };
    }
};

/*! CPU seconds per GiB (2^30 bytes) of heap payload. */
struct cpu_per_gib {
    double user = 0.0;
    double sys = 0.0;
    double total() const { return user + sys; }

    /*! Nothing when no byte was moved. */
    static std::optional<cpu_per_gib> of(const cpu_times& used, std::uint64_t bytes);
};

/*! "0.123 user + 0.456 sys = 0.579 CPU s/GiB" */
std::string describe(const cpu_per_gib& cpu);

/*! The middle value (the upper one of an even count); 0 if there are none. */
double median(std::vector<double> values);

/*! The median of each part (user, sys) over \p figures; nothing if there are none. */
std::optional<cpu_per_gib> median_cpu(const std::vector<cpu_per_gib>& figures);

/*! "load average 0.52 0.61 0.70" from /proc/loadavg. */
std::string load_average();

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
