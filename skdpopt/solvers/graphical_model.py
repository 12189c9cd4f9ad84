"""A distribution over a finite product domain held as a graphical model.

The distribution is a product of one potential table per clique (a tuple
of column indices),

    p(x) = exp(sum_c theta_c(x_c)) / Z,

the exponential family whose sufficient statistics are the clique
marginals; this is the form multiplicative weights keeps when it is only
ever updated with marginal queries (Hardt, Ligett and McSherry 2012), and
the form Private-PGM estimates (McKenna, Sheldon and Miklau 2019).  Its
marginals are computed by sum-product message passing on a junction tree
of the cliques (Lauritzen and Spiegelhalter 1988; Koller and Friedman
2009, Chapter 10), in log space, and records are drawn by forward
sampling down the tree (independently, or systematically: rounded
counts per separator value).  Time and memory are set by the tree's clique
tables, never by the size of the whole domain.

Everything here is post-processing: it never sees data.
"""

import itertools
import math

import numpy as np


def _lse(values, axes):
    """log(sum(exp(values))) over ``axes`` (a tuple), without overflow."""
    if not axes:
        return values
    top = np.max(values, axis=axes, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    out = np.log(np.sum(np.exp(values - top), axis=axes, keepdims=True)) + top
    return np.squeeze(out, axis=axes)


def _expand(values, attrs, target):
    """View of a table over sorted ``attrs`` broadcastable to sorted
    ``target`` (a superset): both sorted, so axes keep their order."""
    present = set(attrs)
    shape = []
    it = iter(values.shape)
    for a in target:
        shape.append(next(it) if a in present else 1)
    return values.reshape(shape)


def _sum_out(values, attrs, keep):
    """Log-sum of a table over sorted ``attrs`` onto the sorted ``keep``."""
    keep = set(keep)
    axes = tuple(i for i, a in enumerate(attrs) if a not in keep)
    return _lse(values, axes)


def _cells(attrs, shape):
    return math.prod(shape[a] for a in attrs)


def _contract(operands, attrs, target):
    """Sum over every column not in ``target`` of the product of tables
    (each over its sorted ``attrs``), as one einsum contracted pairwise
    (numpy's greedy path: BLAS products, no table over the union)."""
    columns = sorted({a for at in attrs for a in at})
    letter = {a: chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26)
              for i, a in enumerate(columns)}
    spec = ",".join("".join(letter[a] for a in at) for at in attrs)
    out = "".join(letter[a] for a in target)
    if len(operands) == 1:
        return np.einsum(spec + "->" + out, operands[0])
    return np.einsum(spec + "->" + out, *operands, optimize="greedy")


# ----------------------------------------------------------------------
# Junction trees


def triangulate(cliques, shape):
    """Maximal cliques of a triangulation of the cliques' graph.

    Greedy elimination: at each step the column whose elimination clique
    has the fewest cells goes first (the min-weight heuristic; Koller and
    Friedman 2009, Section 9.4.3).  Every column is covered (a column in
    no clique forms a clique of its own).

    Parameters
    ----------
    cliques : iterable of tuple of int
    shape : tuple of int
        Codes per column.

    Returns
    -------
    list of tuple of int
        Maximal cliques, each sorted.
    """
    d = len(shape)
    log_size = [float(np.log(s)) for s in shape]
    neighbours = [set() for _ in range(d)]
    for clique in cliques:
        for a, b in itertools.combinations(clique, 2):
            neighbours[a].add(b)
            neighbours[b].add(a)
    # Log cells of the clique each column would form if eliminated now,
    # kept up to date as columns go and fill-in edges come.
    weight = [log_size[a] + sum(log_size[b] for b in neighbours[a])
              for a in range(d)]
    remaining = set(range(d))
    found = []
    while remaining:
        best = min(remaining, key=lambda a: (weight[a], a))
        around = neighbours[best]
        for a in around:
            neighbours[a].discard(best)
            weight[a] -= log_size[best]
        for a, b in itertools.combinations(sorted(around), 2):
            if b not in neighbours[a]:
                neighbours[a].add(b)
                neighbours[b].add(a)
                weight[a] += log_size[b]
                weight[b] += log_size[a]
        remaining.discard(best)
        found.append(frozenset(around) | {best})
    maximal = [c for c in found if not any(c < other for other in found)]
    return sorted({tuple(sorted(c)) for c in maximal})


