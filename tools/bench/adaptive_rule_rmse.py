#!/usr/bin/python3
"""Rays and RMSE of our renders against our reference of a convergence run (results/adaptive_unseen_sample.md).

    /usr/bin/python3 tools/bench/adaptive_rule_rmse.py WORK SCENE RENDER.exr ...

WORK is a `tools/bench/convergence.py --adaptive` work folder; SCENE a scene name in it (cornell,
dragon_sun_sky, helmet, env_hdr). Each RENDER.exr was written by `farm single ... --stats RENDER.json`
(its statistics beside it, same name). Prints per render the total rays traced, the render seconds
and the RMSE against the mean of WORK's two reference halves of ours, with the reference's own noise
subtracted: the benchmark's image_error (tools/bench/convergence_metrics.py).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/
from bench.convergence_metrics import image_error, reference_from_halves  # noqa: E402
from compare import compare_images  # noqa: E402


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    work, scene, renders = sys.argv[1], sys.argv[2], sys.argv[3:]
    a, b = (compare_images.read_rgb(os.path.join(work, f"{scene}_ours_ref512_seed{s}.exr")) for s in (1, 2))
    ref = reference_from_halves(a, b)
    for exr in renders:
        stats = json.load(open(os.path.splitext(exr)[0] + ".json"))
        e = image_error({"exr": exr}, ref)
        print(f"{os.path.basename(exr):40s} rays {stats['rays']['total'] / 1e6:8.1f}M  "
              f"render {stats['seconds']['render']:7.2f} s  RMSE {e['rmse']:.5f}")


if __name__ == "__main__":
    main()
