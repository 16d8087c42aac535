// The one header that includes pybind11; the core never does.
#pragma once

#include <pybind11/gil_safe_call_once.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "acesim/cancel.hpp"

namespace py = pybind11;

namespace acesim::bindings {

/// The empty table of row type T: one read-only array, made once and shared
/// by every result (a small run leaves its event log, placements and node
/// events empty; a fresh array and its capsule cost a tenth of its call).
template <class T>
py::array_t<T> empty_table() {
    PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::array_t<T>> storage;
    return storage
        .call_once_and_store_result([] {
            py::array_t<T> empty(0);
            empty.attr("flags").attr("writeable") = false;
            return empty;
        })
        .get_stored();
}

/// Hands a vector of POD rows to numpy without a copy: the vector moves into
/// a capsule that owns the buffer for as long as the array lives.
template <class T, class Allocator>
py::array_t<T> to_numpy(std::vector<T, Allocator>&& rows) {
    if (rows.empty()) return empty_table<T>();
    using Rows = std::vector<T, Allocator>;
    auto* owned = new Rows(std::move(rows));
    py::capsule owner(owned, [](void* p) { delete static_cast<Rows*>(p); });
    return py::array_t<T>({static_cast<py::ssize_t>(owned->size())}, owned->data(), owner);
}

/// An uninitialised buffer of `count` draws, handed to numpy when filled
/// (fill), or to a background thread when the fill throws: a cancelled call
/// of 10^8 draws returns without first unmapping the gigabyte it touched.
template <class Fill>
py::array_t<double> fill_draws(std::uint64_t count, Fill&& fill) {
    std::unique_ptr<double[]> buffer(new double[count == 0 ? 1 : count]);
    try {
        fill(buffer.get());
    } catch (...) {
        release_in_background(std::move(buffer));
        throw;
    }
    double* data = buffer.release();
    py::capsule owner(data, [](void* p) { delete[] static_cast<double*>(p); });
    return py::array_t<double>({static_cast<py::ssize_t>(count)}, data, owner);
}

// One register_*.cpp per concept; module.cpp calls them in this order.
void register_distributions(py::module_& m);
void register_records(py::module_& m);
void register_policy(py::module_& m);
void register_specs(py::module_& m);
void register_input_columns(py::module_& m);
void register_simulate(py::module_& m);
void register_fleet_model(py::module_& m);
void register_analytic(py::module_& m);

}  // namespace acesim::bindings
