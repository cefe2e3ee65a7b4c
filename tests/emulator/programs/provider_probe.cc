/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// emu_provider_probe: asks mlx5dv_is_supported() about every device, the two ways
// programs reach libmlx5: linked against it (the provider's constructor registers it
// with libibverbs before main) and spead2's way, dlopen("libmlx5.so.1") + dlsym.
//
//   emu_provider_probe [--expect-supported yes|no] [--expect-library <path substring>]
//
// Prints one line per device and way, and which file answered. Exits 0 when every
// answer and the library match the expectations, 1 otherwise, 3 without devices.
#include "program_support.h"

#include <dlfcn.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <cstdio>
#include <string>

using namespace emu_programs;

namespace {

std::string file_defining(const void* function)
{
    Dl_info info{};
    if (dladdr(function, &info) == 0 || info.dli_fname == nullptr)
        return "(unknown)";
    return info.dli_fname;
}

} // namespace

int main(int argc, char** argv)
{
    const options opts(argc, argv, 1);
    const std::string expect_supported = opts.text("expect-supported");
    const std::string expect_library = opts.text("expect-library");

    // spead2's pattern: a private handle, then look the entry point up by name.
    void* handle = dlopen("libmlx5.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        fprintf(stderr, "dlopen(libmlx5.so.1): %s\n", dlerror());
        return exit_traffic_mismatch;
    }
    using is_supported_function = bool (*)(ibv_device*);
    const auto looked_up =
        reinterpret_cast<is_supported_function>(dlsym(handle, "mlx5dv_is_supported"));
    if (looked_up == nullptr) {
        fprintf(stderr, "dlsym(mlx5dv_is_supported): %s\n", dlerror());
        return exit_traffic_mismatch;
    }
    const std::string linked_file =
        file_defining(reinterpret_cast<const void*>(&mlx5dv_is_supported));
    const std::string opened_file =
        file_defining(reinterpret_cast<const void*>(looked_up));
    printf("linked libmlx5: %s\ndlopen'd libmlx5: %s\n",
           linked_file.c_str(),
           opened_file.c_str());

    int count = 0;
    ibv_device** devices = ibv_get_device_list(&count);
    if (devices == nullptr || count == 0) {
        fprintf(stderr, "no RDMA device exists\n");
        return exit_no_rdma_device;
    }
    bool as_expected = true;
    for (int i = 0; i < count; i++) {
        const bool linked = mlx5dv_is_supported(devices[i]);
        const bool opened = looked_up(devices[i]);
        printf("%s: mlx5dv_is_supported linked %s, dlsym %s\n",
               ibv_get_device_name(devices[i]),
               linked ? "yes" : "no",
               opened ? "yes" : "no");
        if (!expect_supported.empty() && ((linked ? "yes" : "no") != expect_supported ||
                                          (opened ? "yes" : "no") != expect_supported))
            as_expected = false;
    }
    ibv_free_device_list(devices);
    if (!expect_library.empty() &&
        (linked_file.find(expect_library) == std::string::npos ||
         opened_file.find(expect_library) == std::string::npos)) {
        fprintf(stderr, "expected libmlx5 from %s\n", expect_library.c_str());
        as_expected = false;
    }
    dlclose(handle);
    return as_expected ? exit_ok : exit_traffic_mismatch;
}
