"""Agreement coefficients against published worked examples and the krippendorff package."""

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement.core.coefficients import (
    cohen_kappa,
    cohen_kappa_pair,
    disagreement_rate,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
)

nan = np.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", Annenberg School for
# Communication Departmental Papers 43, example C: 4 observers, 12 units, values 1..5,
# missing data. Published: nominal .743, ordinal .815, interval .849.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_2011_example(level, published):
    alpha = krippendorff_alpha(KRIPPENDORFF_2011, level)
    assert alpha.value == pytest.approx(published, abs=5e-4)
    assert alpha.n_units == 11  # unit 12 has a single value and is not pairable


def test_krippendorff_2011_example_exact_nominal():
    # To full precision, as the krippendorff package also gives for this table.
    alpha = krippendorff_alpha(KRIPPENDORFF_2011, "nominal").value
    assert alpha == pytest.approx(0.743421052631579, abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_matches_the_krippendorff_package_on_random_data(level):
    rng = np.random.default_rng(11)
    for _ in range(20):
        data = rng.integers(1, 6, size=(4, 60)).astype(float)
        data[rng.random(data.shape) < 0.3] = nan
        want = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert krippendorff_alpha(data, level).value == pytest.approx(want, abs=1e-10)


def test_interval_closed_form_matches_the_package_on_continuous_values():
    rng = np.random.default_rng(5)
    truth = rng.normal(size=80)
    data = truth + rng.normal(scale=0.5, size=(3, 80))
    data[rng.random(data.shape) < 0.2] = nan
    want = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert krippendorff_alpha(data, "interval").value == pytest.approx(want, abs=1e-10)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 5), st.integers(2, 6))
def test_nominal_alpha_is_unchanged_by_relabelling_and_by_annotator_order(seed, coders, values):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, values, size=(coders, 30)).astype(float)
    data[rng.random(data.shape) < 0.25] = nan
    base = krippendorff_alpha(data, "nominal")
    relabelled = np.where(np.isnan(data), nan, (data * 7 + 3) % 101)
    for other in (relabelled, data[::-1]):
        value = krippendorff_alpha(other, "nominal").value
        if base.value is None:
            assert value is None
        else:
            assert value == pytest.approx(base.value, abs=1e-12)


def test_alpha_undefined_without_pairable_units_or_variation():
    lonely = krippendorff_alpha([[1, nan], [nan, 2]])
    assert lonely.value is None and "two or more" in lonely.reason
    constant = krippendorff_alpha([[1, 1, 1], [1, 1, 1]])
    assert constant.value is None and "expected disagreement is zero" in constant.reason


# Fleiss (1971) as worked on Wikipedia's "Fleiss' kappa" page: 10 subjects, 14 raters,
# 5 categories; P-bar 0.378, P-e 0.213, kappa 0.210.
FLEISS_TABLE = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)


def _from_counts(table):
    """(raters, subjects) data whose category counts per subject are the table's rows."""
    return np.array([np.repeat(np.arange(table.shape[1]), row) for row in table], float).T


def test_fleiss_wikipedia_example():
    kappa = fleiss_kappa(_from_counts(FLEISS_TABLE))
    assert kappa.value == pytest.approx(0.210, abs=5e-4)
    assert kappa.value == pytest.approx(0.2099307, abs=1e-6)


def test_fleiss_undefined_when_raters_per_unit_vary():
    kappa = fleiss_kappa([[1, 2, 1], [1, 2, nan], [2, nan, nan]])
    # Units 1 and 2 are pairable (3 and 2 raters); unit 3 has one rater and is left out.
    assert kappa.value is None
    assert "raters per unit vary (2 to 3)" in kappa.reason


