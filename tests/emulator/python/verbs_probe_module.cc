/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// spead_emu_verbs_probe: a Python module linked with -libverbs, as the product's Python
// bindings are, that lists the RDMA devices the process sees. Importing it under
// /usr/bin/python3 with the stand-ins on LD_LIBRARY_PATH shows that an interpreter that
// loads libibverbs late (through an extension module) gets the emulated NIC too.
#include <infiniband/verbs.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <endian.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

struct device_list_deleter {
    void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
struct context_closer {
    void operator()(ibv_context* context) const { ibv_close_device(context); }
};

std::vector<std::string> device_names()
{
    int count = 0;
    std::unique_ptr<ibv_device*, device_list_deleter> list(ibv_get_device_list(&count));
    std::vector<std::string> names;
    for (int i = 0; list && i < count; i++)
        names.emplace_back(ibv_get_device_name(list.get()[i]));
    return names;
}

py::dict describe(const std::string& name)
{
    int count = 0;
    std::unique_ptr<ibv_device*, device_list_deleter> list(ibv_get_device_list(&count));
    for (int i = 0; list && i < count; i++) {
        if (name != ibv_get_device_name(list.get()[i]))
            continue;
        std::unique_ptr<ibv_context, context_closer> context(
            ibv_open_device(list.get()[i]));
        if (!context)
            throw std::runtime_error("ibv_open_device failed");
        ibv_device_attr_ex device{};
        ibv_port_attr port{};
        if (ibv_query_device_ex(context.get(), nullptr, &device) != 0 ||
            ibv_query_port(context.get(), 1, &port) != 0)
            throw std::runtime_error("query failed");
        char guid[20];
        snprintf(guid,
                 sizeof(guid),
                 "%016llx",
                 static_cast<unsigned long long>(be64toh(device.orig_attr.node_guid)));
        py::dict facts;
        facts["node_guid"] = std::string(guid);
        facts["link_layer"] =
            port.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
        facts["port_state"] = std::string(ibv_port_state_str(port.state));
        facts["num_comp_vectors"] = context->num_comp_vectors;
        facts["ip_checksum_offload"] =
            (device.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM) != 0;
        facts["flow_steering"] =
            (device.device_cap_flags_ex & IBV_DEVICE_MANAGED_FLOW_STEERING) != 0;
        return facts;
    }
    throw py::key_error(name);
}

} // namespace

PYBIND11_MODULE(spead_emu_verbs_probe, module)
{
    module.doc() = "Lists the RDMA devices libibverbs shows this process";
    module.def("device_names", &device_names, "Names of the RDMA devices");
    module.def("describe", &describe, "Port and capability facts of one device");
}
