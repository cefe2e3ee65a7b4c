/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_BLOCK_OPTIONS_H
#define INCLUDED_SPEAD_BLOCK_OPTIONS_H

/* The blocks' options by name: the one list that GRC's fields, the Python keywords,
 * docs/usage.md's table and source_config / sink_config share (a test holds them
 * together). A value given by name is checked for its kind here, then applied to the
 * config object that owns the option, whose setter validates it. */

#include <gnuradio/spead/api.h>
#include <initializer_list>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace gr {
namespace spead {

/*! What an option holds. */
enum class option_kind {
    flag,    //!< true or false
    integer, //!< a signed 32-bit integer (C++ int)
    count,   //!< a whole number >= 0 (sizes, counts, item ids: 64 bits)
    number,  //!< a real number (double)
    text,    //!< a string
    id_list  //!< whole numbers >= 0, e.g. substream ids
};

/*! The name of a kind as the documentation writes it: bool, int, uint, float, str,
 * list of uint. */
SPEAD_API const char* option_kind_name(option_kind kind);

/*!
 * \brief A value given for an option by name: a bool, an integer, a real, a string
 * or a list of whole numbers, converted to the option's kind when applied (a
 * negative count or a fraction for an integer is refused, naming the option).
 */
class SPEAD_API option_value
{
public:
    using holder = std::variant<bool,
                                long long,
                                unsigned long long,
                                double,
                                std::string,
                                std::vector<std::uint64_t>>;

    option_value() : d_value(false) {}
    option_value(bool v) : d_value(v) {}
    option_value(int v) : d_value(static_cast<long long>(v)) {}
    option_value(long v) : d_value(static_cast<long long>(v)) {}
    option_value(long long v) : d_value(v) {}
    option_value(unsigned v) : d_value(static_cast<unsigned long long>(v)) {}
    option_value(unsigned long v) : d_value(static_cast<unsigned long long>(v)) {}
    option_value(unsigned long long v) : d_value(v) {}
    option_value(double v) : d_value(v) {}
    option_value(const char* v) : d_value(std::string(v)) {}
    option_value(std::string v) : d_value(std::move(v)) {}
    option_value(std::vector<std::uint64_t> v) : d_value(std::move(v)) {}
    option_value(std::initializer_list<std::uint64_t> v)
        : d_value(std::vector<std::uint64_t>(v))
    {
    }

    const holder& get() const { return d_value; }

    /*! As \p kind, for the option \p name.
     * \throws std::invalid_argument "NAME: VALUE is not ...; give ..." */
    bool as_flag(const std::string& name) const;
    int as_integer(const std::string& name) const;
    std::uint64_t as_count(const std::string& name) const;
    double as_number(const std::string& name) const;
    std::string as_text(const std::string& name) const;
    std::vector<std::uint64_t> as_id_list(const std::string& name) const;

    /*! Checks that the value can be taken as \p kind (as the as_ calls above). */
    void check(option_kind kind, const std::string& name) const;

    /*! As Python writes it: True, 7148, 0.5, 'udp', [8, 9]. */
    std::string to_python() const;

    bool operator==(const option_value& other) const { return d_value == other.d_value; }

private:
    holder d_value;
};

/*! One option of a block, as every face names and documents it. */
struct SPEAD_API option_info {
    std::string name; //!< the config's and Python's name (item_type)
    std::string
        grc_id;      //!< GRC's parameter id, where older flowgraphs fixed another (type)
    std::string tab; //!< GRC's tab (category)
    option_kind kind;
    option_value default_value;
    std::string doc; //!< what it does, its range and default, in sentences
};

/*! Options given by name, in any order (the transport is applied first). */
using option_list = std::vector<std::pair<std::string, option_value>>;

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_BLOCK_OPTIONS_H */
