/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_MAPPING_OPTION_RULES_H
#define INCLUDED_SPEAD_MAPPING_OPTION_RULES_H

/* How a block config takes an option by name: its table of rules (source_options.cc,
 * sink_options.cc), each the option's description and the call that applies a value
 * to the config object owning it; and the routing of a transport's option to every
 * transport's config. */

#include <gnuradio/spead/block_options.h>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! One option of \p Config: how every face names it, and how a value is applied. */
template <typename Config>
struct option_rule {
    option_info info;
    /*! Applies \p value (already checked to be of info.kind) to the config. */
    void (*apply)(Config& config, const option_value& value);
};

/*! The rule named \p name. \throws std::invalid_argument for an unknown name */
template <typename Config>
const option_rule<Config>& find_rule(const std::vector<option_rule<Config>>& rules,
                                     const std::string& name,
                                     const char* block)
{
    for (const auto& rule : rules)
        if (rule.info.name == name)
            return rule;
    throw std::invalid_argument(name + ": not an option of spead." + block +
                                "; see help(spead." + block +
                                ") or docs/usage.md for the options");
}

/*! Applies every option's default to \p config (its constructor). */
template <typename Config>
void apply_defaults(Config& config, const std::vector<option_rule<Config>>& rules)
{
    for (const auto& rule : rules)
        rule.apply(config, rule.info.default_value);
}

/*! Config::set(): checks \p value's kind, then applies it. */
template <typename Config>
void apply_option(Config& config,
                  const std::vector<option_rule<Config>>& rules,
                  const char* block,
                  const std::string& name,
                  const option_value& value)
{
    const auto& rule = find_rule(rules, name, block);
    value.check(rule.info.kind, name);
    rule.apply(config, value);
}

/*! Applies \p options by name to \p config, the transport before the rest (which
 * go to its config, see source_config), then reports what the transport's config
 * refused. \throws std::invalid_argument naming the first bad option */
template <typename Config>
void apply_options(Config& config, const option_list& options)
{
    for (const auto& [name, value] : options)
        if (name == "transport")
            config.set(name, value);
    for (const auto& [name, value] : options)
        if (name != "transport")
            config.set(name, value);
    const std::string& t = config.get_transport();
    const std::string refused = config.refusal(t == "auto" ? "udp" : t);
    if (!refused.empty())
        throw std::invalid_argument(refused);
}

/*! The descriptions of \p rules, in their order (Config::options()). */
template <typename Config>
std::vector<option_info> option_infos(const std::vector<option_rule<Config>>& rules)
{
    std::vector<option_info> out;
    for (const auto& rule : rules)
        out.push_back(rule.info);
    return out;
}

/*! Calls \p set, renaming an std::invalid_argument that names \p config_name (a
 * config setter's parameter) to \p option (the block option's name). */
template <typename Set>
void as_option(const std::string& option, const char* config_name, Set&& set)
{
    try {
        set();
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        const std::string prefix = std::string(config_name) + ":";
        if (what.compare(0, prefix.size(), prefix) != 0)
            throw;
        throw std::invalid_argument(option + what.substr(prefix.size() - 1));
    }
}

/*! transport → option → why its config refused the value given by name. */
using transport_refusals = std::map<std::string, std::map<std::string, std::string>>;

/*!
 * Applies \p set to \p transport's config and records in \p refusals whether it
 * refused the value of \p option. A value given by name goes to every transport's
 * config that has the option (see source_config): the transports in use (\p in_use)
 * refuse it at once, the others keep the refusal for later.
 * \throws std::invalid_argument when \p in_use and refused
 */
template <typename Set>
void apply_to_transport(transport_refusals& refusals,
                        const std::string& transport,
                        const std::string& option,
                        bool in_use,
                        Set&& set)
{
    try {
        set();
        refusals[transport].erase(option);
    } catch (const std::invalid_argument& e) {
        if (in_use)
            throw;
        refusals[transport][option] = e.what();
    }
}

/*! The first refusal kept for \p transport, or empty. */
inline std::string first_refusal(const transport_refusals& refusals,
                                 const std::string& transport)
{
    const auto found = refusals.find(transport);
    if (found == refusals.end() || found->second.empty())
        return {};
    return found->second.begin()->second;
}

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_MAPPING_OPTION_RULES_H */
