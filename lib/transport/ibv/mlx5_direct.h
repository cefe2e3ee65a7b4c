/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// mlx5 direct verbs, loaded at run time: libmlx5.so.1 is rdma-core's provider for
// ConnectX-4 and later, present wherever such a NIC is used but not a link-time
// dependency of gr-spead (a machine without it still runs the plain verbs path).
// What is asked of it: does the device offer striding (multi-packet) receive queues,
// and the calls that create and describe one.

#ifndef INCLUDED_SPEAD_TRANSPORT_IBV_MLX5_DIRECT_H
#define INCLUDED_SPEAD_TRANSPORT_IBV_MLX5_DIRECT_H

#include <gnuradio/spead/api.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <string>

namespace gr {
namespace spead {
namespace ibv {

/*! The entry points of libmlx5.so.1 the multi-packet receiver uses. */
struct mlx5_direct_verbs {
    bool (*is_supported)(ibv_device* device) = nullptr;
    int (*query_device)(ibv_context* context, mlx5dv_context* attrs) = nullptr;
    ibv_wq* (*create_wq)(ibv_context* context,
                         ibv_wq_init_attr* attr,
                         mlx5dv_wq_init_attr* mlx5_attr) = nullptr;
    int (*init_obj)(mlx5dv_obj* obj, std::uint64_t obj_type) = nullptr;
};

/*! Whether a device gives striding receive queues to raw-packet QPs, and if not, why. */
struct striding_rq_support {
    bool usable = false;
    std::string reason; //!< why not, when not usable (for the log and spead_ibv_check)
    mlx5dv_striding_rq_caps caps{};
    const mlx5_direct_verbs* mlx5 = nullptr; //!< set when usable
};

/*! libmlx5's entry points, loaded once per process (dlopen + dlsym); nullptr with
 * \p why set when the library or one of the functions is missing. */
SPEAD_API const mlx5_direct_verbs* load_mlx5_direct_verbs(std::string& why);

/*! Asks the device (through libmlx5) for striding RQ support. Never throws.
 * GR_SPEAD_IBV_MPRQ=0 in the environment makes it answer no (to compare with slots). */
SPEAD_API striding_rq_support query_striding_rq(ibv_context* context);

} // namespace ibv
} // namespace spead
} // namespace gr

#endif
