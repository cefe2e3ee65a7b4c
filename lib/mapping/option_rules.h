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
#include <type_traits>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace gr {
namespace spead {

/*! An option's description (option_info) as the tables write it. */
inline option_info describe(std::string name,
                            std::string tab,
                            option_kind kind,
                            option_value default_value,
                            std::string doc,
                            std::string grc_id = "")
{
    return { std::move(name),          std::move(grc_id), std::move(tab), kind,
             std::move(default_value), std::move(doc) };
}

/*! One option of \p Config: how every face names it, and how a value is applied. */
template <typename Config>
struct option_rule {
    option_info info;
    /*! Applies \p value (already checked to be of info.kind) of the option \p name
     * to the config. */
    void (*apply)(Config& config, const std::string& name, const option_value& value);
};

/*! \p value as \p T (a setter's or a field's type), naming the option \p name. */
template <typename T>
T option_as(const option_value& value, const std::string& name)
{
    if constexpr (std::is_same_v<T, bool>)
        return value.as_flag(name);
    else if constexpr (std::is_same_v<T, int>)
        return value.as_integer(name);
    else if constexpr (std::is_same_v<T, double>)
        return value.as_number(name);
    else if constexpr (std::is_same_v<T, std::string>)
        return value.as_text(name);
    else if constexpr (std::is_same_v<T, std::vector<std::uint64_t>>)
        return value.as_id_list(name);
    else if constexpr (std::is_same_v<T, std::chrono::milliseconds>) {
        // Durations are given in seconds, as GRC and spead2 take them.
        const double seconds = value.as_number(name);
        if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e9)
            throw std::invalid_argument(name + ": " + value.to_python() +
                                        " is not a duration; give seconds, >= 0");
        return std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::duration<double>(seconds));
    } else {
        static_assert(std::is_unsigned_v<T>, "an option holds a count");
        return static_cast<T>(value.as_count(name));
    }
}

/*! The class a member pointer belongs to, and its value's (or argument's) type. */
template <typename Member>
struct member_of;
template <typename Class, typename Value>
struct member_of<Value Class::*> {
    using owner = Class;
    using value = Value;
};
template <typename Class, typename Result, typename Argument>
struct member_of<Result (Class::*)(Argument)> {
    using owner = Class;
    using value = std::decay_t<Argument>;
};

/*! An option rule's apply: the config's own setter \p Set (Config is deduced from
 * the rule's function pointer: Set may be its base's). */
template <auto Set, typename Config>
void set_config(Config& config, const std::string& name, const option_value& value)
{
    (config.*Set)(option_as<typename member_of<decltype(Set)>::value>(value, name));
}

/*! An option rule's apply: the setter \p Set of the config's part \p Part. */
template <auto Part, auto Set>
void set_part(typename member_of<decltype(Part)>::owner& config,
              const std::string& name,
              const option_value& value)
{
    ((config.*Part).*
     Set)(option_as<typename member_of<decltype(Set)>::value>(value, name));
}

/*! An option rule's apply: the field \p Field of the config's part \p Part (a plain
 * struct, checked as a whole at make()). */
template <auto Part, auto Field>
void set_field(typename member_of<decltype(Part)>::owner& config,
               const std::string& name,
               const option_value& value)
{
    (config.*Part).*Field =
        option_as<typename member_of<decltype(Field)>::value>(value, name);
}

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

/*!
 * How an option of the transports is applied to a block config (source_config,
 * sink_config): to every transport's config that has it (see apply_to_transport).
 */
template <typename Config>
struct option_routes {
    /*! \p transport's config is the one \p c's transport uses now (auto: udp, which
     * it can always fall back to). */
    static bool in_use(const Config& c, const std::string& transport)
    {
        return c.d_transport == transport ||
               (c.d_transport == "auto" && transport == "udp");
    }

    template <typename Set>
    static void to(Config& c, const std::string& transport, const char* option, Set&& set)
    {
        apply_to_transport(c.d_refusals, transport, option, in_use(c, transport), set);
    }
};

/*! An option rule's apply: the setter \p Set of the config's part \p Part, which only
 * the transport \p Transport has (rdma_connections: rdma). */
template <const char* Transport, auto Part, auto Set>
void set_transport_part(typename member_of<decltype(Part)>::owner& config,
                        const std::string& name,
                        const option_value& value)
{
    using config_type = typename member_of<decltype(Part)>::owner;
    const auto v = option_as<typename member_of<decltype(Set)>::value>(value, name);
    option_routes<config_type>::to(
        config, Transport, name.c_str(), [&] { ((config.*Part).*Set)(v); });
}

/*! Calls \p f on a link's config, or on each of a list of them (a sink's
 * connections, one per endpoint). */
template <typename Link, typename F>
void each_link(Link& link, F&& f)
{
    f(link);
}
template <typename Link, typename F>
void each_link(std::vector<Link>& links, F&& f)
{
    for (auto& link : links)
        f(link);
}

/*! Applies \p set to tcp's and rdma's configs of \p c alike (see apply_to_transport). */
template <typename Config, typename Set>
void set_on_links(Config& c, const std::string& name, Set&& set)
{
    using routes = option_routes<Config>;
    routes::to(c, "tcp", name.c_str(), [&] { each_link(c.tcp, set); });
    routes::to(c, "rdma", name.c_str(), [&] { each_link(c.rdma, set); });
}

/*! An option rule's apply: a link option, through tcp's setter \p TcpSet and rdma's
 * \p RdmaSet (Config is deduced from the rule's function pointer). */
template <auto TcpSet, auto RdmaSet, typename Config>
void set_links(Config& c, const std::string& name, const option_value& v)
{
    set_on_links(c, name, [&](auto& link) {
        using tcp_type = typename member_of<decltype(TcpSet)>::owner;
        if constexpr (std::is_base_of_v<tcp_type, std::decay_t<decltype(link)>>)
            (link.*
             TcpSet)(option_as<typename member_of<decltype(TcpSet)>::value>(v, name));
        else
            (link.*
             RdmaSet)(option_as<typename member_of<decltype(RdmaSet)>::value>(v, name));
    });
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
