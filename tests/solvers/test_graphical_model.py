"""Junction-tree inference and sampling against the dense histogram."""

import itertools

import numpy as np
import pytest

from skdpopt.solvers.graphical_model import (
    GraphicalModel,
    JunctionTree,
    model_cells,
)

SHAPE = (2, 3, 4, 2, 3, 2)
CLIQUES = [(0, 1), (1, 2), (2, 3), (3, 4, 5), (0, 5), (1, 4)]


def random_model(scale=2.0, seed=0):
    rng = np.random.default_rng(seed)
    model = GraphicalModel(SHAPE, CLIQUES)
    for clique in CLIQUES:
        model.update(clique, scale * rng.normal(size=[SHAPE[a] for a in clique]))
    return model


def dense_of(model):
    """The product of the potentials over the whole domain, normalised."""
    grid = np.indices(model.shape)
    log_p = np.zeros(model.shape)
    for clique, table in model.potentials.items():
        log_p = log_p + table[tuple(grid[a] for a in clique)]
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def test_every_marginal_matches_the_dense_histogram():
    model = random_model()
    p = dense_of(model)
    for k in range(1, len(SHAPE) + 1):
        for attrs in itertools.combinations(range(len(SHAPE)), k):
            drop = tuple(a for a in range(len(SHAPE)) if a not in attrs)
            np.testing.assert_allclose(model.marginal(attrs), p.sum(axis=drop),
                                       atol=1e-12)


def test_updates_after_inference_invalidate_the_right_messages():
    model = random_model()
    model.marginal((0, 4))  # fills the message cache
    rng = np.random.default_rng(5)
    for clique in [(2, 3), (0, 5), (1, 2, 3)]:  # the last adds a clique
        model.update(clique, rng.normal(size=[SHAPE[a] for a in clique]))
        p = dense_of(model)
        for attrs in [(0,), (4,), (1, 5), (0, 2, 4)]:
            drop = tuple(a for a in range(len(SHAPE)) if a not in attrs)
            np.testing.assert_allclose(model.marginal(attrs), p.sum(axis=drop),
                                       atol=1e-12)


def test_huge_potentials_stay_finite():
    # exp(1e4) overflows float64; log-space messages must not.
    model = random_model(scale=1e4)
    p = dense_of(model)
    for attrs in [(0,), (1, 4), (0, 2, 5)]:
        drop = tuple(a for a in range(len(SHAPE)) if a not in attrs)
        got = model.marginal(attrs)
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, p.sum(axis=drop), atol=1e-9)
    assert np.all(np.isfinite(model.sample(100, np.random.default_rng(0))))


def test_samples_follow_the_distribution():
    """Forward sampling is exact, so the empirical L1 distance to p is
    sampling error only: E L1 <= sum_i sqrt(p_i / n) <= sqrt(K / n)
    (Cauchy-Schwarz over K cells) and L1 moves by at most 2/n per draw, so
    McDiarmid's inequality puts L1 above E L1 + sqrt(2 log(1/a) / n) with
    probability at most a = 1e-6."""
    model = random_model()
    p = dense_of(model).ravel()
    n = 100_000
    codes = model.sample(n, np.random.default_rng(1))
    counts = np.bincount(np.ravel_multi_index(codes.T, SHAPE), minlength=p.size)
    l1 = np.abs(counts / n - p).sum()
    assert l1 <= np.sqrt(p.size / n) + np.sqrt(2 * np.log(1e6) / n)
    # A wrong sampler (independent columns) is far outside that margin.
    product = np.ones(SHAPE)
    for a in range(len(SHAPE)):
        view = [1] * len(SHAPE)
        view[a] = SHAPE[a]
        product = product * model.marginal((a,)).reshape(view)
    assert np.abs(product.ravel() - p).sum() > 2 * (
        np.sqrt(p.size / n) + np.sqrt(2 * np.log(1e6) / n))


