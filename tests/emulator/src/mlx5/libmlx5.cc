/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The stand-in libmlx5.so.1: the mlx5 direct verbs a striding-RQ receiver needs,
// forwarded to the stand-in libibverbs, which owns the devices and their objects
// (src/mlx5_direct_verbs.cc). Every other export of rdma-core's libmlx5 is a generated
// stub that aborts naming itself. On the plain model mlx5dv_is_supported says no.
#include <infiniband/mlx5dv.h>

extern "C" {

// Exported by the stand-in libibverbs in its private node.
bool spead_emu_mlx5dv_is_supported(ibv_device* device);
int spead_emu_mlx5dv_query_device(ibv_context* context, mlx5dv_context* attrs);
ibv_wq* spead_emu_mlx5dv_create_wq(ibv_context* context,
                                   ibv_wq_init_attr* attr,
                                   mlx5dv_wq_init_attr* mlx5_attr);
int spead_emu_mlx5dv_init_obj(mlx5dv_obj* obj, uint64_t obj_type);

bool mlx5dv_is_supported(ibv_device* device)
{
    return spead_emu_mlx5dv_is_supported(device);
}

int mlx5dv_query_device(ibv_context* context, mlx5dv_context* attrs)
{
    return spead_emu_mlx5dv_query_device(context, attrs);
}

ibv_wq* mlx5dv_create_wq(ibv_context* context,
                         ibv_wq_init_attr* attr,
                         mlx5dv_wq_init_attr* mlx5_attr)
{
    return spead_emu_mlx5dv_create_wq(context, attr, mlx5_attr);
}

int mlx5dv_init_obj(mlx5dv_obj* obj, uint64_t obj_type)
{
    return spead_emu_mlx5dv_init_obj(obj, obj_type);
}

} // extern "C"
