/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Optional hardware switched off or resized through the environment (see device.h):
// devices without flow counters, without port hw_counters, with a given number of
// completion vectors. Each test runs as its own ctest with its variable set.
#include "verbs_test_support.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

using namespace verbs_test;

namespace {

#define REQUIRE_ENVIRONMENT(name, value)                                           \
    do {                                                                           \
        const char* set = getenv(name);                                            \
        ASSERT_TRUE(set != nullptr && std::string(set) == (value))                 \
            << "run with " name "=" value " (tests/emulator/CMakeLists.txt does)"; \
    } while (0)

} // namespace

TEST(WithoutFlowCounters, CreatingCountersFailsWithEopnotsupp)
{
    REQUIRE_ENVIRONMENT("SPEAD_EMU_FLOW_COUNTERS", "0");
    context_ptr context = open_loopback_device();
    ibv_counters_init_attr init{};
    errno = 0;
    EXPECT_EQ(ibv_create_counters(context.get(), &init), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST(WithoutHwCounters, IbdevPathLeadsToNoPortCounters)
{
    REQUIRE_ENVIRONMENT("SPEAD_EMU_HW_COUNTERS", "0");
    context_ptr context = open_loopback_device();
    EXPECT_STREQ(context->device->ibdev_path, "/sys/class/infiniband/emu_lo");
    std::ifstream counter(std::string(context->device->ibdev_path) +
                          "/ports/1/hw_counters/out_of_buffer");
    EXPECT_FALSE(counter.good());
}

TEST(CompVectors, TheDeviceHasAsManyAsConfigured)
{
    REQUIRE_ENVIRONMENT("SPEAD_EMU_COMP_VECTORS", "4");
    context_ptr context = open_loopback_device();
    EXPECT_EQ(context->num_comp_vectors, 4);
    cq_ptr last(ibv_create_cq(context.get(), 8, nullptr, nullptr, 3));
    EXPECT_NE(last, nullptr);
    errno = 0;
    EXPECT_EQ(ibv_create_cq(context.get(), 8, nullptr, nullptr, 4), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    install_private_loopback_environment();
    return RUN_ALL_TESTS();
}
