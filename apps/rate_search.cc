/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rate_search.h"
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

namespace {
std::string gbps(double value)
{
    std::ostringstream out;
    out << std::setprecision(value < 10 ? 3 : 4) << value;
    return out.str();
}
} // namespace

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

void write_trial_rows(csv_writer& csv,
                      const csv_writer::run& r,
                      const trial_result& trial)
{
    csv.row(r, "gbps", trial.achieved_gbps);
    csv.row(r, "heaps_sent", trial.heaps_sent);
    csv.row(r, "heaps_received", trial.heaps_received);
    csv.row(r, "packets_sent", trial.packets_sent);
    csv.row(r, "packets_received", trial.packets_received);
    csv.row(r,
            "packets_lost",
            std::int64_t(trial.packets_sent) - std::int64_t(trial.packets_received));
    if (trial.heaps_sent > 0)
        csv.row(r, "loss_fraction", double(trial.heaps_lost()) / trial.heaps_sent);
    csv.cpu_rows(r, trial.receiver_cpu);
}

std::string describe(const search_result& r)
{
    return r.sender_limited ? ">= " + gbps(r.lossless_gbps) + " Gb/s (sender-limited)"
                            : gbps(r.lossless_gbps) + " Gb/s";
}

search_result search_lossless_rate(const trial_function& trial,
                                   const search_options& options,
                                   const std::string& label,
                                   const csv_scope& rows)
{
    // A run that loses nothing but sent well below the rate asked says nothing about
    // that rate: the sender (sharing the CPUs) is the limit, and the search ends. It
    // does show the receiver lossless at the rate the sender reached.
    constexpr double reached = 0.95;
    enum class outcome { pass, loss, sender_short };
    std::vector<double> rates = options.rates;
    std::sort(rates.begin(), rates.end());
    std::vector<trial_result> runs_at_best; //!< the passing runs at the best rate
    std::vector<trial_result>
        runs_short; //!< the lossless runs where the sender fell short
    double short_at = 0.0;

    auto attempt = [&](double rate) {
        std::vector<trial_result> runs;
        for (int run = 1; run <= options.runs; run++) {
            const trial_result r = trial(rate);
            std::cout << "  " << label << " run " << run << "/" << options.runs << " at "
                      << describe(r) << std::endl;
            write_trial_rows(rows.csv,
                             { rows.bench, rows.packet_bytes, rate, std::to_string(run) },
                             r);
            runs.push_back(r);
            if (r.heaps_lost() > 0 || r.heaps_sent == 0)
                return outcome::loss;
            if (r.achieved_gbps < reached * rate) {
                short_at = rate;
                runs_short = runs;
                return outcome::sender_short;
            }
        }
        runs_at_best = runs;
        return outcome::pass;
    };

    double best = 0.0;
    double first_fail = 0.0;
    bool limited = false;
    for (double rate : rates) {
        const outcome o = attempt(rate);
        if (o == outcome::pass) {
            best = rate;
            continue;
        }
        if (o == outcome::loss)
            first_fail = rate;
        limited = o == outcome::sender_short;
        break;
    }
    if (first_fail > 0) {
        double lo = best;
        double hi = first_fail;
        for (int i = 0; i < options.refine && !limited; i++) {
            const double mid = (lo + hi) / 2;
            const outcome o = attempt(mid);
            if (o == outcome::pass)
                lo = mid;
            else if (o == outcome::loss)
                hi = mid;
            else
                limited = true;
        }
        best = lo;
        first_fail = hi;
    }

    search_result result;
    result.lossless_gbps = best;
    result.loss_gbps = first_fail;
    result.sender_limited = limited;
    double offered = best;
    double short_reached = 0.0;
    if (limited) {
        short_reached = runs_short.front().achieved_gbps;
        for (const trial_result& r : runs_short)
            short_reached = std::min(short_reached, r.achieved_gbps);
        if (short_reached > best) {
            // The receiver lost nothing at what the sender reached: that is the figure.
            result.lossless_gbps = short_reached;
            runs_at_best = runs_short;
            offered = short_at;
        }
    }

    if (result.lossless_gbps <= 0)
        std::cout << label << ": no lossless rate";
    else if (limited)
        std::cout << label << ": lossless at >= " << gbps(result.lossless_gbps)
                  << " Gb/s, sender-limited";
    else
        std::cout << label << ": highest lossless rate " << gbps(best) << " Gb/s";
    const csv_writer::run at_best{ rows.bench, rows.packet_bytes, offered, "median" };
    rows.csv.row(at_best, "lossless_gbps", result.lossless_gbps);
    rows.csv.row(at_best, "sender_limited", std::uint64_t(limited));
    if (!runs_at_best.empty() && result.lossless_gbps > 0) {
        std::vector<double> achieved;
        std::vector<cpu_per_gib> cpu_figures;
        for (const trial_result& r : runs_at_best) {
            achieved.push_back(r.achieved_gbps);
            if (r.receiver_cpu)
                cpu_figures.push_back(*r.receiver_cpu);
        }
        const auto [lo, hi] = std::minmax_element(achieved.begin(), achieved.end());
        std::cout << " (" << runs_at_best.size()
                  << " consecutive runs without loss, achieved " << gbps(*lo) << "-"
                  << gbps(*hi) << " Gb/s)";
        const std::optional<cpu_per_gib> cpu = median_cpu(cpu_figures);
        if (cpu)
            std::cout << ", receive side " << describe(*cpu) << " (medians)";
        rows.csv.row(at_best, "gbps", median(achieved));
        rows.csv.cpu_rows(at_best, cpu);
    }
    if (first_fail > 0)
        std::cout << (result.lossless_gbps > 0 ? "; heaps lost at " : ": heaps lost at ")
                  << gbps(first_fail) << " Gb/s";
    if (limited)
        std::cout << "; the sender reached only " << gbps(short_reached) << " Gb/s of "
                  << gbps(short_at)
                  << " (sender-limited: the receiver's limit was not found)";
    if (first_fail <= 0 && !limited)
        std::cout << "; no loss up to the highest rate tried";
    std::cout << "; " << load_average() << std::endl;
    return result;
}

std::string
figure_lines(const std::string& name, std::size_t packet, const search_result& r)
{
    std::ostringstream out;
    out << name << "_lossless_gbps_" << packet << ": " << r.lossless_gbps << "\n"
        << name << "_lossless_sender_limited_" << packet << ": " << int(r.sender_limited)
        << "\n";
    return out.str();
}

search_result search_packet(const packet_trial& trial,
                            std::size_t packet,
                            const search_options& search,
                            const std::string& mode,
                            csv_writer& csv)
{
    bool first = true;
    const auto at_rate = [&](double rate) {
        auto r = trial(packet, rate, first);
        first = false;
        return r;
    };
    std::string label = mode;
    std::replace(label.begin(), label.end(), '_', ' ');
    return search_lossless_rate(at_rate,
                                search,
                                label + " packet " + std::to_string(packet),
                                { csv, mode, packet });
}

int report_lossless_rates(const search_options& search,
                          const std::vector<std::size_t>& packets,
                          const std::string& mode,
                          const packet_trial& trial,
                          csv_writer& csv)
{
    std::vector<std::pair<std::size_t, search_result>> figures;
    for (std::size_t packet : packets)
        figures.emplace_back(packet, search_packet(trial, packet, search, mode, csv));
    for (const auto& [packet, result] : figures)
        std::cout << figure_lines(mode, packet, result);
    return 0;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr
