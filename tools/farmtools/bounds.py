"""Lower bounds on a farm run's length, the same definitions as farm/control/makespan_bound.h.

plain:  W / sum of speeds, and never below the costliest block on the fastest thread.
fluid:  the T with sum_i s_i * max(0, min(T - d_i, e_i) - a_i) = W, each worker counted from
        when it could first render (a_i) until it fails or leaves (e_i), its last result taking
        d_i to reach the master.
honest: max(fluid, the costliest block ended by the worker that could end it first).
Every term is something no schedule can avoid, so honest <= any real run's length.
"""
import math


class Worker:
    """One worker for the bound: start a_i, speed (all threads), thread_speed, delay d_i, end e_i."""

    def __init__(self, start, speed, thread_speed=None, delay=0.0, end=math.inf):
        self.start, self.speed, self.delay, self.end = start, speed, delay, end
        self.thread_speed = speed if thread_speed is None else thread_speed


def _capacity(workers, t):
    return sum(w.speed * max(0.0, min(t - w.delay, w.end) - w.start) for w in workers)


def fluid(workers, work):
    """The T of the fluid equation (math.inf if the workers stop before finishing W)."""
    live = [w for w in workers if w.speed > 0]
    if work <= 0:
        return 0.0
    if not live:
        return math.inf
    if not any(math.isinf(w.end) for w in live):
        if sum(w.speed * max(0.0, w.end - w.start) for w in live) < work:
            return math.inf
    lo, hi = 0.0, max([1.0] + [w.start + w.delay for w in live]) + work / sum(w.speed for w in live)
    while _capacity(live, hi) < work:
        hi *= 2
    for _ in range(200):
        if hi - lo <= 1e-9 * hi:
            break
        mid = (lo + hi) / 2
        if _capacity(live, mid) < work:
            lo = mid
        else:
            hi = mid
    return hi


def indivisible(workers, costliest):
    """The earliest end of the costliest indivisible block (0 when there is none)."""
    if costliest <= 0:
        return 0.0
    ends = [w.start + costliest / w.thread_speed + w.delay for w in workers
            if w.thread_speed > 0 and w.start + costliest / w.thread_speed <= w.end]
    return min(ends) if ends else math.inf


def plain(workers, work, costliest=0.0):
    speeds = [w for w in workers if w.speed > 0]
    if not speeds:
        return math.inf if work > 0 else 0.0
    return max(work / sum(w.speed for w in speeds), costliest / max(w.thread_speed for w in speeds))


def honest(workers, work, costliest=0.0):
    return max(fluid(workers, work), indivisible(workers, costliest))
