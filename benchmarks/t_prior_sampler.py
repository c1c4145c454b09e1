"""The calibration slope of a posterior mean under a prior with fitted tails, by sampling.

    python benchmarks/t_prior_sampler.py [--methods plackett_luce bradley_terry]
        [--utilities normal t3] [--appearances 4 8 16 24] [--reps 20] [--hold]
        [--nus 2.5 3 4 6 10 30 1e6] [--twice]

An experiment, not the platform's method: what the posterior mean does to the calibration
slope (truth on estimate) when the prior's tails are fitted to the data and the items'
joint likelihood is used whole. Studies as in ``coverage.py --deciles`` (250 items, tuples
of 4, one judgment per tuple, the same seeds). Model: u_i ~ N(0, s2 / lambda_i), lambda_i ~
Gamma(nu / 2, nu / 2) (a scaled t with nu degrees of freedom), nu on a grid from 2.5 to
effectively normal with a flat prior, s2 with the prior 1 / s2; ``--hold`` keeps the
prior's variance at the platform's estimate and fits only nu. Sampling: Hamiltonian steps
for u (the method's log-likelihood divided by its ``dependence``, as the platform's fit
does; masses from the platform's posterior sd), and Gibbs steps for nu (the t density with
lambda integrated out), lambda and s2; 500 sweeps, the first 150 dropped. Printed per
cell: the mean slope of the platform's scores and of the sampled posterior means, the
coverage of the platform's 95% intervals and of the samples' 2.5-97.5% quantiles, overall
and in the lowest and highest tenth by truth, and seconds per study. ``--nus``: the grid of
nu (its smallest bounds the tails); ``--twice``: each study sampled again with another seed,
and the largest change of a study's slope printed, for the mean and the median of the draws
(with the median's mean slope). Figures, not assertions.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import gammaln  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from coverage import simulate, target  # noqa: E402

from bws.core.choice_models import model_for  # noqa: E402
from bws.core.intervals import calibrated, dependence  # noqa: E402

ITEMS = 250
NUS = np.array([2.5, 3.0, 4.0, 6.0, 10.0, 30.0, 1e6])
SWEEPS, BURN, LEAPS = 500, 150, 12
MEMORY_LIMIT = 4 * 1024**3


def t_log_density(u, nu, s2) -> float:
    """The log density of the u under a t prior with nu degrees of freedom and scale s2."""
    n = u.size
    head = gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * s2)
    return float(n * head - (nu + 1) / 2 * np.sum(np.log1p(u * u / (s2 * nu))))


def sample(judgments, method, start, sd, rng, hold=None, nus=NUS):
    """Draws of the utilities (SWEEPS - BURN, n) from the model of the module docstring."""
    model = model_for(method, judgments)
    temper = dependence(judgments, method)
    n = start.size
    u, lam = start.copy(), np.ones(n)
    s2 = hold if hold is not None else max(float(np.var(u)), 0.1)
    mass = sd**2
    step, accepted, draws = 0.5, 0, []

    def potential(x):
        value, grad = model.negative_log_likelihood(x)
        precision = lam / s2
        return value / temper + 0.5 * np.sum(precision * x * x), grad / temper + precision * x

    energy, grad = potential(u)
    for sweep in range(SWEEPS):
        p = rng.standard_normal(n) / np.sqrt(mass)
        x, g, e = u.copy(), grad.copy(), step * rng.uniform(0.8, 1.2)
        before = energy + 0.5 * np.sum(mass * p * p)
        p = p - 0.5 * e * g
        for leap in range(LEAPS):
            x = x + e * mass * p
            xe, g = potential(x)
            if leap < LEAPS - 1:
                p = p - e * g
        p = p - 0.5 * e * g
        if np.log(rng.uniform()) < before - (xe + 0.5 * np.sum(mass * p * p)):
            u, energy, grad, accepted = x, xe, g, accepted + 1
        scales = hold * np.minimum((nus - 2) / nus, 1.0) if hold is not None else [s2] * nus.size
        logp = np.array([t_log_density(u, nu, q) for nu, q in zip(nus, scales, strict=True)])
        k = rng.choice(nus.size, p=np.exp(logp - logp.max()) / np.exp(logp - logp.max()).sum())
        nu, s2 = nus[k], scales[k]
        lam = rng.gamma((nu + 1) / 2, 2.0 / (nu + u * u / s2))
        if hold is None:
            s2 = 1.0 / rng.gamma(n / 2, 2.0 / np.sum(lam * u * u))
        energy, grad = potential(u)
        if sweep == 50:  # one adjustment of the step, kept for the rest
            rate = accepted / 51
            step *= 1.3 if rate > 0.8 else 0.7 if rate < 0.5 else 1.0
        if sweep >= BURN:
            draws.append(u.copy())
    return np.array(draws)


def cell(method, utilities, appearances, reps, hold, twice=False, nus=NUS):
    keys = ("slope", "slope_mean", "cover", "cover_mean", "ends", "ends_mean", "seconds")
    out = {key: [] for key in keys + ("slope_median", "moved_mean", "moved_median")}
    for rep in range(reps):
        judgments, truth, tuples, own = simulate(
            ITEMS, appearances, 1, 0.0, 7919 * rep + 1, utilities
        )
        goal = target(method, truth, tuples, own)
        scores, intervals = calibrated(judgments, method)
        started = time.process_time()
        held = intervals.prior_variance if hold else None
        rng = np.random.default_rng(rep)
        draws = sample(judgments, method, scores.scores, intervals.std, rng, held, nus)
        out["seconds"].append(time.process_time() - started)
        mean = draws.mean(axis=0)
        low, high = np.quantile(draws, [0.025, 0.975], axis=0)
        ends = np.isin(np.argsort(np.argsort(truth)) * 10 // ITEMS, (0, 9))
        shipped = (intervals.low <= goal) & (goal <= intervals.high)
        sampled = (low <= goal) & (goal <= high)
        out["slope"].append(np.polyfit(scores.scores, goal, 1)[0])
        out["slope_mean"].append(np.polyfit(mean, goal, 1)[0])
        out["cover"].append(shipped.mean())
        out["cover_mean"].append(sampled.mean())
        out["ends"].append(shipped[ends].mean())
        out["ends_mean"].append(sampled[ends].mean())
        median = np.median(draws, axis=0)
        out["slope_median"].append(np.polyfit(median, goal, 1)[0])
        if twice:  # the same study, another seed
            again = sample(judgments, method, scores.scores, intervals.std,
                           np.random.default_rng(rep + 1000), held, nus)  # fmt: skip
            slope_again = np.polyfit(again.mean(axis=0), goal, 1)[0]
            median_again = np.polyfit(np.median(again, axis=0), goal, 1)[0]
            out["moved_mean"].append(abs(slope_again - out["slope_mean"][-1]))
            out["moved_median"].append(abs(median_again - out["slope_median"][-1]))
    means = {key: float(np.mean(values)) for key, values in out.items() if values}
    for key in ("moved_mean", "moved_median"):
        means[key] = float(np.max(out[key])) if out[key] else float("nan")
    return means


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=["plackett_luce", "bradley_terry"])
    parser.add_argument("--utilities", nargs="+", default=["normal", "t3"])
    parser.add_argument("--appearances", nargs="+", type=int, default=[4, 8, 16, 24])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--hold", action="store_true", help="the prior's variance held")
    parser.add_argument("--nus", type=float, nargs="+", default=list(NUS))
    parser.add_argument("--twice", action="store_true", help="each study sampled twice")
    args = parser.parse_args(argv)

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    print(
        "| method | utilities | r | slope: platform / sampled mean | coverage: platform / "
        "samples | extreme tenths: platform / samples | s per study |"
    )
    print("|---|---|---:|---|---|---|---:|")
    for method in args.methods:
        for utilities in args.utilities:
            for r in args.appearances:
                f = cell(method, utilities, r, args.reps, args.hold, args.twice, np.array(args.nus))
                moved = (
                    f" (median {f['slope_median']:.3f}; largest change with the seed: mean "
                    f"{f['moved_mean']:.3f}, median {f['moved_median']:.3f})"
                    if args.twice
                    else ""
                )
                print(
                    f"| {method} | {utilities} | {r} | {f['slope']:.3f} / {f['slope_mean']:.3f}"
                    f"{moved} | {f['cover']:.3f} / {f['cover_mean']:.3f} | {f['ends']:.3f} / "
                    f"{f['ends_mean']:.3f} | {f['seconds']:.1f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
