# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# spead_add_emulated_nic_test(NAME <name>
#                             TOPOLOGY <netns-topology options...>
#                             COMMAND <command> [<arg>...]
#                             [NETDEVS <netdev>[,<netdev>...]]
#                             [TIMEOUT <seconds>] [LABELS <label>...])
#
# A ctest test whose command runs over a fresh namespace topology (tests/netns/
# netns-topology) with the emulated NIC injected: LD_LIBRARY_PATH is the directory of
# the stand-in libibverbs.so.1/librdmacm.so.1 and SPEAD_EMU_NETDEVS names the
# interfaces that get a device (default: lo for --loopback, eth0 for --hosts, which is
# every host's interface). Everything the command starts inherits both, so any verbs
# program or flowgraph in it uses the emulator; kernel-socket tools are unaffected.
#
#   spead_add_emulated_nic_test(NAME transport.ibv_receive
#       TOPOLOGY --hosts 2
#       COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/ibv_receive_case.sh $<TARGET_FILE:spead_recv>)
#
# The test gets LABELS integration (plus LABELS), the TIMEOUT (default 120 s; the
# topology stops the command 20 s earlier so it can still tear down), and the fixture
# that sweeps and checks for leftover namespaces.
function(spead_add_emulated_nic_test)
    cmake_parse_arguments(test "" "NAME;NETDEVS;TIMEOUT" "TOPOLOGY;COMMAND;LABELS" ${ARGN})
    if(NOT test_NAME OR NOT test_TOPOLOGY OR NOT test_COMMAND)
        message(FATAL_ERROR "spead_add_emulated_nic_test needs NAME, TOPOLOGY and COMMAND")
    endif()
    if(NOT test_TIMEOUT)
        set(test_TIMEOUT 120)
    endif()
    if(NOT test_NETDEVS)
        if("--loopback" IN_LIST test_TOPOLOGY)
            set(test_NETDEVS lo)
        else()
            set(test_NETDEVS eth0)
        endif()
    endif()
    math(EXPR command_timeout "${test_TIMEOUT} - 20")
    add_test(NAME ${test_NAME}
        COMMAND "${SPEAD_NETNS_TOPOLOGY}" ${test_TOPOLOGY} --timeout ${command_timeout} --
            ${test_COMMAND})
    set_tests_properties(${test_NAME} PROPERTIES
        LABELS "integration;${test_LABELS}"
        TIMEOUT ${test_TIMEOUT}
        ENVIRONMENT "LD_LIBRARY_PATH=${SPEAD_EMU_LIBRARY_DIR};SPEAD_EMU_NETDEVS=${test_NETDEVS}"
        FIXTURES_REQUIRED emulator_namespaces)
endfunction()
