"""Morris and Sobol designs and estimators against analytic truths: the
Ishigami function's published indices, a linear additive model
(S_i = a_i^2 var_i / sum), a pure product (no first-order effect, all
interaction), discrete uniform levels, and exact elementary effects."""

from __future__ import annotations

import math

import numpy as np
import pytest
from acesim.sensitivity.designs import (
    morris_design,
    morris_indices,
    saltelli_design,
    sobol_indices,
    unit_to_level,
)

# -- Ishigami (Ishigami and Homma 1990; indices in Saltelli et al. 2008) --------

A_ISH, B_ISH = 7.0, 0.1


def ishigami(u: np.ndarray) -> np.ndarray:
    x = -math.pi + 2.0 * math.pi * u
    return np.sin(x[:, 0]) + A_ISH * np.sin(x[:, 1]) ** 2 + B_ISH * x[:, 2] ** 4 * np.sin(x[:, 0])


def ishigami_truth() -> tuple[list[float], list[float]]:
    pi4, pi8 = math.pi**4, math.pi**8
    v = A_ISH**2 / 8 + B_ISH * pi4 / 5 + B_ISH**2 * pi8 / 18 + 0.5
    v1 = 0.5 * (1 + B_ISH * pi4 / 5) ** 2
    v2 = A_ISH**2 / 8
    v13 = 8 * B_ISH**2 * pi8 / 225
    return [v1 / v, v2 / v, 0.0], [(v1 + v13) / v, v2 / v, v13 / v]


def test_ishigami_truth_is_the_published_one() -> None:
    first, total = ishigami_truth()
    assert first == pytest.approx([0.3139, 0.4424, 0.0], abs=1e-4)
    assert total == pytest.approx([0.5576, 0.4424, 0.2437], abs=1e-4)


def test_ishigami_intervals_cover_the_truth() -> None:
    first, total = ishigami_truth()
    covered = 0
    cases = 0
    for seed in range(10):
        design = saltelli_design([None, None, None], 1024, seed=seed)
        s = sobol_indices(design, ishigami(design.points), seed=seed)
        for est, truth in ((s.first, first), (s.total, total)):
            for i in range(3):
                cases += 1
                covered += bool(est.low[i] <= truth[i] <= est.high[i])
                assert est.low[i] <= est.value[i] <= est.high[i]
                assert abs(est.value[i] - truth[i]) < 0.12
    # nominal 95%: 60 intervals, at least 51 (85%) cover
    assert covered >= 51, covered


def test_ishigami_estimates_converge() -> None:
    first, total = ishigami_truth()
    design = saltelli_design([None, None, None], 16384, seed=11)
    s = sobol_indices(design, ishigami(design.points), bootstrap=100)
    assert s.first.value == pytest.approx(first, abs=0.03)
    assert s.total.value == pytest.approx(total, abs=0.03)


# -- linear additive: S_i = ST_i = a_i^2 var_i / sum_j a_j^2 var_j --------------


def test_linear_additive_first_equals_total() -> None:
    a = np.array([4.0, 2.0, 1.0])
    width = np.array([1.0, 2.0, 0.5])  # x_i uniform on [0, width_i]: var = width^2 / 12
    share = a**2 * width**2 / 12
    truth = share / share.sum()
    design = saltelli_design([None, None, None], 4096, seed=5)
    y = (design.points * width) @ a
    s = sobol_indices(design, y, seed=5)
    assert np.all(s.first.low <= truth) and np.all(truth <= s.first.high)
    assert np.all(s.total.low <= truth) and np.all(truth <= s.total.high)
    assert np.all(s.interaction.low <= 0.0) and np.all(s.interaction.high >= 0.0)
    # Jansen's ST is exact for an additive model up to the sampling of the pairs
    assert s.total.value == pytest.approx(truth, abs=0.03)
    assert s.variance == pytest.approx(share.sum(), rel=0.05)


def test_product_is_all_interaction_and_an_inert_factor_is_exactly_zero() -> None:
    # y = x1 x2 with x uniform on (-1, 1): E[y | x1] = 0, so S1 = S2 = 0, ST = 1
    design = saltelli_design([None, None, None], 4096, seed=2)
    x = 2.0 * design.points - 1.0
    y = x[:, 0] * x[:, 1]
    s = sobol_indices(design, y, seed=2)
    for i in (0, 1):
        assert s.first.low[i] <= 0.0 <= s.first.high[i]
        assert s.total.low[i] <= 1.0 <= s.total.high[i]
        assert s.interaction.low[i] > 0.5  # far outside an interval of zero
    # the third factor never enters: f(AB_3) == f(A) row by row
    assert s.first.value[2] == 0.0 and s.total.value[2] == 0.0
    assert s.total.low[2] == 0.0 and s.total.high[2] == 0.0


def test_constant_output_has_every_index_zero() -> None:
    design = saltelli_design([None, 3], 16, seed=0)
    s = sobol_indices(design, np.full(len(design.points), 2.5), bootstrap=20)
    assert s.variance == 0.0
    assert list(s.first.value) == [0.0, 0.0] and list(s.total.high) == [0.0, 0.0]