class JunctionTree:
    """A junction tree over the maximal cliques of a triangulation.

    The tree is a maximum-weight spanning tree of the clique graph with
    separator sizes as weights, which has the running-intersection
    property; disconnected parts are joined by empty separators, so it is
    one tree.

    Parameters
    ----------
    cliques : iterable of tuple of int
        The model's cliques (any overlap).
    shape : tuple of int
        Codes per column.

    Attributes
    ----------
    nodes : list of tuple of int
        Attributes of each tree node (sorted).
    neighbours : list of list of int
    order : list of int
        Nodes in breadth-first order from node 0.
    parent : list of int
        Parent of each node in that order (-1 for node 0).
    """

    def __init__(self, cliques, shape):
        self.shape = tuple(shape)
        self.nodes = triangulate(cliques, shape)
        k = len(self.nodes)
        sets = [set(n) for n in self.nodes]
        pairs = sorted(
            ((len(sets[i] & sets[j]), i, j)
             for i in range(k) for j in range(i + 1, k)),
            key=lambda t: (-t[0], t[1], t[2]),
        )
        root = list(range(k))

        def find(i):
            while root[i] != i:
                root[i] = root[root[i]]
                i = root[i]
            return i

        self.neighbours = [[] for _ in range(k)]
        for _, i, j in pairs:
            ri, rj = find(i), find(j)
            if ri != rj:
                root[ri] = rj
                self.neighbours[i].append(j)
                self.neighbours[j].append(i)
        self.parent = [-1] * k
        self.order = [0]
        for u in self.order:
            for v in self.neighbours[u]:
                if v != self.parent[u]:
                    self.parent[v] = u
                    self.order.append(v)

    @property
    def cells(self):
        """Total cells of the node tables: the model's size."""
        return sum(_cells(n, self.shape) for n in self.nodes)

    def node_containing(self, attrs):
        """Smallest node holding every attribute in ``attrs``, or None."""
        attrs = set(attrs)
        best = None
        for i, node in enumerate(self.nodes):
            if attrs <= set(node) and (
                    best is None
                    or _cells(node, self.shape) < _cells(self.nodes[best], self.shape)):
                best = i
        return best

    def separator(self, i, j):
        return tuple(sorted(set(self.nodes[i]) & set(self.nodes[j])))


def model_cells(cliques, shape):
    """Cells of the junction tree of ``cliques``: what holding a model over
    them costs (a public function of the cliques and the domain)."""
    return JunctionTree(cliques, shape).cells


# ----------------------------------------------------------------------
# The model


