// What the binding files share: the keyword constructor and law fields of a
// bound spec, the core's input read from Python's named columns and specs,
// and a run's output tables. Each concept registers itself (module.cpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "acesim/simulator.hpp"
#include "pybind.hpp"

namespace acesim::bindings {

template <class T>
using carray = py::array_t<T, py::array::c_style | py::array::forcecast>;

/// A law index as Python passes it (-1 or any negative: none).
inline std::uint32_t index_or_none(std::int64_t i) {
    return i < 0 ? kNoDistribution : static_cast<std::uint32_t>(i);
}

/// A law field of a bound spec, checked: a law index or -1 (none).
std::uint32_t law_field(std::int64_t index, const std::string& field);
/// A law field as Python reads it: its index, or -1 for none.
inline std::int64_t law_value(std::uint32_t index) {
    return index == kNoDistribution ? -1 : static_cast<std::int64_t>(index);
}

/// Binds a law field (an index, -1: none) of spec class C, checked on the way in.
template <class C>
void def_law(py::class_<C>& cls, const char* name, std::uint32_t C::* member) {
    const std::string field = std::string(py::str(cls.attr("__name__"))) + "." + name;
    cls.def_property(
        name, [member](const C& spec) { return law_value(spec.*member); },
        [member, field](C& spec, std::int64_t index) { spec.*member = law_field(index, field); });
}

/// Binds a field holding one law per node or job (indices, -1: none).
template <class C>
void def_laws(py::class_<C>& cls, const char* name, std::vector<std::uint32_t> C::* member) {
    const std::string field = std::string(py::str(cls.attr("__name__"))) + "." + name;
    cls.def_property(
        name,
        [member](const C& spec) {
            std::vector<std::int64_t> out;
            for (std::uint32_t law : spec.*member) out.push_back(law_value(law));
            return out;
        },
        [member, field](C& spec, const std::vector<std::int64_t>& laws) {
            std::vector<std::uint32_t> in;
            for (std::size_t i = 0; i < laws.size(); ++i)
                in.push_back(law_field(laws[i], field + "[" + std::to_string(i) + "]"));
            spec.*member = std::move(in);
        });
}

/// Binds an enum field of spec class C, checked against its last value
/// (a bound enum is built from any integer).
template <class C, class E>
void def_enum(py::class_<C>& cls, const char* name, E C::* member, E last) {
    const std::string field = std::string(py::str(cls.attr("__name__"))) + "." + name;
    cls.def_property(
        name, [member](const C& spec) { return spec.*member; },
        [member, last, field](C& spec, E value) {
            if (static_cast<std::uint32_t>(value) > static_cast<std::uint32_t>(last))
                throw std::invalid_argument(field + ": unknown value " +
                                            std::to_string(static_cast<std::uint32_t>(value)));
            spec.*member = value;
        });
}

/// Field `field` of a spec given to its keyword constructor: `value`
/// converted to T, or left at its default when None; a value of another
/// type is a TypeError naming the field.
template <class T>
void take(const py::object& value, T& out, const char* field) {
    if (value.is_none()) return;
    try {
        out = value.cast<T>();
    } catch (const py::cast_error&) {
        throw py::type_error(std::string(field) + ": cannot take a value of type " +
                             std::string(py::str(py::type::of(value).attr("__name__"))));
    }
}

/// A law field given to a keyword constructor (an index, -1: none).
inline void take_law(const py::object& value, std::uint32_t& out, const char* field) {
    std::int64_t index = law_value(out);
    take(value, index, field);
    out = law_field(index, field);
}

/// A field of one law per node given to a keyword constructor.
inline void take_laws(const py::object& value, std::vector<std::uint32_t>& out, const char* field) {
    if (value.is_none()) return;
    std::vector<std::int64_t> laws;
    take(value, laws, field);
    out.clear();
    for (std::size_t i = 0; i < laws.size(); ++i)
        out.push_back(law_field(laws[i], std::string(field) + "[" + std::to_string(i) + "]"));
}

/// An enum field given to a keyword constructor, checked against its last value.
template <class E>
void take_enum(const py::object& value, E& out, E last, const char* field) {
    E chosen = out;
    take(value, chosen, field);
    if (static_cast<std::uint32_t>(chosen) > static_cast<std::uint32_t>(last))
        throw std::invalid_argument(std::string(field) + ": unknown value " +
                                    std::to_string(static_cast<std::uint32_t>(chosen)));
    out = chosen;
}

/// Refuses the keywords a spec's keyword constructor does not know.
inline void refuse_unknown(const py::kwargs& unknown, const char* spec) {
    for (const auto& item : unknown)
        throw py::type_error(std::string(spec) + "." + std::string(py::str(item.first)) + ": no such field");
}

/// Sets the fields of `self` (a bound spec) named by `kwargs`; an unknown
/// name or a value of the wrong type is a TypeError naming the field.
void set_fields(py::object& self, const py::kwargs& kwargs);

/// A keyword constructor for spec class T: every field by name, the others
/// at their defaults (T{}).
template <class T, class... Options>
void def_keyword_init(py::class_<T, Options...>& cls) {
    cls.def(py::init([](const py::kwargs& kwargs) {
        py::object self = py::cast(T{});
        set_fields(self, kwargs);
        return self.cast<T>();
    }));
}

/// The arrays a run reads in place, held by the call that runs it (the
/// converted copy, where a column arrived in another dtype or layout).
using Borrowed = std::vector<py::object>;

/// The jobs, their laws and the causes, as Python passes them: `jobs` is
/// packed specs (bytes) or a JobArray's columns (a JobColumns), read in
/// place while `borrowed` holds them (register_input_columns.cpp).
SimulationInput job_input(const std::vector<Distribution>& distributions, const py::object& jobs,
                          const py::object& job_failures, const std::vector<CauseSpec>& causes,
                          Borrowed& borrowed);

/// Per-job checkpoint levels and elastic options (a JobOptionColumns), or None.
void set_job_options(SimulationInput& in, const py::object& options);

/// One time limit per job (inf: none), or None.
void set_time_limits(SimulationInput& in, const py::object& time_limit);

/// The fleet `in` runs on (a FleetSpec), or None (register_specs.cpp).
void set_fleet(SimulationInput& in, const py::object& fleet);

/// How many replicas of what, and with which limits: the options every run has.
inline void set_run_options(SimulationInput& in, std::uint32_t gpus_per_node, std::uint32_t replicas,
                            std::uint32_t first_replica, std::uint64_t seed, double horizon, unsigned threads,
                            std::uint64_t max_events, std::uint64_t max_stalled_failures) {
    in.gpus_per_node = gpus_per_node;
    in.replicas = replicas;
    in.first_replica = first_replica;
    in.seed = seed;
    in.horizon = horizon;
    in.threads = threads;
    in.max_events = max_events;
    in.max_stalled_failures = max_stalled_failures;
}

/// The policy `in` runs, its Python callbacks marking the calls they make
/// as nested at `depth` (nesting.hpp; register_policy.cpp).
void set_policy(SimulationInput& in, const py::object& policy, int depth);

/// A run's tables as numpy arrays, by name (register_records.cpp).
py::dict output_tables(SimulationOutput&& out);

}  // namespace acesim::bindings
