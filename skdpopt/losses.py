"""Losses of linear models as functions of the prediction, with their constants.

Each loss gives its value and its derivative with respect to the prediction
``p = <w, x> + b``; for a linear model the example's gradient is then
``dloss(p, y) * (x, 1)``.  ``lipschitz`` bounds ``|dloss|`` (``inf`` when the
loss has no such bound) and ``smoothness`` bounds its second derivative.
Classification losses take labels in {-1, +1}; those with a probability
link (``probability``) also give the best constant score for a share of
positives (``constant``), which starts and calibrates an intercept.
"""

from dataclasses import dataclass

import numpy as np
from scipy.special import expit


@dataclass(frozen=True)
class SquaredError:
    """``(p - y)^2 / 2``."""

    lipschitz = np.inf
    smoothness = 1.0

    def value(self, p, y):
        return 0.5 * (p - y) ** 2

    def derivative(self, p, y):
        return p - y


@dataclass(frozen=True)
class Huber:
    """Squared error within ``epsilon`` of the target, linear beyond."""

    epsilon: float = 0.1
    smoothness = 1.0

    @property
    def lipschitz(self):
        return self.epsilon

    def value(self, p, y):
        r = np.abs(p - y)
        return np.where(r <= self.epsilon, 0.5 * r**2,
                        self.epsilon * (r - 0.5 * self.epsilon))

    def derivative(self, p, y):
        return np.clip(p - y, -self.epsilon, self.epsilon)


@dataclass(frozen=True)
class EpsilonInsensitive:
    """``max(0, |p - y| - epsilon)``."""

    epsilon: float = 0.1
    lipschitz = 1.0
    smoothness = np.inf

    def value(self, p, y):
        return np.maximum(np.abs(p - y) - self.epsilon, 0.0)

    def derivative(self, p, y):
        r = p - y
        return np.sign(r) * (np.abs(r) > self.epsilon)


@dataclass(frozen=True)
class LogLoss:
    """``log(1 + exp(-y p))``."""

    lipschitz = 1.0
    smoothness = 0.25

    def value(self, p, y):
        return np.logaddexp(0.0, -y * p)

    def derivative(self, p, y):
        return -y * expit(-y * p)

    def probability(self, p):
        """Probability of the positive class at score p."""
        return expit(p)

    def constant(self, share):
        """The score minimising the mean loss when ``share`` of rows are
        positive: the log-odds."""
        return float(np.log(share / (1.0 - share)))


@dataclass(frozen=True)
class Hinge:
    """``max(0, 1 - y p)``."""

    lipschitz = 1.0
    smoothness = np.inf

    def value(self, p, y):
        return np.maximum(0.0, 1.0 - y * p)

    def derivative(self, p, y):
        return -y * (y * p < 1.0)

    def constant(self, share):
        """The score minimising the mean loss when ``share`` of rows are
        positive: +1 or -1 for the majority (the mean loss is linear in
        between)."""
        return 1.0 if share > 0.5 else -1.0 if share < 0.5 else 0.0


@dataclass(frozen=True)
class ModifiedHuber:
    """Quadratically smoothed hinge: ``max(0, 1 - yp)^2`` for ``yp >= -1``,
    ``-4 yp`` below."""

    lipschitz = 4.0
    smoothness = 2.0

    def value(self, p, y):
        z = y * p
        return np.where(z >= -1.0, np.maximum(0.0, 1.0 - z) ** 2, -4.0 * z)

    def derivative(self, p, y):
        z = y * p
        return y * np.where(z >= -1.0, -2.0 * np.maximum(0.0, 1.0 - z), -4.0)

    def probability(self, p):
        """Probability of the positive class at score p, as scikit-learn's
        SGDClassifier: ``(clip(p, -1, 1) + 1) / 2``."""
        return (np.clip(p, -1.0, 1.0) + 1.0) / 2.0

    def constant(self, share):
        """The score minimising the mean loss when ``share`` of rows are
        positive: ``2 share - 1``."""
        return 2.0 * share - 1.0


@dataclass(frozen=True)
class ClassWeighted:
    """A classification loss with the positive and the negative rows
    weighted (``class_weight``): the weight multiplies the loss, its
    derivative and its constants.

    Parameters
    ----------
    loss : object
        A classification loss.
    positive, negative : float
        Weights of the rows labelled +1 and -1.
    """

    loss: object
    positive: float = 1.0
    negative: float = 1.0

    @property
    def lipschitz(self):
        return self.loss.lipschitz * max(self.positive, self.negative)

    @property
    def smoothness(self):
        return self.loss.smoothness * max(self.positive, self.negative)

    def _weights(self, y):
        return np.where(y > 0, self.positive, self.negative)

    def value(self, p, y):
        return self._weights(y) * self.loss.value(p, y)

    def derivative(self, p, y):
        return self._weights(y) * self.loss.derivative(p, y)


REGRESSION_LOSSES = {
    "squared_error": SquaredError,
    "huber": Huber,
    "epsilon_insensitive": EpsilonInsensitive,
}
CLASSIFICATION_LOSSES = {
    "log_loss": LogLoss,
    "hinge": Hinge,
    "modified_huber": ModifiedHuber,
}
