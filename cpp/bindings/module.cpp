#include "pybind.hpp"

PYBIND11_MODULE(_core, m) {
    m.doc() = "acesim compiled core (internal; use the acesim package)";
    acesim::bindings::register_distributions(m);
    acesim::bindings::register_simulator(m);
    acesim::bindings::register_analytic(m);
}