def test_systematic_samples_match_every_tree_table_up_to_rounding():
    """Systematic sampling gives each group of rows sharing a node's
    separator value the node's new columns in its expected counts, each
    rounded up or down: every count is within 1 of m p(new | separator)
    (so, unlike independent draws, within 1 of n p at the root)."""
    model = random_model()
    n = 10_007
    codes = model.sample(n, np.random.default_rng(3), method="systematic")
    tree = model.tree
    for u in tree.order:
        attrs = tree.nodes[u]
        given = tree.separator(u, tree.parent[u]) if tree.parent[u] >= 0 else ()
        belief = model.marginal(attrs)
        dims = [SHAPE[a] for a in attrs]
        counts = np.bincount(np.ravel_multi_index(codes[:, list(attrs)].T, dims),
                             minlength=belief.size).reshape(dims)
        axes = tuple(i for i, a in enumerate(attrs) if a not in given)
        group = counts.sum(axis=axes, keepdims=True)
        expected = group * belief / belief.sum(axis=axes, keepdims=True)
        assert np.abs(counts - expected).max() < 1.0
    # Rows come in random order: no column is sorted.
    assert all(np.any(np.diff(codes[:, a]) < 0) for a in range(len(SHAPE)))


def test_systematic_and_iid_samples_agree_in_distribution():
    """Each systematic row is distributed as the model: the empirical L1
    distance to p stays within the margin of independent draws (the
    rounding only lowers the variance)."""
    model = random_model()
    p = dense_of(model).ravel()
    n = 100_000
    codes = model.sample(n, np.random.default_rng(4), method="systematic")
    counts = np.bincount(np.ravel_multi_index(codes.T, SHAPE), minlength=p.size)
    assert np.abs(counts / n - p).sum() <= np.sqrt(p.size / n) + np.sqrt(
        2 * np.log(1e6) / n)
    with pytest.raises(ValueError, match="method"):
        model.sample(10, np.random.default_rng(0), method="rounded")


def test_junction_tree_has_running_intersection_and_covers_cliques():
    tree = JunctionTree(CLIQUES, SHAPE)
    for clique in CLIQUES:
        assert tree.node_containing(clique) is not None
    # Running intersection: the nodes holding any column form a subtree.
    for a in range(len(SHAPE)):
        holding = {i for i, n in enumerate(tree.nodes) if a in n}
        inside = sum(1 for i in holding if tree.parent[i] in holding)
        assert len(holding) - inside == 1
    assert model_cells(CLIQUES, SHAPE) == tree.cells


def test_disconnected_columns_and_the_one_clique_model():
    model = GraphicalModel((3, 2, 2), [(0,), (1,)])
    assert model.cells == 3 + 2 + 2  # column 2 is a node of its own
    np.testing.assert_allclose(model.dense(), np.full((3, 2, 2), 1 / 12))
    full = GraphicalModel((3, 2, 2), [(0, 1, 2)])
    assert full.tree.nodes == [(0, 1, 2)]
    table = np.arange(12.0).reshape(3, 2, 2) / 4
    full.update((0, 1, 2), table)
    np.testing.assert_allclose(full.dense(), np.exp(table) / np.exp(table).sum())


@pytest.mark.parametrize("n_columns", [40])
def test_memory_follows_the_tree_not_the_domain(n_columns):
    # A chain over 40 columns of 10 codes: a 1e40-cell domain held in
    # 39 tables of 100 cells.
    shape = (10,) * n_columns
    chain = [(a, a + 1) for a in range(n_columns - 1)]
    model = GraphicalModel(shape, chain)
    assert model.cells == 100 * (n_columns - 1)
    rng = np.random.default_rng(0)
    for clique in chain:
        model.update(clique, rng.normal(size=(10, 10)))
    assert model.marginal((0, n_columns - 1)).shape == (10, 10)
    assert model.sample(10, rng).shape == (10, n_columns)
