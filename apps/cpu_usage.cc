/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cpu_usage.h"
#include <sys/resource.h>
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {
double seconds_of(const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; }
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

double median(std::vector<double> values)
{
    if (values.empty())
        return 0.0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
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

std::string load_average()
{
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return "load average " + a + " " + b + " " + c;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
