# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# spead_add_python_qa(<dir> [TIMEOUT <seconds>] [NIC_TIMEOUT <seconds>])
#
# Registers every qa_*.py in <dir> as a ctest test named after the file (found, not
# listed: a new qa_*.py is a new test at the next configure):
#   qa_<name>.py          one test `qa_<name>` (label qa, TIMEOUT, default 240 s), run by
#                         GNU Radio's GR_ADD_TEST with the build's test_modules and this
#                         directory (spead_qa_support.py) on PYTHONPATH.
#   qa_<name>ibverbs.py   runs on the emulated NIC instead: one test per `def test_...`
#                         method of the file, `qa_<name>ibverbs.<method>`, each in a
#                         fresh two-host topology and run in host 2 (label integration,
#                         NIC_TIMEOUT, default 180 s; needs root, as every emulator test).
# Used by python/spead (the blocks' QA) and tests/python (the Python API and the tests
# across blocks and tools).
#
# spead_add_python_unittests(<prefix> [TIMEOUT <seconds>])
#
# Registers every test_*.py in the calling directory as `<prefix>_<file name>` (label
# unit, TIMEOUT default 120 s): standard-library unittest scripts that need no
# flowgraph (tests/tools, tests/interop).
include(GrTest)
set(SPEAD_QA_SUPPORT_DIR ${CMAKE_CURRENT_LIST_DIR})

function(spead_add_python_qa dir)
    cmake_parse_arguments(qa "" "TIMEOUT;NIC_TIMEOUT" "" ${ARGN})
    if(NOT qa_TIMEOUT)
        set(qa_TIMEOUT 240)
    endif()
    if(NOT qa_NIC_TIMEOUT)
        set(qa_NIC_TIMEOUT 180)
    endif()
    set(GR_TEST_TARGET_DEPS gnuradio-spead)
    set(GR_TEST_PYTHON_DIRS ${SPEAD_QA_SUPPORT_DIR})
    set(GR_TEST_ENVIRONS "GR_SPEAD_VECTORS_DIR=${GR_SPEAD_VECTORS_DIR}"
        "GR_SPEAD_APPS_DIR=${PROJECT_BINARY_DIR}/apps")
    set(nic_env "PYTHONPATH=${PROJECT_BINARY_DIR}/test_modules:${SPEAD_QA_SUPPORT_DIR}"
        "GR_DONT_LOAD_PREFS=1" "VOLK_GENERIC=1" "GR_CONF_CONTROLPORT_ON=False"
        "GR_SPEAD_VECTORS_DIR=${GR_SPEAD_VECTORS_DIR}")
    set(in_host_2 /bin/sh -c "exec ip netns exec \"$TOPO_NS_2\" \"$0\" \"$@\"")

    file(GLOB scripts CONFIGURE_DEPENDS ${dir}/qa_*.py)
    foreach(script IN LISTS scripts)
        get_filename_component(name ${script} NAME_WE)
        if(NOT name MATCHES "ibverbs$")
            GR_ADD_TEST(${name} ${PYTHON_EXECUTABLE} -B ${script})
            set_tests_properties(${name} PROPERTIES LABELS qa TIMEOUT ${qa_TIMEOUT}
                FAIL_REGULAR_EXPRESSION "Ran 0 tests")
        elseif(COMMAND spead_add_emulated_nic_test)
            set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${script})
            file(STRINGS ${script} methods REGEX "^    def test_[a-z0-9_]+\\(")
            if(NOT methods)
                message(FATAL_ERROR "${script}: no `def test_...` method to register")
            endif()
            foreach(line IN LISTS methods)
                string(REGEX REPLACE "^    def (test_[a-z0-9_]+)\\(.*" "\\1" method "${line}")
                spead_add_emulated_nic_test(NAME ${name}.${method}
                    TOPOLOGY --hosts 2 --link veth
                    TIMEOUT ${qa_NIC_TIMEOUT}
                    COMMAND ${in_host_2} /usr/bin/python3 -B ${script} ${name}.${method})
                set_property(TEST ${name}.${method} APPEND PROPERTY ENVIRONMENT ${nic_env})
                set_property(TEST ${name}.${method} APPEND PROPERTY
                    FAIL_REGULAR_EXPRESSION "skipped|Ran 0 tests")
            endforeach()
        endif()
    endforeach()
endfunction()

function(spead_add_python_unittests prefix)
    cmake_parse_arguments(unit "" "TIMEOUT" "" ${ARGN})
    if(NOT unit_TIMEOUT)
        set(unit_TIMEOUT 120)
    endif()
    file(GLOB scripts CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_*.py)
    foreach(script IN LISTS scripts)
        get_filename_component(name ${script} NAME_WE)
        add_test(NAME ${prefix}_${name} COMMAND /usr/bin/python3 -B ${script} -v)
        set_tests_properties(${prefix}_${name} PROPERTIES
            LABELS unit TIMEOUT ${unit_TIMEOUT} FAIL_REGULAR_EXPRESSION "Ran 0 tests"
            ENVIRONMENT "GR_SPEAD_VECTORS_DIR=${GR_SPEAD_VECTORS_DIR}")
    endforeach()
endfunction()
