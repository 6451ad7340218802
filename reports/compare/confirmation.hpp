#pragma once
// Repeated runs of B (compare --candidate-repeat): a difference is called only when every run of B
// shows it. On a machine whose throughput switches state for seconds at a time one probe of one
// run can land entirely in a slow state, with tight samples: on the 2-vCPU VM both fp32 GLM fits of
// a same-machine run took 1.55x their baseline's time, three samples each, while the drift
// references before and after the probe did not move. The movement between runs of A cannot
// foresee such a run; a second run of B does not repeat it. A real change (a slower kernel, a lost
// compute unit) is in every run. Pure.
#include <vector>

#include "compare/comparison.hpp"

namespace clprobe {

// `first` is A against B's first run, `repeats` A against each further run of B, all compared with
// the same options. Every faster or slower verdict of `first` (metrics and the machine's shifts)
// that a repeat does not confirm becomes within_noise, with the verdict it had kept in
// `unconfirmed`; each repeat's ratio is kept beside it. A repeat confirms a metric when it gives
// the same verdict, and a shift of the machine also when its ratio moves the same way beyond the
// band the first run's shift cleared (a shift's band is the run's own spread of checks); one that
// does not measure the figure confirms nothing. Facts, figures only in one
// report and disturbed figures are left as they are. Sets candidate_runs.
void confirm_with_repeats(Comparison& first, const std::vector<Comparison>& repeats);

// The metrics whose difference in B's first run a repeat did not confirm.
std::vector<const MetricComparison*> unconfirmed_metrics(const Comparison& c);

}  // namespace clprobe
