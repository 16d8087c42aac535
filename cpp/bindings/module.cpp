#include "acesim/errors.hpp"
#include "nesting.hpp"
#include "pybind.hpp"

namespace {

/// Raises the class `name` of acesim.errors with `message` (and `attributes`).
void raise_acesim_error(const char* name, const char* message, const py::dict& attributes = py::dict()) {
    const py::object cls = py::module_::import("acesim.errors").attr(name);
    const py::object error = cls(message);
    for (const auto& [key, value] : attributes) error.attr(key) = value;
    PyErr_SetObject(cls.ptr(), error.ptr());
}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "acesim compiled core (internal; use the acesim package)";
    // The core's errors a caller tells apart, as the classes of acesim.errors.
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const acesim::NoProgress& e) {
            py::dict attributes;
            attributes["job"] = e.job < 0 ? py::object(py::none()) : py::object(py::int_(e.job));
            attributes["count"] = py::int_(e.count);
            attributes["replica"] = py::int_(e.replica);
            raise_acesim_error("NoProgressError", e.what(), attributes);
        } catch (const acesim::bindings::ReentrantCall& e) {
            raise_acesim_error("ReentrantCallError", e.what());
        }
    });
    m.attr("MAX_NESTING") = acesim::bindings::kMaxNesting;
    // One concept each (pybind.hpp): the records' dtypes come before the
    // calls that return them, the specs before the calls that take them.
    acesim::bindings::register_distributions(m);
    acesim::bindings::register_records(m);
    acesim::bindings::register_policy(m);
    acesim::bindings::register_specs(m);
    acesim::bindings::register_input_columns(m);
    acesim::bindings::register_simulate(m);
    acesim::bindings::register_fleet_model(m);
    acesim::bindings::register_analytic(m);
}