def test_fleiss_with_two_raters_equals_scotts_pi_and_nominal_alpha_up_to_sample_size():
    rng = np.random.default_rng(2)
    data = rng.integers(0, 3, size=(2, 200)).astype(float)
    pi = fleiss_kappa(data).value
    alpha = krippendorff_alpha(data).value
    n = 2 * 200
    # alpha = 1 - (1 - pi) (n - 1) / n for two coders and no missing values.
    assert alpha == pytest.approx(1 - (1 - pi) * (n - 1) / n, abs=1e-12)


def _pairs(table):
    """Two raters' labels from a 2 x 2 table [[yes/yes, yes/no], [no/yes, no/no]]."""
    a, b = [], []
    for i in range(2):
        for j in range(2):
            a += [i] * table[i][j]
            b += [j] * table[i][j]
    return np.array(a, float), np.array(b, float)


@pytest.mark.parametrize(
    ("table", "published"),
    [
        # Wikipedia "Cohen's kappa", simple example: 50 grant proposals, p_o 0.7, p_e 0.5.
        ([[20, 5], [10, 15]], 0.4),
        # Same page, same agreement (60 of 100), different marginals: 0.1304 and 0.2593.
        ([[45, 15], [25, 15]], 0.1304),
        ([[25, 35], [5, 35]], 0.2593),
    ],
)
def test_cohen_kappa_worked_examples(table, published):
    kappa, n_units, reason = cohen_kappa_pair(*_pairs(table))
    assert kappa == pytest.approx(published, abs=5e-5)
    assert n_units == sum(map(sum, table)) and reason is None


def test_cohen_kappa_is_the_mean_over_pairs_each_on_shared_units():
    a = [1, 1, 2, 2, nan, 1]
    b = [1, 2, 2, 2, 1, nan]
    c = [nan, 1, 2, 1, 1, 1]
    mean, pairs = cohen_kappa([a, b, c])
    expected = []
    for (i, x), (j, y) in [((0, a), (1, b)), ((0, a), (2, c)), ((1, b), (2, c))]:
        x, y = np.array(x), np.array(y)
        both = ~np.isnan(x) & ~np.isnan(y)
        value, n_units, _ = cohen_kappa_pair(x, y)
        expected.append(value)
        pair = next(p for p in pairs if (p.first, p.second) == (i, j))
        assert pair.n_units == both.sum() == 4
        assert pair.kappa == pytest.approx(value)
    assert mean.value == pytest.approx(np.mean(expected))


def test_cohen_kappa_undefined_when_both_use_one_label():
    mean, pairs = cohen_kappa([[1, 1, 1], [1, 1, 1]])
    assert mean.value is None and "chance agreement is 1" in mean.reason
    assert pairs[0].kappa is None


def test_cohen_kappa_without_shared_units():
    mean, pairs = cohen_kappa([[1, nan], [nan, 2]])
    assert mean.value is None and pairs == []


def test_percent_agreement_is_pooled_over_comparisons():
    # Unit 1: a=b=c (3 agreeing of 3); unit 2: a=b, c differs (1 of 3); unit 3: a, b differ
    # (0 of 1); unit 4: one value, no comparison. Pooled: 4 / 7.
    data = [[1, 1, 1, 2], [1, 1, 2, nan], [1, 2, nan, nan]]
    result = percent_agreement(data)
    assert result.value == pytest.approx(4 / 7)
    assert result.n_units == 3


def test_percent_agreement_undefined_without_comparisons():
    assert percent_agreement([[1, nan], [nan, 1]]).value is None


def test_disagreement_rate_of_a_judge_against_people():
    judge = [1, 1, 2, nan]
    alice = [1, 2, 2, 1]
    bob = [2, nan, 2, 1]
    rate, steps, comparisons = disagreement_rate([judge, alice, bob], 0, [1, 2])
    # Comparisons: unit 1 (alice agrees, bob not), unit 2 (alice not), unit 3 (both agree).
    assert comparisons == 5 and steps == 3
    assert rate == pytest.approx(2 / 5)
    assert disagreement_rate([judge, alice], 0, []) == (None, 0, 0)
