/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The mlx5 direct verbs of the cx5 model, implemented here next to the objects they
// work on and exported in the private node for the stand-in libmlx5.so.1
// (src/mlx5/libmlx5.cc), which only forwards to them.
#include "device.h"
#include "device_context.h"
#include "log.h"
#include "work_queue.h"

#include <infiniband/mlx5dv.h>

#include <cerrno>

namespace spead_emu {
namespace {

// A ConnectX-5's striding RQ limits as the mlx5 kernel driver reports them (without
// the extended stride range of later NICs): strides of 64 B to 8 KiB, 512 to 65536
// strides per WQE.
constexpr uint32_t min_stride_log_bytes = 6;
constexpr uint32_t max_stride_log_bytes = 13;
constexpr uint32_t min_wqe_log_strides = 9;
constexpr uint32_t max_wqe_log_strides = 16;

bool is_cx5(ibv_context* context)
{
    return device_context::from(context) != nullptr &&
           features().model == device_model::cx5;
}

} // namespace
} // namespace spead_emu

using namespace spead_emu;

extern "C" {

bool spead_emu_mlx5dv_is_supported(ibv_device* device)
{
    return emulated_device::from(device) != nullptr &&
           features().model == device_model::cx5;
}

int spead_emu_mlx5dv_query_device(ibv_context* context, mlx5dv_context* attrs)
{
    if (attrs == nullptr)
        return EINVAL;
    if (!is_cx5(context))
        return EOPNOTSUPP;
    const uint64_t asked = attrs->comp_mask;
    attrs->version = 0;
    attrs->flags = MLX5DV_CONTEXT_FLAGS_CQE_V1 | MLX5DV_CONTEXT_FLAGS_MPW_ALLOWED |
                   MLX5DV_CONTEXT_FLAGS_ENHANCED_MPW;
    attrs->comp_mask = 0;
    // Only what was asked for and is modelled is answered, and said so in comp_mask.
    if (asked & MLX5DV_CONTEXT_MASK_STRIDING_RQ) {
        attrs->striding_rq_caps.min_single_stride_log_num_of_bytes = min_stride_log_bytes;
        attrs->striding_rq_caps.max_single_stride_log_num_of_bytes = max_stride_log_bytes;
        attrs->striding_rq_caps.min_single_wqe_log_num_of_strides = min_wqe_log_strides;
        attrs->striding_rq_caps.max_single_wqe_log_num_of_strides = max_wqe_log_strides;
        attrs->striding_rq_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
        attrs->comp_mask |= MLX5DV_CONTEXT_MASK_STRIDING_RQ;
    }
    return 0;
}

ibv_wq* spead_emu_mlx5dv_create_wq(ibv_context* context,
                                   ibv_wq_init_attr* attr,
                                   mlx5dv_wq_init_attr* mlx5_attr)
{
    if (!is_cx5(context)) {
        errno = EOPNOTSUPP;
        return nullptr;
    }
    if (attr == nullptr || (mlx5_attr != nullptr &&
                            (mlx5_attr->comp_mask &
                             ~uint64_t{ MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ }) != 0)) {
        errno = EINVAL;
        return nullptr;
    }
    striding_layout layout;
    if (mlx5_attr != nullptr &&
        (mlx5_attr->comp_mask & MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ)) {
        const mlx5dv_striding_rq_init_attr& striding = mlx5_attr->striding_rq_attrs;
        if (striding.single_stride_log_num_of_bytes < min_stride_log_bytes ||
            striding.single_stride_log_num_of_bytes > max_stride_log_bytes ||
            striding.single_wqe_log_num_of_strides < min_wqe_log_strides ||
            striding.single_wqe_log_num_of_strides > max_wqe_log_strides) {
            errno = EINVAL; // as mlx5, outside striding_rq_caps
            return nullptr;
        }
        layout.stride_bytes = 1u << striding.single_stride_log_num_of_bytes;
        layout.strides_per_wqe = 1u << striding.single_wqe_log_num_of_strides;
        layout.two_byte_shift = striding.two_byte_shift_en != 0;
    }
    return work_queue::create(context, *attr, layout);
}

int spead_emu_mlx5dv_init_obj(mlx5dv_obj* obj, uint64_t obj_type)
{
    if (obj == nullptr)
        return EINVAL;
    if (obj_type != MLX5DV_OBJ_RWQ)
        fail_unemulated("mlx5dv_init_obj with object types 0x%llx (only MLX5DV_OBJ_RWQ "
                        "is emulated)",
                        static_cast<unsigned long long>(obj_type));
    work_queue* wq = work_queue::from(obj->rwq.in);
    if (wq == nullptr || obj->rwq.out == nullptr)
        return EINVAL;
    wq->describe(*obj->rwq.out);
    return 0;
}

} // extern "C"
