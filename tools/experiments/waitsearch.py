"""The paper's waiting-time procedure (section 4.2), automated: on a scene that renders long
enough, raise the waiting time step by step from short to long and keep the one with the shortest
run. The paper used 1 s steps on renders of minutes; the step here is scaled to the render
(default 0.25 s on windows of a few seconds). A step's run time is the median of `reps` runs;
the search stops after `patience` steps without a new best (noise would otherwise stop it at the
first unlucky step), or at `max_wait`.
"""
import statistics


def search(sweep, scene, w, h, spp, policy, block, cluster, network, start=0.25, step=0.25, max_wait=4.0,
           reps=2, patience=2, log=print):
    tried = []  # (wait, median window)
    best = None
    wait = start
    misses = 0
    while wait <= max_wait + 1e-9:
        windows = [float(sweep.point("waitsearch", scene, w, h, spp, policy, block, round(wait, 6), cluster, network,
                                     rep)["window_s"]) for rep in range(reps)]
        med = statistics.median(windows)
        tried.append((wait, med))
        log(f"  wait search: wait {wait:g} s -> median window {med:.3f} s")
        if best is None or med < best[1]:
            best = (wait, med)
            misses = 0
        else:
            misses += 1
            if misses >= patience:
                break
        wait += step
    return best, tried
