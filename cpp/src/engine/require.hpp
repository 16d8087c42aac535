// The core's input checks: a std::invalid_argument (a ValueError in Python)
// with a message naming the parameter. One implementation for every source.
#pragma once

#include <stdexcept>
#include <string>

namespace acesim::detail {

/// A check whose message is a literal: nothing is built when it holds.
inline void require(bool ok, const char* message) {
    if (!ok) throw std::invalid_argument(message);
}

/// A check whose message is already built.
inline void require(bool ok, const std::string& message) {
    if (!ok) throw std::invalid_argument(message);
}

/// A check whose message is built only when it fails (`message()`): for
/// messages that format numbers, and for checks run per job or per value.
template <class Message>
void require_that(bool ok, Message&& message) {
    if (!ok) throw std::invalid_argument(message());
}

}  // namespace acesim::detail
