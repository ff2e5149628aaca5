"""A run's render window: the one definition every tool uses, for real and simulated runs alike.

    window = (last `received` of an accepted lease) - (first `assigned` of any lease)

read from a `--stats` JSON (`farm master --stats`, `farm render --stats`, `farm sim --stats`: the
same format, farm/control/run_stats.cpp).

Why this one. Before this module the tools had three:
  1. first assignment of any lease -> last accepted result: tools/sim/validate.py,
     tools/sim/compare_runs.py, tools/experiments/sweep.py's summarise();
  2. first assignment of an *accepted* lease -> last accepted result: sweep.py's null round trip
     and block-cost points, tools/bench/farm_overhead.py, tools/bench/pixel_transfer.py;
  3. for `farm single` rows, its stats' seconds.render, stored in the same `window_s` column
     (sweep.py's baselines): no leases, so no window; it stays, as the baseline's render time.
Definition 1 is the simulator's (farm/sim/simulator.h, SimResult::window(): the last accepted
result - first_assignment, whichever lease that was), which `farm sim` prints as "Render window"
and `farm plan` ranks configurations by; it is also the measure results/REPORT.md and sweep.py state ("from the master's
first assignment to its last accepted block", the paper's, section 3.2). Definition 2
starts the clock late whenever the first lease was lost (its worker died, was recalled, or came
back late): the master was already scheduling, so that time belongs to the run, and a real run
measured that way is compared with a simulated one measured the other way. So: definition 1, here,
for every farm run, real or simulated.
"""


def accepted_blocks(stats):
    """The leases whose result the master accepted (each block of the image once)."""
    return [b for b in stats["blocks"] if b["outcome"] == "accepted"]


def window_bounds(stats):
    """(first assignment of any lease, last receipt of an accepted lease), master clock seconds.
    ValueError if the run has no accepted block (no window)."""
    accepted = accepted_blocks(stats)
    if not accepted:
        raise ValueError("the run has no accepted block, so no render window")
    return min(b["assigned"] for b in stats["blocks"]), max(b["received"] for b in accepted)


def run_window(stats):
    """The run's render window in seconds (the module docstring's definition)."""
    first, last = window_bounds(stats)
    return last - first
