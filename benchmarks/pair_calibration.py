"""How often chosen pairs said right are right, by how their true differences spread.

    python benchmarks/pair_calibration.py [--studies 400] [--items 400] [--pairs 20]

Simulated posteriors, not simulated judgments (as in bws/tests/test_targets.py): normal
utilities of sd 1, each item's estimate its utility plus normal noise of an sd drawn
uniformly from a range, shrunk by the conjugate posterior of a N(0, 1) prior. Each study
asks about 20 pairs (``--pairs``) whose true differences are either normal (sd ``tau``) or exactly
``tau`` in either direction ("two-point", as in benchmarks/adaptive_targets.py, where
tau = 0.3); "random" pairs are two items drawn at random. Per regime and rule, the share of
pairs in the right order, the mean probability said, and of the pairs said right with
probability at least 0.9, the share right, the mean said and how many.

Rules: ``shipped`` is ``targets.pair_posterior`` (the pairs' prior variance at the marginal
likelihood's maximum); ``oracle`` the same with the true tau plugged in; ``loo`` the maximum
without the pair's own term; ``uniform`` and ``log`` the prior's variance integrated out,
tau uniform or log-uniform between the shipped bounds. Below ``PAIR_PRIOR_MIN`` pairs every
rule is the fit's own (two items drawn at random), and only ``shipped`` is run. Figures, not
assertions.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import ndtr  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bws.core.targets import (  # noqa: E402
    PAIR_MIN_PRECISION,
    PAIR_PRIOR_FLOOR,
    PAIR_PRIOR_MIN,
    pair_posterior,
)

PAIRS = 20
GRID = 200
REGIMES = [
    (shape, tau, noise)
    for shape in ("normal", "two-point")
    for tau in (0.2, 0.3, 0.5, 1.0)
    for noise in ((0.3, 0.6), (0.6, 1.2))
] + [("random", None, (0.3, 0.6)), ("random", None, (0.6, 1.2))]
RULES = ("shipped", "oracle", "loo", "uniform", "log")


def likelihood(u, s, pairs):
    """Each pair's likelihood alone, as ``pair_posterior`` takes it: its mean and precision,
    and the random pair's variance."""
    a, b = pairs.T
    d, v = u[a] - u[b], s[a] ** 2 + s[b] ** 2
    random_pair = 2.0 * (float(np.var(u)) + float(np.mean(s**2)))
    precision = np.maximum(1.0 / v - 1.0 / random_pair, PAIR_MIN_PRECISION / random_pair)
    return d / v / precision, precision, random_pair


def said(rule: str, u, s, pairs, tau) -> np.ndarray:
    """Per pair, the probability the rule says that the fit's order is right."""
    if rule == "shipped":
        mean, sd = pair_posterior(u, s, pairs)
        return ndtr(np.abs(mean) / sd)
    seen, precision, random_pair = likelihood(u, s, pairs)
    if rule == "oracle":
        prior = np.full(seen.size, tau**2)
    else:
        low = np.sqrt(PAIR_PRIOR_FLOOR * random_pair)
        if rule == "uniform":
            grid = np.linspace(low, np.sqrt(random_pair), GRID) ** 2
        else:
            grid = np.geomspace(low, np.sqrt(random_pair), GRID) ** 2
        total = grid[:, None] + 1.0 / precision[None, :]
        deviance = np.log(total) + seen**2 / total  # (grid, pairs)
        if rule == "loo":
            prior = grid[np.argmin(deviance.sum(axis=1)[:, None] - deviance, axis=0)]
        else:
            log_weight = -0.5 * deviance.sum(axis=1)
            weight = np.exp(log_weight - log_weight.max())
            weight /= weight.sum()
            after = precision[None, :] + 1.0 / grid[:, None]
            ahead = weight @ ndtr(precision * seen / after * np.sqrt(after))
            return np.maximum(ahead, 1.0 - ahead)
    after = precision + 1.0 / prior
    return ndtr(np.abs(precision * seen / after) * np.sqrt(after))


def regime(shape, tau, noise, studies, items, rng, pairs=PAIRS, rules=RULES):
    out = {rule: [] for rule in rules}
    right = []
    for _ in range(studies):
        truth = rng.normal(size=items)
        chosen = rng.choice(items, 2 * pairs, replace=False)
        a, b = chosen[:pairs], chosen[pairs:]
        if shape == "normal":
            truth[b] = truth[a] + tau * rng.normal(size=pairs)
        elif shape == "two-point":
            truth[b] = truth[a] + tau * rng.choice([-1.0, 1.0], pairs)
        sd = rng.uniform(*noise, items)
        shrink = 1.0 / (1.0 + sd**2)
        u, s = (truth + sd * rng.normal(size=items)) * shrink, sd * np.sqrt(shrink)
        for rule in rules:
            if rule == "oracle" and tau is None:
                out[rule].append(ndtr(np.abs(u[a] - u[b]) / np.hypot(s[a], s[b])))
            else:
                out[rule].append(said(rule, u, s, np.c_[a, b], tau))
        right.append((u[a] > u[b]) == (truth[a] > truth[b]))
    return {rule: np.concatenate(p) for rule, p in out.items()}, np.concatenate(right)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=400)
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--pairs", type=int, default=PAIRS, help="chosen pairs a study")
    args = parser.parse_args(argv)
    rules = RULES if args.pairs >= PAIR_PRIOR_MIN else ("shipped",)
    print("| pairs' differences | tau | item sd | right | " + " | ".join(rules) + " |")
    print("|---|---:|---|---:|" + "---|" * len(rules))
    for shape, tau, noise in REGIMES:
        said_by, right = regime(shape, tau, noise, args.studies, args.items,
                                np.random.default_rng(1), args.pairs, rules)  # fmt: skip
        cells = []
        for rule in rules:
            p = said_by[rule]
            sure = p >= 0.9
            band = (
                f"{np.mean(right[sure]):.3f} / {np.mean(p[sure]):.3f} of {int(sure.sum())}"
                if sure.any()
                else "none"
            )
            cells.append(f"said {np.mean(p):.3f}; >= 0.9: {band}")
        label = "sqrt 2" if tau is None else f"{tau}"
        print(f"| {shape} | {label} | {noise[0]}-{noise[1]} | {np.mean(right):.3f} | "
              + " | ".join(cells) + " |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
