/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The spead2-style placement peer: a C callback with spead2's chunk_place_data ABI.

#include <gnuradio/spead/recv_chunk_place.h>
#include <stdexcept>

namespace gr {
namespace spead {
namespace recv {

namespace {

class callback_placement final : public chunk_placement_policy
{
public:
    callback_placement(chunk_place_c_function fn, void* user_data)
        : d_fn(fn), d_user_data(user_data)
    {
    }
    void place(chunk_place_data* data, std::size_t data_size) override
    {
        d_fn(data, data_size, d_user_data);
    }

private:
    chunk_place_c_function d_fn;
    void* d_user_data;
};

class callback_placement_no_data final : public chunk_placement_policy
{
public:
    explicit callback_placement_no_data(chunk_place_c_function_no_data fn) : d_fn(fn) {}
    void place(chunk_place_data* data, std::size_t data_size) override
    {
        d_fn(data, data_size);
    }

private:
    chunk_place_c_function_no_data d_fn;
};

[[noreturn]] void null_callback()
{
    throw std::invalid_argument("place: the callback is null; give a C function "
                                "void place(chunk_place_data*, size_t[, void*]) "
                                "(e.g. a numba cfunc's address)");
}

} // namespace

std::shared_ptr<chunk_placement_policy> make_callback_placement(chunk_place_c_function fn,
                                                                void* user_data)
{
    if (!fn)
        null_callback();
    return std::make_shared<callback_placement>(fn, user_data);
}

std::shared_ptr<chunk_placement_policy>
make_callback_placement(chunk_place_c_function_no_data fn)
{
    if (!fn)
        null_callback();
    return std::make_shared<callback_placement_no_data>(fn);
}

} // namespace recv
} // namespace spead
} // namespace gr
