"""When to stop collecting judgments: the projected reliability and rank movement for
more judgments, from the current split-half reliability and posterior intervals.

Pure numpy; the platform (dashboard, API) and ``python -m bws stats`` give the same advice
(``advice_for_judgments``).

Two projections, each stated with how it was made:

* Reliability. The split-half correlation r compares halves of m/2 judgments each; by
  Spearman-Brown, halves of M/2 would correlate k r / (1 + (k - 1) r) with k = M / m,
  and the whole data's reliability is 2 r_M / (1 + r_M). Under an adaptive design the
  counting split-half reads low and the model split-half (``model_reliability``) reads
  high; in simulations the truth lay between them from RANGE_FROM_APPEARANCES
  appearances per item on (benchmarks/RESULTS.md, "Reliability of adaptive designs").
  Given both, each is projected alike and the reliability is stated as the range between.
* Rank movement of the median item. Its posterior sd s shrinks like 1 / sqrt(n_i) as it
  gains appearances (Delta judgments give each item about Delta T / n more), to s'.
  Its score then moves by a normal amount of sd c = sqrt(s^2 - s'^2) (what the posterior
  mean can still learn), and so do its neighbours. With rho items per unit of score near
  it (the local density of scores), its rank moves by rho c z for its own move plus the
  neighbours that cross it, a variance of rho c / sqrt(pi): rank sd
  sqrt((rho c)^2 + rho c / sqrt(pi)).

The statement says stop when Delta more judgments would move the median item by fewer than
``stop_ranks`` ranks (90% of the time) and raise the reliability by less than
``stop_gain`` (on both readings, when there is a range).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from bws.core.intervals import counting_intervals
from bws.core.scoring import fit

# The share of moves the stated bound holds for: |move| < 1.645 sd for 90% of normal moves.
BOUND_LEVEL = 0.9
BOUND_Z = 1.6448536269514722
# A gain of reliability below this is not worth more judgments on its own.
DEFAULT_STOP_GAIN = 0.02
# The median item's neighbourhood: the middle MIDDLE_SHARE of the items by score.
MIDDLE_SHARE = 0.2
# The density of scores is measured over the middle DENSITY_SHARE of the items (their
# interquartile range: steadier than a narrow window when scores tie or bunch).
DENSITY_SHARE = 0.5
# Under adaptive designs the truth lay between the counting and the model split-half from
# this many appearances per item on (benchmarks/RESULTS.md); below it the range is less sure.
RANGE_FROM_APPEARANCES = 4
STOP = "stop"
CONTINUE = "continue"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Advice:
    """What more judgments would bring, and whether to stop.

    verdict: "stop", "continue" or "unknown" (too little to project from).
    step: the further judgments the projection is for.
    reliability_now / reliability_next: whole-data Spearman-Brown reliability now and
    projected after ``step`` more, from the counting split-half (None when undefined).
    reliability_now_low / _high, reliability_next_low / _high: under an adaptive design,
    the range between the readings of the counting and the model split-half, now and
    after ``step`` more (None when the design is balanced or either is undefined; when
    only the model split-half is defined, the _high fields alone: an upper reading).
    rank_sd: projected standard deviation of the median item's rank change (ranks).
    rank_bound: the median item moves by fewer ranks than this 90% of the time.
    statement: the advice in one sentence; how: how it was projected.
    """

    verdict: str
    n_judgments: int
    n_items: int
    step: int
    reliability_now: float | None
    reliability_next: float | None
    rank_sd: float | None
    rank_bound: float | None
    stop_ranks: float
    stop_gain: float
    statement: str
    how: list[str]
    reliability_now_low: float | None = None
    reliability_now_high: float | None = None
    reliability_next_low: float | None = None
    reliability_next_high: float | None = None

    @property
    def reliability_range(self) -> bool:
        """Whether the reliability is a range (an adaptive design read both ways)."""
        return self.reliability_next_low is not None and self.reliability_next_high is not None

    def to_dict(self) -> dict:
        return asdict(self)

    def lines(self) -> list[str]:
        """The advice as plain text lines (the command line's stats)."""
        lines = [f"Advice: {self.statement}"]
        if self.reliability_range:
            lines.append(
                f"  projected reliability between {self.reliability_next_low:.3f} and "
                f"{self.reliability_next_high:.3f} after {self.step:,} more judgments "
                f"(between {self.reliability_now_low:.3f} and {self.reliability_now_high:.3f} "
                "now; the counting split-half reads low and the model split-half high under "
                "adaptive designs)"
            )
        elif self.reliability_next_high is not None:
            lines.append(
                f"  projected reliability up to {self.reliability_next_high:.3f} after "
                f"{self.step:,} more judgments ({self.reliability_now_high:.3f} now; the model "
                "split-half's reading, which runs high under adaptive designs; the counting "
                "split-half is undefined)"
            )
        elif self.reliability_now is not None and self.reliability_next is not None:
            lines.append(
                f"  projected reliability: {self.reliability_now:.3f} now, "
                f"{self.reliability_next:.3f} after {self.step:,} more judgments"
            )
        lines += [f"  how: {line}" for line in self.how]
        return lines


def projected_split_half(r: float, m: int, total: int) -> float:
    """Split-half correlation (halves of total / 2 judgments) projected from r measured on
    m judgments, by Spearman-Brown; a correlation on the [-1, 1] scale."""
    k = total / m
    return k * r / (1.0 + (k - 1.0) * r)


def whole_reliability(r_half: float) -> float:
    """Reliability of the whole data from its split-half correlation: 2r / (1 + r)."""
    return 2.0 * r_half / (1.0 + r_half)


def score_density(scores: np.ndarray) -> float:
    """Items per unit of score around the median score: the middle DENSITY_SHARE of the
    items over the score range they span (robust to ties and outliers); NaN when it
    cannot be measured."""
    u = np.asarray(scores, float)
    u = u[np.isfinite(u)]
    if u.size < 5:
        return float("nan")
    low, high = np.quantile(u, [0.5 - DENSITY_SHARE / 2, 0.5 + DENSITY_SHARE / 2])
    if high <= low:
        return float("nan")
    return DENSITY_SHARE * u.size / (high - low)


def rank_change_sd(density: float, move_sd: float) -> float:
    """The sd of an item's rank change (ranks) when it and its neighbours each move by a
    normal amount of sd move_sd, with ``density`` items per unit of score around it."""
    x = density * move_sd
    return math.sqrt(x * x + x / math.sqrt(math.pi))


def median_rank_sd(
    scores: np.ndarray, sd: np.ndarray, appearances: np.ndarray, *, step: int, tuple_size: int
) -> float:
    """Projected sd of the median item's rank change (ranks) after ``step`` more judgments
    spread evenly over the items; NaN when it cannot be projected."""
    scores, sd = np.asarray(scores, float), np.asarray(sd, float)
    appearances = np.asarray(appearances, float)
    ok = np.isfinite(scores) & np.isfinite(sd) & (appearances > 0)
    if ok.sum() < 5:
        return float("nan")
    u, s, a = scores[ok], sd[ok], appearances[ok]
    middle = np.argsort(np.abs(u - np.median(u)))[: max(1, int(round(MIDDLE_SHARE * u.size)))]
    # The median item stands for its neighbourhood: their typical sd and appearances.
    s_now, a_now = float(np.median(s[middle])), float(np.median(a[middle]))
    gained = step * tuple_size / ok.sum()
    s_next = s_now * math.sqrt(a_now / (a_now + gained))
    move = math.sqrt(max(s_now**2 - s_next**2, 0.0))
    density = score_density(u)
    if not math.isfinite(density):
        return float("nan")
    # No sd above that of a rank drawn at random: more data cannot reshuffle more than that.
    return min(rank_change_sd(density, move), ok.sum() / math.sqrt(12.0))


def default_step(n_judgments: int, n_items: int) -> int:
    """The further judgments to project for: about a quarter more or one round of the items
    (whichever is more), at least 100, rounded to a plain number."""
    raw = max(100, n_judgments / 4, n_items)
    magnitude = 10 ** math.floor(math.log10(raw))
    for nice in (1, 2, 2.5, 5, 10):
        if raw <= nice * magnitude:
            return int(nice * magnitude)
    return int(raw)


def advise(
    *,
    n_judgments: int,
    tuple_size: int,
    scores: np.ndarray,
    sd: np.ndarray,
    appearances: np.ndarray,
    split_half: float | None,
    convergence: Sequence[dict] = (),
    step: int | None = None,
    stop_ranks: float | None = None,
    stop_gain: float = DEFAULT_STOP_GAIN,
    model_split_half: float | None = None,
    model_name: str = "model",
) -> Advice:
    """The advice for a study of ``n_judgments`` judgments whose fit gives ``scores`` and
    posterior ``sd`` per item (on one scale) and whose split-half correlation is
    ``split_half``. ``stop_ranks`` defaults to 2 ranks or 1% of the items, whichever is
    more.

    ``model_split_half`` (an adaptive design: the split-half of a ``model_name`` fit of each
    half, ``model_reliability.model_split_half``) makes the reliability a range between
    the projections of the two split-halves; None (a balanced design) leaves the counting
    split-half's projection alone."""
    scores = np.asarray(scores, float)
    n_items = int(np.isfinite(scores).sum())
    step = step or default_step(n_judgments, n_items)
    stop_ranks = stop_ranks or max(2.0, 0.01 * n_items)
    how: list[str] = []
    r_now = r_next = None
    if _usable(split_half):
        r_now, r_next = _projected(split_half, n_judgments, step)
    ranged = None
    gain = (r_next - r_now) if r_now is not None else 0.0
    if r_now is not None and _usable(model_split_half):
        model_now, model_next = _projected(model_split_half, n_judgments, step)
        # Either reading may be the truth: the larger of the two gains decides.
        gain = max(gain, model_next - model_now)
        ranged = (
            min(r_now, model_now),
            max(r_now, model_now),
            min(r_next, model_next),
            max(r_next, model_next),
        )
        how.append(_range_how(split_half, model_split_half, model_name, n_judgments, step))
        if n_judgments * tuple_size < RANGE_FROM_APPEARANCES * max(n_items, 1):
            how.append(
                f"with {n_judgments * tuple_size / max(n_items, 1):.1f} appearances per item, "
                f"fewer than the {RANGE_FROM_APPEARANCES} from which the truth lay in the "
                "range in simulations, the true reliability may lie outside it"
            )
    elif _usable(model_split_half):
        # The counting split-half cannot be projected (r below 0, or undefined): the model
        # split-half's projection alone, which runs high under adaptive designs.
        model_now, model_next = _projected(model_split_half, n_judgments, step)
        gain = model_next - model_now
        ranged = (None, model_now, None, model_next)
        how.append(
            "reliability: the design is adaptive and the counting split-half cannot be "
            "projected (its correlation is undefined or below 0), so the reliability is "
            f"the model split-half's, {model_split_half:.3f} ({model_name} fit of each half), "
            "which reads high under adaptive designs: an upper reading. It is projected by "
            f"Spearman-Brown from halves of {n_judgments // 2:,} judgments to halves of "
            f"{(n_judgments + step) // 2:,}, then 2r / (1 + r) for the whole data"
        )
    elif r_now is not None:
        how.append(
            f"reliability: the split-half correlation {split_half:.3f} (halves of "
            f"{n_judgments // 2:,} judgments) projected by Spearman-Brown to halves of "
            f"{(n_judgments + step) // 2:,}, then 2r / (1 + r) for the whole data"
        )
    rank_sd = (
        median_rank_sd(scores, sd, appearances, step=step, tuple_size=tuple_size)
        if n_judgments
        else float("nan")
    )
    bound = None
    if math.isfinite(rank_sd):
        bound = BOUND_Z * rank_sd
        how.append(
            "rank movement: the median item's posterior sd shrinks like 1 / sqrt(appearances) "
            f"as {step:,} judgments add about {step * tuple_size / max(n_items, 1):.1f} "
            "appearances per item; its expected score move, times the items per unit of "
            "score around it, plus the neighbours that cross it, gives a rank sd of "
            f"{rank_sd:.2f} ({BOUND_LEVEL:.0%} of moves are under {bound:.1f} ranks)"
        )
    points = [p for p in convergence if p.get("spearman") is not None]
    if len(points) >= 2:
        last = points[-2]
        how.append(
            f"convergence: scores from the first {last['fraction']:.0%} of the judgments "
            f"correlate {last['spearman']:.3f} (Spearman) with those from all of them"
        )
    if bound is None:
        verdict = UNKNOWN
        statement = "Too few judgments to project from yet: keep going."
    else:
        more = f"another {step:,} judgments"
        if bound < stop_ranks and gain < stop_gain:
            verdict = STOP
            statement = (
                f"You can stop: {more} would move the median item by less than "
                f"{_ranks(bound)} (90% of the time)"
            )
            if ranged is not None and ranged[0] is None:
                statement += (
                    f" and raise the reliability by {gain:.3f} on the model split-half's "
                    f"reading, which runs high (projected up to {ranged[3]:.3f})."
                )
            elif ranged is not None:
                statement += (
                    f" and raise the reliability by at most {gain:.3f} (projected between "
                    f"{ranged[2]:.3f} and {ranged[3]:.3f})."
                )
            else:
                statement += (
                    f" and raise the reliability by {gain:.3f}." if r_now is not None else "."
                )
        else:
            verdict = CONTINUE
            why = f"would move the median item by up to {_ranks(bound)} (90% of the time)"
            if ranged is not None and ranged[0] is None:
                why += (
                    f"; projected reliability up to {ranged[3]:.3f} after them (the model "
                    "split-half's reading, which runs high)"
                )
            elif ranged is not None:
                why += (
                    f"; projected reliability between {ranged[2]:.3f} and {ranged[3]:.3f} "
                    f"after them (between {ranged[0]:.3f} and {ranged[1]:.3f} now)"
                )
            elif r_now is not None:
                why += f" and raise the reliability from {r_now:.3f} to {r_next:.3f}"
            statement = f"Keep going: {more} {why}."
    low_now, high_now, low_next, high_next = ranged or (None, None, None, None)
    return Advice(
        verdict=verdict,
        n_judgments=int(n_judgments),
        n_items=n_items,
        step=int(step),
        reliability_now=r_now,
        reliability_next=r_next,
        rank_sd=rank_sd if math.isfinite(rank_sd) else None,
        rank_bound=bound,
        stop_ranks=float(stop_ranks),
        stop_gain=float(stop_gain),
        statement=statement,
        how=how,
        reliability_now_low=low_now,
        reliability_now_high=high_now,
        reliability_next_low=low_next,
        reliability_next_high=high_next,
    )


def _usable(r: float | None) -> bool:
    """A split-half correlation that can be projected (0 to 1)."""
    return r is not None and math.isfinite(r) and 0 <= r <= 1


def _projected(r: float, n_judgments: int, step: int) -> tuple[float, float]:
    """Whole-data reliability now and after ``step`` more, from split-half r."""
    later = projected_split_half(r, n_judgments, n_judgments + step)
    return whole_reliability(r), whole_reliability(later)


def _range_how(counting: float, model: float, model_name: str, n: int, step: int) -> str:
    return (
        "reliability: a range, as the design is adaptive: the counting split-half "
        f"correlation {counting:.3f} reads low under adaptive designs (counting misreads "
        f"tuples of close items) and the model split-half {model:.3f} ({model_name} fit of "
        "each half) reads high; in simulations the true reliability lay between the two "
        f"from {RANGE_FROM_APPEARANCES} appearances per item on. "
        f"Each is projected by Spearman-Brown from halves of {n // 2:,} judgments to halves "
        f"of {(n + step) // 2:,}, then 2r / (1 + r) for the whole data"
    )


def advice_for_judgments(
    judgments,
    split_half: float | None,
    convergence: Sequence[dict] = (),
    *,
    model_reliability: dict | None = None,
    **options,
) -> Advice:
    """The advice for a set of judgments (bws.core.judgments.Judgments), as the platform
    and the command line give it: from counting scores and their calibrated (moderated t)
    intervals, whatever method scores the scheme (its ranks are the same to within noise,
    and counting scores are not shrunk, so their sd says how far they can still move; under
    adaptive designs, where counting misreads tuples of close items, the projection still
    tracked the movement of the Plackett-Luce ranking within 0.71-1.13 of it).
    An adaptive design passes its model split-half, as ``model_reliability`` (the stored
    form, ``model_reliability.model_reliability_entry``) or as ``model_split_half`` and
    ``model_name`` in ``options``, for the reliability's range."""
    if model_reliability is not None:
        options.setdefault("model_split_half", model_reliability["mean"])
        options.setdefault("model_name", model_reliability["method_name"])
    scores = fit("counting", judgments)
    intervals = counting_intervals(judgments, scores=scores)
    return advise(
        n_judgments=judgments.n_judgments,
        tuple_size=judgments.tuple_size,
        scores=np.where(scores.appearances > 0, scores.scores, np.nan),
        sd=intervals.std,
        appearances=scores.appearances,
        split_half=split_half,
        convergence=convergence,
        **options,
    )


def _ranks(value: float) -> str:
    """A rank bound in words, rounded up to whole ranks ("1 rank", "3 ranks")."""
    shown = max(1, math.ceil(value))
    return "1 rank" if shown == 1 else f"{shown} ranks"
