# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# recv::udp_ibv_reader over the emulated NIC (included from CMakeLists.txt, which
# defines spead_add_ibv_gtest and the support library). Host 1 sends with the kernel,
# host 2 receives through verbs.

add_executable(spead_ibv_reader_tests udp_ibv_reader_test.cc)
target_link_libraries(spead_ibv_reader_tests PRIVATE spead_ibv_test_support ${CMAKE_DL_LIBS})
# spead_emu/extensions.h: the emulator's counters, the ground truth for NIC drops.
target_include_directories(spead_ibv_reader_tests PRIVATE
    "${PROJECT_SOURCE_DIR}/tests/emulator/include")
add_dependencies(spead_ibv_reader_tests spead_emu_libraries)

spead_discover_ibv_gtests(spead_ibv_reader_tests ibv.reader
    EXCLUDE ReceiveDrops.WithoutFlowCountersThePortsOutOfBufferCounts
            ReceiveDrops.WithNeitherCounterTheLogSaysDropsGoUncounted
            ReaderCompVector.TakenModuloTheDevicesVectors
            ReceiveQueue.TheEnvironmentForcesSlots
            MultiPacketQueue.FramesBeyondTheQueueAreCountedExactly)

# The same reader on the emulator's ConnectX-5 model, where it takes a multi-packet
# receive queue (striding RQ) by itself: every test but those about fixed slots, which
# the MultiPacketQueue.* tests mirror.
spead_discover_ibv_gtests(spead_ibv_reader_tests ibv.reader.cx5
    ENVIRONMENT SPEAD_EMU_MODEL=cx5
    EXCLUDE ReceiveDrops.FramesBeyondTheRingAreCountedByTheFlowCounters
            ReceiveDrops.WithoutFlowCountersThePortsOutOfBufferCounts
            ReceiveDrops.WithNeitherCounterTheLogSaysDropsGoUncounted
            ReaderErrors.BufferLargerThanTheDeviceAllowsIsClampedWithAWarning
            ReaderCompVector.TakenModuloTheDevicesVectors
            ReceiveQueue.TheEnvironmentForcesSlots)
spead_add_ibv_gtest(spead_ibv_reader_tests
    ibv.reader.cx5.ReceiveQueue.TheEnvironmentForcesSlots
    ReceiveQueue.TheEnvironmentForcesSlots
    ENVIRONMENT SPEAD_EMU_MODEL=cx5 GR_SPEAD_IBV_MPRQ=0)

# The fallbacks for counting NIC drops, on devices without flow counters (mlx4) and
# without port counters either; comp_vector modulo a device with 4 vectors.
spead_add_ibv_gtest(spead_ibv_reader_tests
    ibv.reader.ReceiveDrops.WithoutFlowCountersThePortsOutOfBufferCounts
    ReceiveDrops.WithoutFlowCountersThePortsOutOfBufferCounts
    ENVIRONMENT SPEAD_EMU_FLOW_COUNTERS=0)
spead_add_ibv_gtest(spead_ibv_reader_tests
    ibv.reader.ReceiveDrops.WithNeitherCounterTheLogSaysDropsGoUncounted
    ReceiveDrops.WithNeitherCounterTheLogSaysDropsGoUncounted
    ENVIRONMENT SPEAD_EMU_FLOW_COUNTERS=0 SPEAD_EMU_HW_COUNTERS=0)
spead_add_ibv_gtest(spead_ibv_reader_tests
    ibv.reader.ReaderCompVector.TakenModuloTheDevicesVectors
    ReaderCompVector.TakenModuloTheDevicesVectors
    ENVIRONMENT SPEAD_EMU_COMP_VECTORS=4)

# Start/stop cycles under valgrind: no definite leak, no invalid access, in the
# reader, the stream or the emulator.
if(VALGRIND_EXECUTABLE)
    spead_add_ibv_gtest(spead_ibv_reader_tests
        ibv.reader.ReaderLifecycle.StartStopCyclesUnderValgrind
        ReaderLifecycle.StartStopCyclesLeakNoFdsThreadsOrVerbsObjects
        TIMEOUT 300
        ENVIRONMENT IBV_READER_CYCLES=20
        LAUNCHER ${ibv_valgrind_launcher})
    # The same with a multi-packet receive queue (striding RQ, extended CQ, WQ, table).
    spead_add_ibv_gtest(spead_ibv_reader_tests
        ibv.reader.cx5.ReaderLifecycle.StartStopCyclesUnderValgrind
        ReaderLifecycle.StartStopCyclesLeakNoFdsThreadsOrVerbsObjects
        TIMEOUT 300
        ENVIRONMENT IBV_READER_CYCLES=20 SPEAD_EMU_MODEL=cx5
        LAUNCHER ${ibv_valgrind_launcher})
endif()

# Not a test: heaps of jumbo packets for measuring the reader's instructions per packet
# under callgrind (the command is at the top of the source).
add_executable(spead_ibv_reader_bench udp_ibv_reader_bench.cc)
target_link_libraries(spead_ibv_reader_bench PRIVATE spead_ibv_test_support)
add_dependencies(spead_ibv_reader_bench spead_emu_libraries)

# NIC faults injected into the emulated device while the reader runs (port down and
# up, QP fatal, CQ overrun, device fatal or removed, frames dropped, duplicated and
# reordered): recovered and counted, or the stream ends with the cause.
add_executable(spead_ibv_nic_fault_tests nic_fault_reader_test.cc)
target_link_libraries(spead_ibv_nic_fault_tests PRIVATE spead_ibv_test_support)
target_include_directories(spead_ibv_nic_fault_tests PRIVATE
    "${PROJECT_SOURCE_DIR}/tests/emulator/include")
add_dependencies(spead_ibv_nic_fault_tests spead_emu_libraries)
spead_discover_ibv_gtests(spead_ibv_nic_fault_tests ibv.faults)
# The same on the cx5 model (a striding RQ behind an RX-hash QP), but for a QP in the
# error state: the emulator does not inject faults into WQs (docs/testing.md).
spead_discover_ibv_gtests(spead_ibv_nic_fault_tests ibv.faults.cx5
    ENVIRONMENT SPEAD_EMU_MODEL=cx5
    EXCLUDE Modes/NicFaults.QueuePairInTheErrorStateIsResetCountedAndReceivesAgain/comp_vector
            Modes/NicFaults.QueuePairInTheErrorStateIsResetCountedAndReceivesAgain/busy_poll)
# Again with each fault's async event 300 ms late (after the reader's verbs fail, as a
# driver's event may trail the failure): the stream still ends with the cause, in both
# polling modes.
spead_discover_ibv_gtests(spead_ibv_nic_fault_tests ibv.faults.late-event
    ENVIRONMENT SPEAD_EMU_FAULT_EVENT_DELAY_MS=300)
# The sender (send::udp_ibv_stream) over a port that goes down and a fatal device.
add_executable(spead_ibv_nic_fault_sender_tests nic_fault_sender_test.cc)
target_link_libraries(spead_ibv_nic_fault_sender_tests PRIVATE spead_ibv_test_support)
target_include_directories(spead_ibv_nic_fault_sender_tests PRIVATE
    "${PROJECT_SOURCE_DIR}/tests/emulator/include" "${PROJECT_SOURCE_DIR}/tests/common")
add_dependencies(spead_ibv_nic_fault_sender_tests spead_emu_libraries)
spead_discover_ibv_gtests(spead_ibv_nic_fault_sender_tests ibv.faults.send)
