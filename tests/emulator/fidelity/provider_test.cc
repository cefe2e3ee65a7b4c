/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Provider libraries register with libibverbs from their constructors; on the emulator
// that is accepted and changes neither the devices nor how they work.
#include "verbs_test_support.h"

#include <dlfcn.h>

using namespace verbs_test;

namespace {

// The part of rdma-core's struct verbs_device_ops a registration names itself by.
struct fake_provider_ops {
    const char* name;
    void* rest[16];
};

} // namespace

TEST(ProviderRegistration, IsAcceptedAndTheDevicesStayTheEmulators)
{
    using register_function = void (*)(const fake_provider_ops*);
    const auto register_driver = reinterpret_cast<register_function>(
        dlvsym(RTLD_DEFAULT, "verbs_register_driver_34", "IBVERBS_PRIVATE_34"));
    ASSERT_NE(register_driver, nullptr) << dlerror();
    static const fake_provider_ops ops{ "fake_provider", {} };
    register_driver(&ops);
    register_driver(&ops); // a provider loaded twice (linked and dlopen'd)

    int count = -1;
    ibv_device** devices = ibv_get_device_list(&count);
    ASSERT_NE(devices, nullptr);
    ASSERT_EQ(count, 1);
    EXPECT_STREQ(ibv_get_device_name(devices[0]), "emu_lo");
    ibv_free_device_list(devices);
    // The device still opens and works as before.
    context_ptr context = open_loopback_device();
    ibv_device_attr attr{};
    EXPECT_EQ(ibv_query_device(context.get(), &attr), 0);
}
