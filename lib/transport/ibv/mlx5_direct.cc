/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "mlx5_direct.h"
#include <dlfcn.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace gr {
namespace spead {
namespace ibv {

namespace {

struct loaded_library {
    mlx5_direct_verbs functions;
    bool ok = false;
    std::string why;
};

template <typename Function>
bool look_up(void* handle, const char* name, Function& out, std::string& why)
{
    out = reinterpret_cast<Function>(dlsym(handle, name));
    if (out == nullptr)
        why = std::string("libmlx5.so.1 has no ") + name + " (rdma-core too old)";
    return out != nullptr;
}

loaded_library load()
{
    loaded_library library;
    // Never closed: the provider stays registered with libibverbs for the process.
    void* handle = dlopen("libmlx5.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        library.why = std::string("libmlx5.so.1 cannot be loaded (") + dlerror() +
                      "; Debian/Ubuntu package ibverbs-providers)";
        return library;
    }
    mlx5_direct_verbs& f = library.functions;
    library.ok = look_up(handle, "mlx5dv_is_supported", f.is_supported, library.why) &&
                 look_up(handle, "mlx5dv_query_device", f.query_device, library.why) &&
                 look_up(handle, "mlx5dv_create_wq", f.create_wq, library.why) &&
                 look_up(handle, "mlx5dv_init_obj", f.init_obj, library.why);
    return library;
}

} // namespace

const mlx5_direct_verbs* load_mlx5_direct_verbs(std::string& why)
{
    static const loaded_library library = load();
    why = library.why;
    return library.ok ? &library.functions : nullptr;
}

striding_rq_support query_striding_rq(ibv_context* context)
{
    striding_rq_support support;
    if (const char* setting = std::getenv("GR_SPEAD_IBV_MPRQ")) {
        if (std::strcmp(setting, "0") == 0) {
            support.reason = "GR_SPEAD_IBV_MPRQ=0 forces fixed slots";
            return support;
        }
    }
    const mlx5_direct_verbs* mlx5 = load_mlx5_direct_verbs(support.reason);
    if (mlx5 == nullptr)
        return support;
    if (!mlx5->is_supported(context->device)) {
        support.reason = std::string("device ") + ibv_get_device_name(context->device) +
                         " is not an mlx5 device (ConnectX-4 or later)";
        return support;
    }
    mlx5dv_context attrs{};
    attrs.comp_mask = MLX5DV_CONTEXT_MASK_STRIDING_RQ;
    const int status = mlx5->query_device(context, &attrs);
    if (status != 0) {
        support.reason = std::string("mlx5dv_query_device: ") + std::strerror(status);
        return support;
    }
    if (!(attrs.comp_mask & MLX5DV_CONTEXT_MASK_STRIDING_RQ) ||
        !ibv_is_qpt_supported(attrs.striding_rq_caps.supported_qpts,
                              IBV_QPT_RAW_PACKET)) {
        support.reason = "the device or its kernel driver offers no striding RQ for "
                         "raw-packet QPs";
        return support;
    }
    support.usable = true;
    support.caps = attrs.striding_rq_caps;
    support.mlx5 = mlx5;
    return support;
}

} // namespace ibv
} // namespace spead
} // namespace gr