# -- discrete factors -----------------------------------------------------------


def test_unit_to_level_is_discrete_uniform() -> None:
    u = (np.arange(300) + 0.5) / 300
    levels = unit_to_level(u, 3)
    assert list(np.bincount(levels)) == [100, 100, 100]
    assert unit_to_level(1.0, 3) == 2  # the closed end maps to the last level


def test_categorical_factor_share_of_variance() -> None:
    # y = c[L] + 2 x, L discrete uniform on 3 levels, x uniform on (0, 1)
    c = np.array([0.0, 1.0, 3.0])
    var_c = float(np.var(c))  # population variance of a discrete uniform
    var_x = 4.0 / 12
    design = saltelli_design([-3, None], 4096, seed=8)
    pts = design.coordinates()
    assert set(np.unique(pts[:, 0])) == {0.0, 1.0, 2.0}
    y = c[pts[:, 0].astype(int)] + 2.0 * pts[:, 1]
    s = sobol_indices(design, y, seed=8)
    truth = np.array([var_c, var_x]) / (var_c + var_x)
    assert np.all(s.first.low <= truth) and np.all(truth <= s.first.high)
    assert np.all(s.total.low <= truth) and np.all(truth <= s.total.high)


# -- Morris -------------------------------------------------------------------


def test_morris_linear_effects_are_exact() -> None:
    d = morris_design([None, None, None], trajectories=12, seed=4)
    assert d.points.shape == (12 * 4, 3)
    y = d.points @ np.array([3.0, -2.0, 0.0])
    m = morris_indices(d, y)
    assert m.mu_star.value == pytest.approx([3.0, 2.0, 0.0], abs=1e-12)
    assert m.mu.value == pytest.approx([3.0, -2.0, 0.0], abs=1e-12)
    assert m.sigma.value == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    # no spread, so the bootstrap interval is the point
    assert m.mu_star.low == pytest.approx(m.mu_star.high, abs=1e-12)


def test_morris_moves_one_factor_per_step_on_the_grid() -> None:
    d = morris_design([None, None, 5, -3], trajectories=30, grid=4, seed=9)
    paths = d.points.reshape(30, 5, 4)
    steps = np.diff(paths, axis=1)
    assert np.all(np.count_nonzero(steps, axis=2) == 1)  # one factor per step
    assert np.all(np.abs(steps[:, :, :2][steps[:, :, :2] != 0]) == pytest.approx(2 / 3))
    grid = {0.0, 1 / 3, 2 / 3, 1.0}
    assert {round(v, 12) for v in paths[:, :, :2].ravel()} == {round(g, 12) for g in grid}
    assert set(paths[:, :, 2].ravel()) <= {0.0, 1.0, 2.0, 3.0, 4.0}
    assert set(paths[:, :, 3].ravel()) == {0.0, 1.0, 2.0}


def test_morris_discrete_effects_span_the_range() -> None:
    # an ordered factor of 5 levels with y = 2 level: the change across the
    # whole range is 8, whatever pair a trajectory moves between
    d = morris_design([5, -3, None], trajectories=20, seed=1)
    c = np.array([0.0, 1.0, 3.0])
    pts = d.points
    y = 2.0 * pts[:, 0] + c[pts[:, 1].astype(int)] + 0.0 * pts[:, 2]
    m = morris_indices(d, y)
    assert m.effects[:, 0] == pytest.approx(np.full(20, 8.0))
    # a categorical's effect is the change between its two levels
    assert set(np.round(np.abs(m.effects[:, 1]), 12)) <= {1.0, 2.0, 3.0}
    assert m.mu_star.value[2] == 0.0


def test_morris_interaction_shows_as_sigma() -> None:
    # y = x1 x2: the effect of x1 is x2 at the point of the move
    d = morris_design([None, None], trajectories=40, seed=6)
    y = d.points[:, 0] * d.points[:, 1]
    m = morris_indices(d, y)
    grid = {0.0, 1 / 3, 2 / 3, 1.0}
    assert {round(v, 9) for v in m.effects[:, 0]} <= {round(g, 9) for g in grid}
    assert m.sigma.low[0] > 0.1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: morris_design([], 4), "at least one factor"),
        (lambda: morris_design([None], 1), "trajectories"),
        (lambda: morris_design([None], 4, grid=3), "grid"),
        (lambda: morris_design([1], 4), r"levels\[0\]"),
        (lambda: saltelli_design([None], 1), "n must be"),
        (lambda: sobol_indices(saltelli_design([None], 4), [1.0, 2.0]), "outputs must hold"),
        (
            lambda: morris_indices(morris_design([None], 2), [0.0, 1.0, math.nan, 0.0]),
            "finite",
        ),
        (lambda: sobol_indices(saltelli_design([None], 4), np.zeros(12), ci=1.5), "ci"),
        (lambda: sobol_indices(saltelli_design([None], 4), np.zeros(12), bootstrap=2), "bootstrap"),
    ],
)
def test_bad_design_arguments_are_named(call, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        call()
