"""Private hyperparameter search.

:class:`DPGridSearchCV` and :class:`DPRandomizedSearchCV` choose a
candidate's parameters with differential privacy: the choice, the chosen
model and its score are covered by the search's ``epsilon`` and
``delta``, which the search splits into a budget for each candidate.  The
derivation is in ``docs/privacy/model_selection.md``.
"""

from ._search import DPGridSearchCV, DPRandomizedSearchCV

__all__ = ["DPGridSearchCV", "DPRandomizedSearchCV"]
