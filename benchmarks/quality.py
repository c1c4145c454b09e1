"""Annotator quality benchmark: how well the random-clicking flag finds random clickers.

    python benchmarks/quality.py [--replications 40] [--annotators 50] [--items 100]

Each simulated study: N items with utilities ~ N(0, 1), a balanced design of tuples of 4
(each item in 8 tuples), and A annotators who each answer J tuples drawn from it. An
attentive annotator follows the MaxDiff model with a sensitivity of their own (best drawn
with probability proportional to exp(s * u), then worst among the rest proportional to
exp(-s * u), s lognormal around 1 with sd 0.5 on the log scale, so some attentive
annotators are quite noisy). A share of the annotators click at random (best and worst
two distinct items drawn uniformly). The flag (bws.core.quality.looks_random: agreement
with the leave-one-out consensus not significantly above one half, one-sided binomial at
alpha 0.01, and likelier under one half than under the study's median agreement; at
least 10 judgments) is computed from everyone's judgments, the random
clickers included, as the platform sees them. Precision and recall are pooled over the
replications. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bws.core.design import balanced_tuples  # noqa: E402
from bws.core.quality import (  # noqa: E402
    consensus_agreement,
    looks_random,
    typical_agreement,
)

TUPLE_SIZE = 4
APPEARANCES = 8


def simulate(rng, *, n_items, n_annotators, n_random, judgments):
    """One study: the judgments' arrays and which annotators click at random."""
    utilities = rng.normal(size=n_items)
    tuples = balanced_tuples(n_items, TUPLE_SIZE, APPEARANCES, seed=int(rng.integers(1 << 31)))
    random_clicker = np.zeros(n_annotators, dtype=bool)
    random_clicker[rng.choice(n_annotators, n_random, replace=False)] = True
    items, best, worst, who = [], [], [], []
    for annotator in range(n_annotators):
        chosen = rng.choice(len(tuples), size=judgments, replace=judgments > len(tuples))
        sensitivity = float(np.exp(rng.normal(0.0, 0.5)))
        for row in tuples[chosen]:
            if random_clicker[annotator]:
                b, w = rng.choice(TUPLE_SIZE, size=2, replace=False)
            else:
                u = sensitivity * utilities[row]
                p = np.exp(u - u.max())
                b = rng.choice(TUPLE_SIZE, p=p / p.sum())
                q = np.exp(-(u - u.min()))
                q[b] = 0.0
                w = rng.choice(TUPLE_SIZE, p=q / q.sum())
            items.append(row)
            best.append(b)
            worst.append(w)
            who.append(annotator)
    return np.asarray(items), np.asarray(best), np.asarray(worst), np.asarray(who), random_clicker


def run(args) -> None:
    rng = np.random.default_rng(args.seed)
    print(
        f"{args.items} items, tuples of {TUPLE_SIZE}, {args.annotators} annotators, "
        f"{args.replications} studies per row"
    )
    print(
        "| random clickers | judgments each | precision | recall | attentive flagged | "
        "mean agreement attentive | mean agreement random |"
    )
    print("|---|---|---|---|---|---|---|")
    for share in (0.05, 0.10, 0.20):
        n_random = max(1, round(share * args.annotators))
        for judgments in (20, 50, 100):
            tp = fp = fn = 0
            attentive_share, random_share = [], []
            for _ in range(args.replications):
                items, best, worst, who, truth = simulate(
                    rng,
                    n_items=args.items,
                    n_annotators=args.annotators,
                    n_random=n_random,
                    judgments=judgments,
                )
                agreement = consensus_agreement(
                    items, best, worst, who, args.items, args.annotators
                )
                typical = typical_agreement(agreement)
                flagged = np.array(
                    [
                        looks_random(k, n, typical)
                        for k, n in zip(agreement.agreeing, agreement.judgments, strict=True)
                    ]
                )
                tp += int((flagged & truth).sum())
                fp += int((flagged & ~truth).sum())
                fn += int((~flagged & truth).sum())
                attentive_share += list(agreement.share[~truth])
                random_share += list(agreement.share[truth])
            precision = tp / (tp + fp) if tp + fp else 1.0
            recall = tp / (tp + fn) if tp + fn else 1.0
            n_attentive = args.replications * (args.annotators - n_random)
            print(
                f"| {share:.0%} ({n_random} of {args.annotators}) | {judgments} | "
                f"{precision:.3f} | {recall:.3f} | {fp} of {n_attentive} | "
                f"{np.mean(attentive_share):.3f} | {np.mean(random_share):.3f} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=40)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
