/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/spead/block_options.h>
#include <gnuradio/spead/substream_set.h>
#include <climits>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace spead {

const char* option_kind_name(option_kind kind)
{
    static const char* const names[] = { "bool",  "int", "uint",
                                         "float", "str", "list of uint" };
    return names[static_cast<int>(kind)];
}

namespace {

[[noreturn]] void
refuse(const std::string& name, const option_value& value, const std::string& why)
{
    throw std::invalid_argument(name + ": " + value.to_python() + " " + why);
}

/*! A whole number, or refuses naming \p name. \p negative is set for one below 0. */
unsigned long long
whole(const option_value& value, const std::string& name, bool& negative)
{
    negative = false;
    if (const auto* v = std::get_if<long long>(&value.get())) {
        negative = *v < 0;
        return static_cast<unsigned long long>(*v);
    }
    if (const auto* v = std::get_if<unsigned long long>(&value.get()))
        return *v;
    refuse(name, value, "is not a whole number");
}

/*! The value if it holds a \p T, else nullptr. */
template <typename T>
const T* held(const option_value& value)
{
    return std::get_if<T>(&value.get());
}

} // namespace

bool option_value::as_flag(const std::string& name) const
{
    if (const auto* v = held<bool>(*this))
        return *v;
    refuse(name, *this, "is not True or False");
}

int option_value::as_integer(const std::string& name) const
{
    bool negative;
    const unsigned long long bits = whole(*this, name, negative);
    const long long v = static_cast<long long>(bits);
    if ((negative && v < INT_MIN) || (!negative && bits > INT_MAX))
        refuse(name, *this, "is out of range; give a 32-bit integer");
    return static_cast<int>(v);
}

std::uint64_t option_value::as_count(const std::string& name) const
{
    bool negative;
    const unsigned long long v = whole(*this, name, negative);
    if (negative)
        refuse(name, *this, "is negative; give a whole number >= 0");
    return v;
}

double option_value::as_number(const std::string& name) const
{
    if (const auto* v = held<double>(*this))
        return *v;
    if (const auto* v = held<long long>(*this))
        return static_cast<double>(*v);
    if (const auto* v = held<unsigned long long>(*this))
        return static_cast<double>(*v);
    refuse(name, *this, "is not a number");
}

std::string option_value::as_text(const std::string& name) const
{
    if (const auto* v = held<std::string>(*this))
        return *v;
    refuse(name, *this, "is not text; give a string");
}

std::vector<std::uint64_t> option_value::as_id_list(const std::string& name) const
{
    if (const auto* v = held<std::vector<std::uint64_t>>(*this))
        return *v;
    if (const auto* v = held<std::string>(*this))
        return substream_set::parse(*v); // "8-11", as spead_recv --substream-ids
    refuse(name,
           *this,
           "is not a list of ids; give a list or range of whole numbers >= 0, e.g. "
           "[8, 9, 10, 11] or range(8, 12), or text: '8-11'");
}

void option_value::check(option_kind kind, const std::string& name) const
{
    using check_as = void (*)(const option_value&, const std::string&);
    static const check_as checks[] = {
        [](const option_value& v, const std::string& n) { v.as_flag(n); },
        [](const option_value& v, const std::string& n) { v.as_integer(n); },
        [](const option_value& v, const std::string& n) { v.as_count(n); },
        [](const option_value& v, const std::string& n) { v.as_number(n); },
        [](const option_value& v, const std::string& n) { v.as_text(n); },
        [](const option_value& v, const std::string& n) { v.as_id_list(n); },
    };
    checks[static_cast<int>(kind)](*this, name);
}

std::string option_value::to_python() const
{
    std::ostringstream out;
    if (const auto* v = std::get_if<bool>(&d_value))
        out << (*v ? "True" : "False");
    else if (const auto* v = std::get_if<long long>(&d_value))
        out << *v;
    else if (const auto* v = std::get_if<unsigned long long>(&d_value))
        out << *v;
    else if (const auto* v = std::get_if<double>(&d_value)) {
        // The shortest text that reads back as the same double, as Python's repr.
        std::string text;
        for (int digits = 1; digits <= 17; ++digits) {
            std::ostringstream attempt;
            attempt.precision(digits);
            attempt << *v;
            text = attempt.str();
            if (!std::isfinite(*v) || std::stod(text) == *v)
                break;
        }
        out << text;
        if (std::isfinite(*v) && text.find_first_of(".e") == std::string::npos)
            out << ".0";
    } else if (const auto* v = std::get_if<std::string>(&d_value)) {
        out << '\'';
        for (char c : *v)
            out << (c == '\'' || c == '\\' ? "\\" : "") << c;
        out << '\'';
    } else {
        out << '[';
        const auto& ids = std::get<std::vector<std::uint64_t>>(d_value);
        for (std::size_t i = 0; i < ids.size(); ++i)
            out << (i ? ", " : "") << ids[i];
        out << ']';
    }
    return out.str();
}

} // namespace spead
} // namespace gr
