// The bare event loop the fleet simulator is measured against: a binary
// heap of (time, id) with as many live entries as nodes; each event pops the
// earliest entry and pushes it back one exponential draw later. No model, no
// accounting: the rate a discrete-event simulator cannot beat with a heap.
//
//   bare_heap ENTRIES EVENTS SEED  ->  prints "events seconds checksum"
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: bare_heap ENTRIES EVENTS SEED\n");
        return 2;
    }
    const std::uint64_t entries = std::strtoull(argv[1], nullptr, 10);
    const std::uint64_t events = std::strtoull(argv[2], nullptr, 10);
    std::mt19937_64 rng(std::strtoull(argv[3], nullptr, 10));
    std::exponential_distribution<double> gap(1.0);
    using Entry = std::pair<double, std::uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    for (std::uint64_t i = 0; i < entries; ++i) heap.emplace(gap(rng), static_cast<std::uint32_t>(i));
    const auto start = std::chrono::steady_clock::now();
    double checksum = 0.0;
    for (std::uint64_t e = 0; e < events; ++e) {
        const Entry top = heap.top();
        heap.pop();
        checksum += top.first;
        heap.emplace(top.first + gap(rng), top.second);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%llu %.9f %.6e\n", static_cast<unsigned long long>(events), seconds, checksum);
    return 0;
}