class GraphicalModel:
    """A product of clique potentials with exact inference and sampling.

    Parameters
    ----------
    shape : tuple of int
        Codes per column.
    cliques : iterable of tuple of int, default=()
        Initial cliques, with zero (uniform) potentials.

    Attributes
    ----------
    potentials : dict
        Per clique (sorted tuple), its log-potential table (axes in the
        clique's order).
    tree : JunctionTree
    """

    def __init__(self, shape, cliques=()):
        self.shape = tuple(int(s) for s in shape)
        self.potentials = {}
        for clique in cliques:
            clique = tuple(sorted(clique))
            self.potentials.setdefault(clique, np.zeros(self._dims(clique)))
        self._build()

    def _dims(self, attrs):
        return tuple(self.shape[a] for a in attrs)

    def _build(self):
        self.tree = JunctionTree(list(self.potentials), self.shape)
        self._home = {c: self.tree.node_containing(c) for c in self.potentials}
        self._node_tables = [np.zeros(self._dims(n)) for n in self.tree.nodes]
        for clique, table in self.potentials.items():
            self._add_to_node(self._home[clique], clique, table)
        self._messages = {}
        self._beliefs = {}
        self._conditional_cache = None

    def _add_to_node(self, node, clique, table):
        attrs = self.tree.nodes[node]
        self._node_tables[node] = (self._node_tables[node]
                                   + _expand(table, clique, attrs))

    @property
    def cliques(self):
        return list(self.potentials)

    @property
    def cells(self):
        """Cells of the junction tree's tables."""
        return self.tree.cells

    def add_clique(self, clique):
        """Make ``clique`` a clique of the model (zero potential); the tree
        is rebuilt only if no node holds it already."""
        clique = tuple(sorted(clique))
        if clique in self.potentials:
            return
        self.potentials[clique] = np.zeros(self._dims(clique))
        home = self.tree.node_containing(clique)
        if home is None:
            self._build()
        else:
            self._home[clique] = home

    def potentials_copy(self):
        """The potentials, copied (to restore with :meth:`set_potentials`)."""
        return {c: t.copy() for c, t in self.potentials.items()}

    def set_potentials(self, potentials):
        """Replace every potential (cliques may differ: the tree is rebuilt)."""
        self.potentials = {tuple(sorted(c)): np.array(t, dtype=np.float64)
                           for c, t in potentials.items()}
        self._build()

    def rank(self, clique):
        """Breadth-first position of the node holding ``clique``."""
        node = self._home.get(tuple(sorted(clique)))
        if node is None:
            node = self.tree.node_containing(clique)
        return self.tree.order.index(node)

    def update(self, clique, delta):
        """Add ``delta`` (a log table over ``clique``) to its potential."""
        clique = tuple(sorted(clique))
        self.add_clique(clique)
        delta = np.asarray(delta, dtype=np.float64).reshape(self._dims(clique))
        self.potentials[clique] = self.potentials[clique] + delta
        node = self._home[clique]
        self._add_to_node(node, clique, delta)
        self._invalidate(node)
        self._beliefs = {}
        self._conditional_cache = None

    def _invalidate(self, node):
        """Drop the cached messages that flow away from ``node`` (they
        depend on its table); messages towards it stay valid."""
        stack = [(node, -1)]
        while stack:
            u, came = stack.pop()
            for v in self.tree.neighbours[u]:
                if v != came:
                    self._messages.pop((u, v), None)
                    stack.append((v, u))

    def _message(self, i, j):
        """Normalised log message from node i to node j (over their
        separator), computed on demand and cached."""
        key = (i, j)
        if key not in self._messages:
            # Iterative post-order so deep trees do not recurse.
            pending = [(i, j, False)]
            while pending:
                u, v, ready = pending.pop()
                if (u, v) in self._messages:
                    continue
                inputs = [k for k in self.tree.neighbours[u] if k != v]
                missing = [k for k in inputs if (k, u) not in self._messages]
                if not ready and missing:
                    pending.append((u, v, True))
                    pending.extend((k, u, False) for k in missing)
                    continue
                table = self._gather(u, inputs)
                attrs = self.tree.nodes[u]
                message = _sum_out(table, attrs, self.tree.separator(u, v))
                self._messages[(u, v)] = message - _lse(message,
                                                        tuple(range(message.ndim)))
        return self._messages[key]

    def _gather(self, u, inputs):
        attrs = self.tree.nodes[u]
        table = self._node_tables[u]
        for k in inputs:
            table = table + _expand(self._message(k, u), self.tree.separator(k, u),
                                    attrs)
        return table

    def log_belief(self, node):
        """Normalised log marginal over a node's attributes."""
        table = self._gather(node, self.tree.neighbours[node])
        return table - _lse(table, tuple(range(table.ndim)))

    def marginal(self, attrs):
        """The marginal over ``attrs`` (sorted), a table summing to 1."""
        attrs = tuple(sorted(attrs))
        node = self.tree.node_containing(attrs)
        if node is not None:
            # From the node's cached belief (probabilities): one sum.
            belief = self._belief(node)
            nodes = self.tree.nodes[node]
            table = belief.sum(axis=tuple(i for i, a in enumerate(nodes)
                                          if a not in attrs))
            return table / table.sum()
        table = self._spanning_marginal(attrs)
        return table / table.sum()

    def _belief(self, node):
        """A node's marginal as probabilities (cached until the next
        update)."""
        if node not in self._beliefs:
            self._beliefs[node] = np.exp(self.log_belief(node))
        return self._beliefs[node]

    def _conditionals(self):
        """Per node, its marginal and p(new attributes | separator with
        the parent) (the marginal at the root), as probabilities (cached
        until the next update): the product of the conditionals is the
        distribution."""
        if self._conditional_cache is None:
            tree = self.tree
            beliefs, tables = [], []
            for u in range(len(tree.nodes)):
                log_p = self.log_belief(u)
                beliefs.append(self._belief(u))
                if tree.parent[u] >= 0:
                    sep = tree.separator(u, tree.parent[u])
                    log_p = log_p - _expand(
                        _sum_out(log_p, tree.nodes[u], sep), sep, tree.nodes[u])
                tables.append(np.exp(log_p))
            self._conditional_cache = (beliefs, tables)
        return self._conditional_cache

    def _spanning_marginal(self, attrs):
        """Marginal over attributes no single node holds: variable
        elimination over the smallest rooted subtree that covers them,
        with the nodes' conditionals (the others sum to one)."""
        tree = self.tree
        beliefs, conditionals = self._conditionals()
        depth = {0: 0}
        for u in tree.order[1:]:
            depth[u] = depth[tree.parent[u]] + 1
        holders = []
        for a in attrs:
            # The holder of a nearest the root: a's nodes form a subtree.
            holders.append(min((u for u in range(len(tree.nodes))
                                if a in tree.nodes[u]), key=lambda u: depth[u]))
        keep = set(holders)
        # Climb to the lowest common ancestor of the holders.
        frontier = set(holders)
        while len(frontier) > 1:
            deepest = max(frontier, key=lambda u: depth[u])
            frontier.discard(deepest)
            frontier.add(tree.parent[deepest])
            keep.add(tree.parent[deepest])
        (top,) = frontier
        wanted = set(attrs)
        up = {}
        for u in reversed(tree.order):
            if u not in keep:
                continue
            # The top node's own marginal; below it, conditionals, first
            # summed over the columns that neither the answer nor a kept
            # neighbour needs (they occur in no other operand).
            children = [c for c in up if tree.parent[c] == u]
            needed = set(attrs)
            for c in children:
                needed |= set(up[c][1])
            if u != top:
                needed |= set(tree.separator(u, tree.parent[u]))
            table = beliefs[u] if u == top else conditionals[u]
            table = table.sum(axis=tuple(i for i, a in enumerate(tree.nodes[u])
                                         if a not in needed))
            mine = tuple(a for a in tree.nodes[u] if a in needed)
            operands, subscripts, present = [table], [mine], set(mine)
            for child in children:
                msg, msg_attrs = up.pop(child)
                operands.append(msg)
                subscripts.append(msg_attrs)
                present |= set(msg_attrs)
            if u == top:
                target = tuple(attrs)
            else:
                target = tuple(sorted(
                    (set(tree.separator(u, tree.parent[u])) | wanted) & present))
            up[u] = (_contract(operands, subscripts, target), target)
        return up[top][0]

    def dense(self):
        """The whole distribution as an array of ``shape`` (small domains
        only: it has as many cells as the domain)."""
        return self.marginal(tuple(range(len(self.shape)))).reshape(self.shape)

    def sample(self, n_samples, rng, method="iid"):
        """Draws from the model: each node's new attributes given its
        separator with its parent, down the tree.

        Parameters
        ----------
        n_samples : int
        rng : numpy.random.Generator
        method : {"iid", "systematic"}, default="iid"
            ``"iid"``: independent exact draws.  ``"systematic"``: the rows
            sharing a separator value get the new attributes by systematic
            sampling of their conditional (one uniform offset per group,
            rows in random order within the group), so every count of a
            node's table given its separator is its expectation rounded
            up or down; each row is still distributed as the model, the
            rows are not independent, and the counts vary less.

        Returns
        -------
        ndarray of shape (n_samples, n_columns), dtype intp
            Codes per column, rows in random order.
        """
        if method not in ("iid", "systematic"):
            raise ValueError(f"method must be 'iid' or 'systematic', got {method!r}.")
        tree = self.tree
        codes = np.zeros((n_samples, len(self.shape)), dtype=np.intp)
        for u in tree.order:
            attrs = tree.nodes[u]
            belief = self.log_belief(u)
            given = tree.separator(u, tree.parent[u]) if tree.parent[u] >= 0 else ()
            new = tuple(a for a in attrs if a not in given)
            if not new:
                continue
            axes = [attrs.index(a) for a in given] + [attrs.index(a) for a in new]
            table = np.transpose(belief, axes).reshape(
                _cells(given, self.shape), _cells(new, self.shape))
            # Conditional rows, each summing to 1 (the max cell is exp(0)).
            table = np.exp(table - _lse(table, (1,))[:, None])
            table /= table.sum(axis=1, keepdims=True)
            row = (np.ravel_multi_index(codes[:, list(given)].T, self._dims(given))
                   if given else np.zeros(n_samples, dtype=np.intp))
            if method == "iid":
                position = rng.random(n_samples)
            else:
                position = _systematic_positions(row, table.shape[0], rng)
            # One search in the cumulated rows: row r spans (r, r + 1].
            cumulative = np.cumsum(table, axis=1)
            cumulative[:, -1] = 1.0
            flat = (cumulative + np.arange(table.shape[0])[:, None]).ravel()
            pick = np.searchsorted(flat, row + position, side="right")
            pick = np.minimum(pick, flat.size - 1) - row * table.shape[1]
            pick = np.clip(pick, 0, table.shape[1] - 1)
            values = np.unravel_index(pick, self._dims(new))
            for a, v in zip(new, values, strict=True):
                codes[:, a] = v
        if method == "systematic":
            codes = codes[rng.permutation(n_samples)]
        return codes


def _systematic_positions(group, n_groups, rng):
    """Per row, a point in [0, 1) such that the m rows of each group get
    ``(k + U) / m``, k = 0 .. m - 1 in random order, U uniform per group:
    each point is uniform, and the group's draws from a cumulated
    distribution hit every cell its expected number of times rounded."""
    n = group.size
    order = rng.permutation(n)
    order = order[np.argsort(group[order], kind="stable")]
    sizes = np.bincount(group, minlength=n_groups)
    starts = np.cumsum(sizes) - sizes
    rank = np.empty(n, dtype=np.float64)
    rank[order] = np.arange(n) - starts[group[order]]
    offset = rng.random(n_groups)
    return (rank + offset[group]) / np.maximum(sizes[group], 1)
