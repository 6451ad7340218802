#pragma once
// What the compare tests share: a tight sample set around a value, and one metric of a comparison
// found by id.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "compare/comparison.hpp"

namespace clprobe::test {

// Five samples within 1% of the centre.
inline std::vector<double> tight(double centre) {
    return {centre * 0.99, centre * 0.995, centre, centre * 1.005, centre * 1.01};
}

// The first metric with this id; fails the test when there is none.
inline const MetricComparison& metric(const Comparison& c, const std::string& id) {
    for (const auto& m : c.metrics)
        if (m.metric == id) return m;
    FAIL("no metric " << id);
    throw;
}

}  // namespace clprobe::test
