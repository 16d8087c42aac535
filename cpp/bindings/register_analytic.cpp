#include "acesim/analytic.hpp"
#include "pybind.hpp"

namespace acesim::bindings {

void register_analytic(py::module_& m) {
    // Vectorized over numpy arrays with broadcasting; one implementation
    // shared with the simulator's per-job expectations.
    m.def("young_interval", py::vectorize(&young_interval), py::arg("checkpoint_cost"), py::arg("mtbf"));
    m.def("daly_interval", py::vectorize(&daly_interval), py::arg("checkpoint_cost"), py::arg("mtbf"));
    m.def("expected_wall_exponential", py::vectorize(&expected_wall_exponential), py::arg("mtbf"),
          py::arg("work"), py::arg("checkpoint_interval"), py::arg("checkpoint_cost"),
          py::arg("restart_cost"));
    m.def("expected_ettr_exponential", py::vectorize(&expected_ettr_exponential), py::arg("mtbf"),
          py::arg("work"), py::arg("checkpoint_interval"), py::arg("checkpoint_cost"),
          py::arg("restart_cost"));
    m.def("meta_expected_ettr", py::vectorize(&meta_expected_ettr), py::arg("nodes"),
          py::arg("failures_per_node_second"), py::arg("restart_overhead"), py::arg("checkpoint_interval"),
          py::arg("checkpoint_write"));
}

}  // namespace acesim::bindings
