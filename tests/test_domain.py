"""Public domains: declared categories, bins and encoding."""

import numpy as np
import pytest

from skdpopt import _domain


def test_cardinality_and_categories():
    column = _domain.declared_categories("a", 3)
    assert column.size == 3 and column.integer_coded
    np.testing.assert_array_equal(
        _domain.encode_column(column, np.array([2, 0, 1, 2])), [2, 0, 1, 2])
    column = _domain.declared_categories("b", ["x", "y", None])
    codes = _domain.encode_column(column, np.array(["y", None, "x"], dtype=object))
    np.testing.assert_array_equal(codes, [1, 2, 0])


def test_nan_matches_a_declared_missing_category():
    column = _domain.declared_categories("b", ["x", np.nan])
    codes = _domain.encode_column(column, np.array(["x", np.nan], dtype=object))
    np.testing.assert_array_equal(codes, [0, 1])


def test_unknown_value_names_the_column_not_the_value():
    column = _domain.declared_categories("colour", ["red", "blue"])
    with pytest.raises(ValueError, match="'colour' has values that are not") as info:
        _domain.encode_column(column, np.array(["red", "green"], dtype=object))
    assert "green" not in str(info.value)  # a value of the data is private


def test_numeric_bins_clip_outside_values_into_end_bins():
    column = _domain.numeric_column("w", 0.0, 10.0, 5)
    codes = _domain.encode_column(column, np.array([-3.0, 0.0, 1.9, 2.0, 10.0, 99.0]))
    np.testing.assert_array_equal(codes, [0, 0, 0, 1, 4, 4])


def test_decoded_numeric_values_stay_in_their_bin():
    column = _domain.numeric_column("w", 0.0, 10.0, 5)
    codes = np.array([0, 4, 2] * 100)
    values = _domain.decode_column(column, codes, np.random.default_rng(0))
    np.testing.assert_array_equal(_domain.encode_column(column, values), codes)


def test_domain_size_limit_message():
    columns = [_domain.declared_categories(i, 100) for i in range(4)]
    # Marginal workloads: only the 1-way tables (400 cells) must fit.
    assert _domain.domain_shape(columns, 400) == (100,) * 4
    with pytest.raises(ValueError, match="400 cells in all"):
        _domain.domain_shape(columns, 399)
    # Explicit queries: the whole 1e8-cell histogram must.
    with pytest.raises(ValueError, match="1e\\+08 cells.*explicit query matrix"):
        _domain.domain_shape(columns, 1e7, whole=True)
