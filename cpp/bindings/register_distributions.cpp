#include <array>
#include <limits>
#include <stdexcept>
#include <string>

#include "acesim/cuda_samplers.hpp"
#include "acesim/distribution_table.hpp"
#include "acesim/philox.hpp"
#include "acesim/sampler.hpp"
#include "interruptible.hpp"
#include "pybind.hpp"

namespace acesim::bindings {

void register_distributions(py::module_& m) {
    py::enum_<DistKind>(m, "DistKind")
        .value("Constant", DistKind::Constant)
        .value("Exponential", DistKind::Exponential)
        .value("Weibull", DistKind::Weibull)
        .value("LogNormal", DistKind::LogNormal)
        .value("Gamma", DistKind::Gamma)
        .value("Mixture", DistKind::Mixture)
        .value("Empirical", DistKind::Empirical)
        .value("BlockBootstrap", DistKind::BlockBootstrap)
        .value("Replay", DistKind::Replay)
        .value("ScaleAware", DistKind::ScaleAware);

    py::class_<Distribution>(m, "Distribution")
        .def_static("constant", &Distribution::constant, py::arg("value"))
        .def_static("exponential", &Distribution::exponential, py::arg("mean"))
        .def_static("weibull", &Distribution::weibull, py::arg("shape"), py::arg("scale"))
        .def_static("lognormal", &Distribution::lognormal, py::arg("mu"), py::arg("sigma"))
        .def_static("gamma", &Distribution::gamma, py::arg("shape"), py::arg("scale"))
        .def_static("mixture", &Distribution::mixture, py::arg("weights"), py::arg("components"))
        .def_static("empirical", &Distribution::empirical, py::arg("samples"))
        .def_static("block_bootstrap", &Distribution::block_bootstrap, py::arg("sequence"), py::arg("block"))
        .def_static("replay", &Distribution::replay, py::arg("times"))
        .def_static("scale_aware", &Distribution::scale_aware, py::arg("base"), py::arg("ref_gpus"),
                    py::arg("exponent"))
        .def("mean", &Distribution::mean, py::arg("gpus"))
        .def("forward_recurrence_mean", &Distribution::forward_recurrence_mean, py::arg("gpus"))
        .def_property_readonly("has_replay", &Distribution::has_replay)
        .def_property_readonly("kind", &Distribution::kind)
        .def_property_readonly("value_key", [](const Distribution& d) { return py::bytes(d.value_key()); })
        .def_property_readonly("scale_dependent", &Distribution::scale_dependent)
        .def_property_readonly("node_count", [](const Distribution& d) { return d.nodes().size(); });

    m.def(
        "sample",
        [](const Distribution& dist, std::uint64_t count, std::uint64_t seed, std::uint32_t stream,
           std::uint32_t replica, std::uint32_t first, double gpus, unsigned threads,
           const std::string& device) {
            if (static_cast<std::uint64_t>(first) + count > (1ull << 32))
                throw std::invalid_argument("n: at most 2^32 draws per stream");
            if (device != "cpu" && device != "cuda")
                throw std::invalid_argument("device must be 'cpu' or 'cuda', got '" + device + "'");
            const SampleRequest request{seed, replica, stream, first, gpus};
            return fill_draws(count, [&](double* data) {
                if (device == "cpu") {
                    // Safe without the GIL: the samplers touch only `dist` (kept
                    // alive by the caller's reference) and the output buffer.
                    CancelFlag cancel{false};
                    run_interruptible(cancel, count, [&] {
                        sample_cpu(dist, request, data, count, threads, &cancel);
                        return 0;
                    });
                } else {
                    std::string error;
                    {
                        py::gil_scoped_release release;  // same: no Python objects touched
                        error = sample_cuda(dist, request, data, count);
                    }
                    if (!error.empty()) throw std::runtime_error(error);
                }
            });
        },
        py::arg("dist"), py::arg("count"), py::arg("seed"), py::arg("stream"), py::arg("replica"),
        py::arg("first"), py::arg("gpus"), py::arg("threads"), py::arg("device"));

    m.def(
        "sample_forward_recurrence",
        [](const Distribution& dist, std::uint64_t count, std::uint64_t seed, std::uint32_t stream,
           std::uint32_t replica, std::uint32_t first, double gpus, unsigned threads,
           const std::string& device) {
            if (static_cast<std::uint64_t>(first) + count > (1ull << 32))
                throw std::invalid_argument("n: at most 2^32 draws per stream");
            if (device != "cpu")
                throw std::invalid_argument("device: forward-recurrence draws run on 'cpu' only, got '" +
                                            device + "'");
            return fill_draws(count, [&](double* data) {
                CancelFlag cancel{false};
                run_interruptible(cancel, count, [&] {  // touches only `dist` and the output buffer
                    const DistributionView view = dist.view();
                    const Stream s{key_from_seed(seed), stream, replica};
                    constexpr std::uint64_t kMinDrawsPerThread = 1024;
                    parallel_for(
                        count, threads, kMinDrawsPerThread,
                        [&](std::uint64_t begin, std::uint64_t end) {
                            for (std::uint64_t i = begin; i < end; ++i) {
                                if ((i & 0xFFFFu) == 0 && cancel_requested(&cancel)) return;
                                data[i] = draw_forward_recurrence(
                                    view, s, static_cast<std::uint32_t>(first + i), gpus);
                            }
                        },
                        &cancel);
                    throw_if_cancelled(&cancel);
                    return 0;
                });
            });
        },
        py::arg("dist"), py::arg("count"), py::arg("seed"), py::arg("stream"), py::arg("replica"),
        py::arg("first"), py::arg("gpus"), py::arg("threads"), py::arg("device"),
        "Draws first .. first + count - 1 of draw_forward_recurrence (the stationary first gap).");

    m.def(
        "philox4x32_10",
        [](std::array<std::uint32_t, 4> counter, std::array<std::uint32_t, 2> key) {
            Block c{{counter[0], counter[1], counter[2], counter[3]}};
            Key k{{key[0], key[1]}};
            const Block out = philox4x32_10(c, k);
            return std::array<std::uint32_t, 4>{out.v[0], out.v[1], out.v[2], out.v[3]};
        },
        py::arg("counter"), py::arg("key"), "One Philox4x32-10 block (for known-answer tests).");

    m.def("uniform_open", [](std::uint64_t bits) { return uniform_open(bits); }, py::arg("bits"));
    m.def(
        "stream_id",
        [](std::uint32_t kind, std::uint32_t entity, std::uint32_t purpose) {
            if (kind > 3 || entity > kMaxEntityId || purpose > 15)
                throw std::invalid_argument("stream: kind <= 3, entity < 2^24, purpose < 16");
            return stream_id(static_cast<EntityKind>(kind), entity, static_cast<Purpose>(purpose));
        },
        py::arg("kind"), py::arg("entity"), py::arg("purpose"));
    m.def("cuda_available", &cuda_available, "Whether a CUDA device is usable by this build.");
    m.def("cuda_built", &cuda_built, "Whether this build includes the CUDA samplers.");
}

}  // namespace acesim::bindings
