"""The ``linear`` kind: TF-IDF character n-grams and position features, logistic regression on soft labels.

Turn-level scales, one model per scale (STC-3: nuggets, 4 customer types, 3 helpdesk types). Features of
a turn, when its task lets a model read the whole dialogue (:attr:`dialeval.tasks.Task.context`; a task read
in the turns so far, such as DBDC's breakdown, gets the two previous turns and the sender instead, see
``Linear._causal_features``):

- TF-IDF of the character n-grams of its text (``analyzer``, n = 1..``ngram_max``, at most
  ``max_features`` n-grams, sublinear tf, L2-normalised rows);
- the same vectoriser applied to the previous and to the next turn of the dialogue, two more blocks
  scaled by ``context_weight`` (an empty vector at the dialogue's ends);
- :func:`~dialeval.models.features.position_features`, standardised on the training turns.

Dialogue-level scales (quality), one model per scale (A, S, E). Features of a dialogue: TF-IDF character n-grams
of the whole dialogue (turns joined, each prefixed by ``C:`` or ``H:``), plus standardised aggregates of
the position features (the mean over turns, the last turn's, the numbers of customer and helpdesk
turns and the dialogue's length).

Soft labels: multinomial logistic regression fitted to the annotators' distributions, not to a majority
label. Each item becomes one row per class with ``sample_weight`` = the annotators' share of that class
(rows of weight 0 dropped); the weighted log-loss of those rows is the cross-entropy between the
annotator distribution and the prediction. Fitted with scikit-learn's ``LogisticRegression`` (lbfgs,
L2 penalty ``1/C``). A class no training item had gets a bias of -30, so its probability is the floor
of :func:`~dialeval.models.base.normalise_rows`.

Saving needs no pickle: each vectoriser is its n-grams (an array of strings, by column) and idf
weights; each regression its weights (float32) and biases. Predictions are computed from those arrays
only (a softmax), the same way right after fitting and after loading, so they are identical.

Defaults (``C = 8``, ``quality_C = 4``, ``max_iter = 100``) were chosen on the STC-3 training files only:
trained on folds 2-5 of the 5-fold split of :func:`~dialeval.models.cv.fold_of` and scored on fold 1,
C in {0.25, ..., 16}, for Chinese and English alike (larger C was better up to 4-8 on both; stopping
lbfgs at 100 iterations scored as well as 300 and fits three times faster).
"""

from __future__ import annotations

import re
import warnings
from typing import ClassVar

import numpy as np

from dialeval import progress as _progress
from dialeval.models.base import (
    Estimator,
    array_key,
    check_param,
    damaged,
    expect_array,
    normalise_rows,
    register,
)
from dialeval.models.data import TurnTable
from dialeval.models.features import position_features, sender_onehot
from dialeval.models.turndata import ScaleArrays


class _Sparse:
    """``scipy.sparse``, imported on first use: the CLI imports every model kind to list them, and this
    import alone would add a quarter of a second to every ``dialeval`` command."""

    def __getattr__(self, name: str):
        import scipy.sparse

        return getattr(scipy.sparse, name)


sp = _Sparse()

ANALYZERS = ("char_wb", "char")
_ABSENT = -30.0  # bias of a class never seen in training: exp(-30) is far below the floor of normalise_rows


def _clean(texts: list[str]) -> list[str]:
    # NUL cannot be stored in numpy's unicode arrays (trailing NULs are stripped): never let it be an n-gram.
    return [t.replace("\x00", " ") for t in texts]


class _Tfidf:
    """A TF-IDF vectoriser kept as arrays: ``terms`` (n-gram of each column) and ``idf``.

    Fitted with scikit-learn's ``TfidfVectorizer``. Applied (:meth:`transform`) from the arrays alone for n-grams
    of up to 3 characters (the default and the neural lexical part's): the same matrix to the last bit, without
    importing scikit-learn (most of a second on a cold ``dialeval predict``) and several times faster; longer
    n-grams go through scikit-learn's vectoriser.
    """

    def __init__(self, analyzer: str, ngram_max: int, terms: np.ndarray, idf: np.ndarray) -> None:
        self.analyzer, self.ngram_max = analyzer, ngram_max
        self.terms, self.idf = terms, np.asarray(idf, dtype=np.float64)
        self._keys: np.ndarray | None = None  # the terms' integer codes, sorted (:meth:`transform`)
        self._order: np.ndarray | None = None  # the column of each sorted code
        self._sklearn = None  # scikit-learn's vectoriser, for n-grams longer than _CODED

    @classmethod
    def fit(cls, texts: list[str], analyzer: str, ngram_max: int, max_features: int
            ) -> tuple[_Tfidf, sp.csr_matrix]:
        """The vectoriser fitted on ``texts``, and their TF-IDF rows (one pass over the texts)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        vec = TfidfVectorizer(analyzer=analyzer, ngram_range=(1, ngram_max), sublinear_tf=True,
                              max_features=max_features, dtype=np.float64)
        try:
            X = vec.fit_transform(_clean(texts)).tocsr()
        except ValueError:  # every text empty: no n-gram at all
            return cls(analyzer, ngram_max, np.array([], dtype="<U1"), np.zeros(0)), sp.csr_matrix((len(texts), 0))
        terms = np.array(vec.get_feature_names_out().tolist(), dtype=str)
        return cls(analyzer, ngram_max, terms, vec.idf_), X

    def transform(self, texts: list[str]) -> sp.csr_matrix:
        """``(len(texts), len(terms))`` TF-IDF rows: ``1 + log(count)`` of each known n-gram of a text, times its
        idf, each row divided by its Euclidean norm (a row with no known n-gram stays zero). The n-grams are
        scikit-learn's: the text lowercased; ``"char_wb"``: every 1..``ngram_max``-gram within each
        whitespace-separated word padded with a space on each side; ``"char"``: every 1..``ngram_max``-gram of the
        text with each run of whitespace cut to one space."""
        V = len(self.terms)
        if not V:
            return sp.csr_matrix((len(texts), 0))
        texts = _clean(texts)
        if self.ngram_max > _CODED:
            if self._sklearn is None:
                from sklearn.feature_extraction.text import TfidfVectorizer

                self._sklearn = TfidfVectorizer(analyzer=self.analyzer, ngram_range=(1, self.ngram_max),
                                                sublinear_tf=True, dtype=np.float64,
                                                vocabulary={t: i for i, t in enumerate(self.terms.tolist())})
                self._sklearn.idf_ = self.idf
            return self._sklearn.transform(texts).tocsr()
        if self._keys is None:
            keys = _gram_keys(self.terms.tolist())
            self._order = np.argsort(keys, kind="stable")
            self._keys = keys[self._order]
        # every text's n-grams as integer keys; (row, column) pairs of the known ones, counted
        lower = [t.lower() for t in texts]
        if self.analyzer == "char_wb":  # the padded words side by side: an n-gram across two holds two spaces
            lower = ["".join(f" {w} " for w in t.split()) for t in lower]
        else:
            lower = [_RUNS_OF_SPACE.sub(" ", t) for t in lower]
        # code points, lone surrogates included (JSON's "\\ud800" reads as one; scikit-learn takes it as any other)
        codes = np.frombuffer("".join(lower).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
        row = np.repeat(np.arange(len(texts)), [len(t) for t in lower])
        pairs = [np.zeros(0, dtype=np.int64)]  # (no text, or only blank ones: no n-gram at all)
        for n in range(1, self.ngram_max + 1):
            m = len(codes) - n + 1
            if m <= 0:
                break
            key = np.zeros(m, dtype=np.int64)
            ok = row[:m] == row[n - 1:]
            for k in range(n):
                key |= codes[k:k + m] << (_BITS * k)
                if self.analyzer == "char_wb" and k:
                    ok &= (codes[k - 1:k - 1 + m] != 32) | (codes[k:k + m] != 32)
            at = np.searchsorted(self._keys, key).clip(max=V - 1)
            ok &= self._keys[at] == key
            pairs.append(row[:m][ok] * V + self._order[at[ok]])
        cells, tf = np.unique(np.concatenate(pairs), return_counts=True)
        data = np.log(tf.astype(np.float64))
        data += 1.0
        indices = cells % V
        data *= self.idf[indices]
        indptr = np.searchsorted(cells // V, np.arange(len(texts) + 1))
        X = sp.csr_matrix((data, indices.astype(np.int32), indptr.astype(np.int32)), shape=(len(texts), V))
        # each row's squared norm summed in column order, as scikit-learn's loop sums it (a sparse product does)
        norm = np.sqrt(sp.csr_matrix((data * data, X.indices, X.indptr), shape=X.shape) @ np.ones(V))
        norm[norm == 0] = 1.0
        X.data /= np.repeat(norm, np.diff(indptr))
        return X


_CODED, _BITS = 3, 21
"""n-grams of up to ``_CODED`` characters are coded as integers, ``_BITS`` bits per character (every Unicode
code point), the first character lowest: three fit an int64, and no two n-grams share a code (NUL, the only code
point 0, is never in a text: :func:`_clean`)."""
_RUNS_OF_SPACE = re.compile(r"\s\s+")  # scikit-learn's: "char" n-grams see each run of whitespace as one space


def _gram_keys(grams: list[str]) -> np.ndarray:
    """The integer code of each n-gram; -1 (matching no text's n-gram) for one of no or over ``_CODED``
    characters."""
    key = np.zeros(len(grams), dtype=np.int64)
    for k in range(_CODED):
        key |= np.array([ord(g[k]) if len(g) > k else 0 for g in grams], dtype=np.int64) << (_BITS * k)
    key[[not 0 < len(g) <= _CODED for g in grams]] = -1
    return key


class _SoftLR:
    """Softmax regression kept as arrays: ``W`` (L × d, float32) and ``b`` (L, float64)."""

    def __init__(self, W: np.ndarray, b: np.ndarray) -> None:
        self.W, self.b = W, b

    @classmethod
    def fit(cls, X: sp.csr_matrix, P: np.ndarray, C: float, max_iter: int, seed: int) -> _SoftLR:
        """Fit on soft labels ``P`` (n × L): one row per (item, class) weighted by the class's share."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegression
        from threadpoolctl import threadpool_limits

        L = P.shape[1]
        W = np.zeros((L, X.shape[1]), dtype=np.float32)
        b = np.full(L, _ABSENT)
        items, labels = np.nonzero(P > 0)
        seen = np.unique(labels)
        if len(seen) < 2:  # one class only (or no data): predict it
            b[seen] = 0.0
            return cls(W, b)
        lr = LogisticRegression(C=C, max_iter=max_iter, random_state=seed)
        # One BLAS thread: the work is sparse products; more threads only contend on a small machine.
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter bounds the time on purpose
            lr.fit(X[items], labels, sample_weight=P[items, labels])
        classes = lr.classes_.astype(np.int64)
        if len(classes) == 2:  # sklearn keeps one weight vector for two classes: p(c1) = sigmoid(x w + b)
            W[classes[1]] = lr.coef_[0]
            b[classes] = (0.0, float(lr.intercept_[0]))
        else:
            W[classes] = lr.coef_
            b[classes] = lr.intercept_
        return cls(W, b)

    def predict(self, X: sp.csr_matrix) -> np.ndarray:
        z = np.asarray(X @ self.W.T.astype(np.float64)) + self.b
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return normalise_rows(e / e.sum(axis=1, keepdims=True))


class _Scaler:
    """Standardise dense columns with the training mean and standard deviation (1 where it is 0)."""

    def __init__(self, mean: np.ndarray, std: np.ndarray) -> None:
        self.mean, self.std = np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64)

    @classmethod
    def fit(cls, X: np.ndarray) -> _Scaler:
        X = np.asarray(X, dtype=np.float64)
        if not len(X):
            return cls(np.zeros(X.shape[1]), np.ones(X.shape[1]))
        std = X.std(axis=0)
        return cls(X.mean(axis=0), np.where(std > 1e-12, std, 1.0))

    def __call__(self, X: np.ndarray) -> sp.csr_matrix:
        return sp.csr_matrix((np.asarray(X, dtype=np.float64) - self.mean) / self.std)


def _neighbours(table: TurnTable, M: sp.csr_matrix) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Rows of ``M`` (one per turn) for the previous and the next turn of each turn (0 at the dialogue's ends)."""
    n = len(table.texts)
    padded = sp.vstack([M, sp.csr_matrix((1, M.shape[1]))], format="csr")
    t = np.arange(n)
    prev = np.where(table.is_first, n, t - 1)
    nxt = np.where(table.is_last, n, t + 1)
    return padded[prev], padded[nxt]


def dialogue_texts(table: TurnTable) -> list[str]:
    """Each dialogue's text: its turns joined by newlines, each prefixed by ``C:`` or ``H:``."""
    marks = np.where(table.is_customer, "C: ", "H: ")
    return ["\n".join(marks[t] + table.texts[t] for t in range(int(table.start[i]), int(table.start[i + 1])))
            for i in range(table.n_dialogues)]


def dialogue_aggregates(table: TurnTable) -> np.ndarray:
    """Per dialogue: mean position features over turns, the last turn's, log turns per sender, log length."""
    f = position_features(table).astype(np.float64)
    n = table.n_turns.astype(np.float64)
    mean = np.zeros((table.n_dialogues, f.shape[1]))
    np.add.at(mean, table.dialogue, f)
    mean /= np.maximum(n, 1)[:, None]
    last = f[table.start[1:] - 1] if table.n_dialogues else np.zeros((0, f.shape[1]))
    n_c = np.bincount(table.dialogue, weights=table.is_customer.astype(np.float64), minlength=table.n_dialogues)
    chars = np.bincount(table.dialogue, weights=np.fromiter(map(len, table.texts), dtype=np.float64,
                                                            count=len(table.texts)), minlength=table.n_dialogues)
    return np.column_stack([mean, last, np.log1p(n_c), np.log1p(n - n_c), np.log1p(chars)])


def _dense_turn_features(table: TurnTable, senders: tuple[str, ...]) -> np.ndarray:
    """Position features and a one-hot of the sender over ``senders`` (the training corpus's)."""
    return np.column_stack([position_features(table).astype(np.float64),
                            sender_onehot(table, senders).astype(np.float64)])


@register
class Linear(Estimator):
    """TF-IDF character n-grams + position features → logistic regression on the annotators' distributions.

    Parameters
    ----------
    C : float > 0, default 8.0
        Inverse L2 strength of the nugget models.
    quality_C : float > 0, default 4.0
        Inverse L2 strength of the A, S and E models.
    analyzer : {'char_wb', 'char'}, default 'char_wb'
        scikit-learn's character analyser (``char_wb`` keeps n-grams inside words, padded with spaces).
    ngram_max : int in 1..6, default 3
        Longest n-gram (the shortest is 1).
    max_features : int in 1..10**7, default 50000
        Most frequent n-grams kept by each vectoriser (turns; whole dialogues).
    context_weight : float >= 0, default 0.5
        Scale of the previous- and next-turn blocks of a turn's features (0 drops them).
    max_iter : int in 1..10**6, default 100
        lbfgs iterations per regression (at most: it also stops early, and bounds the time).

    Examples
    --------
    >>> import dialeval
    >>> t = lambda s, u: {"sender": s, "utterances": [u]}
    >>> c = dialeval.read_corpus([{"id": str(i), "turns": [t("customer", f"help me {i}"), t("helpdesk", "done")],
    ...     "annotations": [{"quality": {"A": i % 3 - 1, "S": 0, "E": 1}, "nugget": ["CNUG0", "HNUG*"]}]}
    ...     for i in range(6)])
    >>> p = Linear(seed=0).fit(c).predict(c)
    >>> p.customer.shape, bool(p.customer[:, 0].min() > 0.9)
    ((6, 4), True)
    """

    kind = "linear"
    description = "TF-IDF char n-grams (turn, neighbours, dialogue) + position features, soft-label logistic regression"
    defaults: ClassVar[dict] = {"C": 8.0, "quality_C": 4.0, "analyzer": "char_wb", "ngram_max": 3,
                                "max_features": 50000, "context_weight": 0.5, "max_iter": 100}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        p = self.params
        for name in ("C", "quality_C"):
            p[name] = check_param(self.kind, name, p[name], type_=float, lo=1e-9)
        p["analyzer"] = check_param(self.kind, "analyzer", p["analyzer"], type_=str, choices=ANALYZERS)
        p["ngram_max"] = check_param(self.kind, "ngram_max", p["ngram_max"], type_=int, lo=1, hi=6)
        p["max_features"] = check_param(self.kind, "max_features", p["max_features"], type_=int, lo=1, hi=10**7,
                                        note="n-grams kept by each vectoriser")
        p["context_weight"] = check_param(self.kind, "context_weight", p["context_weight"], type_=float, lo=0)
        p["max_iter"] = check_param(self.kind, "max_iter", p["max_iter"], type_=int, lo=1, hi=10**6)
        self.senders: tuple[str, ...] = ()
        """Turn-level scales: the senders of the training corpus (the one-hot sender features)."""
        self.turn_vec: _Tfidf | None = None
        self.turn_scaler: _Scaler | None = None
        self.dlg_vec: _Tfidf | None = None
        self.dlg_scaler: _Scaler | None = None
        self.heads: dict[str, _SoftLR] = {}

    # -- features ---------------------------------------------------------------------------------
    def _turn_features(self, table: TurnTable, M: sp.csr_matrix | None = None) -> sp.csr_matrix:
        """Turn rows: TF-IDF of the turn (``M`` when already computed), its neighbours', position features."""
        if M is None:
            M = self.turn_vec.transform(table.texts)
        w = self.params["context_weight"]
        blocks = [M]
        if w > 0:
            prev, nxt = _neighbours(table, M)
            blocks += [w * prev, w * nxt]
        blocks.append(self.turn_scaler(position_features(table)))
        return sp.hstack(blocks, format="csr")

    def _dialogue_features(self, table: TurnTable, M: sp.csr_matrix | None = None) -> sp.csr_matrix:
        if M is None:
            M = self.dlg_vec.transform(dialogue_texts(table))
        return sp.hstack([M, self.dlg_scaler(dialogue_aggregates(table))], format="csr")

    # -- Estimator ----------------------------------------------------------------------------------
    def _fit(self, table: TurnTable, y: ScaleArrays) -> None:
        """Dialogue-level scales on the dialogue features; turn-level scales on the turn features of the
        tasks' context (the neighbours on both sides, or the turns so far)."""
        p = self.params
        dlg = [n for n in y if self.learnt[n].level == "dialogue"]
        turn = [n for n in y if self.learnt[n].level != "dialogue"]
        past = self.context == "past"
        steps = (1 + len(dlg) if dlg else 0) + (1 + len(turn) if turn else 0)
        self.heads = {}
        with _progress.bar("linear: fitting", steps, progress=self.progress) as bar:
            if dlg:
                self.dlg_vec, M = _Tfidf.fit(dialogue_texts(table), p["analyzer"], p["ngram_max"], p["max_features"])
                self.dlg_scaler = _Scaler.fit(dialogue_aggregates(table))
                X = self._dialogue_features(table, M)
                bar.advance()
                for n in dlg:
                    self.heads[array_key(self.learnt[n])] = _SoftLR.fit(X[y[n].rows], y[n].probs, p["quality_C"],
                                                                        p["max_iter"], self.seed)
                    bar.advance()
            if turn:
                if past:
                    self.senders = tuple(sorted(set(table.senders)))
                self.turn_vec, M = _Tfidf.fit(table.texts, p["analyzer"], p["ngram_max"], p["max_features"])
                self.turn_scaler = _Scaler.fit(_dense_turn_features(table, self.senders) if past
                                               else position_features(table))
                X = self._causal_features(table, M) if past else self._turn_features(table, M)
                bar.advance()
                for n in turn:
                    self.heads[array_key(self.learnt[n])] = _SoftLR.fit(X[y[n].rows], y[n].probs, p["C"],
                                                                        p["max_iter"], self.seed)
                    bar.advance()

    def _predict(self, table: TurnTable, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        X = {}
        if any(self.learnt[n].level == "dialogue" for n in rows):
            X["dialogue"] = self._dialogue_features(table)
        if any(self.learnt[n].level != "dialogue" for n in rows):
            X["turn"] = self._causal_features(table) if self.context == "past" else self._turn_features(table)
        return {n: self.heads[array_key(self.learnt[n])].predict(
                    X["dialogue" if self.learnt[n].level == "dialogue" else "turn"][r]) for n, r in rows.items()}

    def _causal_features(self, table: TurnTable, M: sp.csr_matrix | None = None) -> sp.csr_matrix:
        """Turn rows: TF-IDF of the turn, of the previous turn (x ``context_weight``) and of the one before
        (x half of it), position features and the sender (one-hot over the training senders). Nothing from
        later turns: a turn is judged from what was said up to it."""
        if M is None:
            M = self.turn_vec.transform(table.texts)
        w = self.params["context_weight"]
        blocks = [M]
        if w > 0:
            n = len(table.texts)
            padded = sp.vstack([M, sp.csr_matrix((1, M.shape[1]))], format="csr")
            t = np.arange(n)
            prev1 = np.where(table.position >= 1, t - 1, n)
            prev2 = np.where(table.position >= 2, t - 2, n)
            blocks += [w * padded[prev1], (w / 2) * padded[prev2]]
        blocks.append(self.turn_scaler(_dense_turn_features(table, self.senders)))
        return sp.hstack(blocks, format="csr")

    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays: dict[str, np.ndarray] = {}
        for name, vec in (("turn", self.turn_vec), ("dialogue", self.dlg_vec)):
            if vec is not None:
                arrays |= {f"{name}_terms": vec.terms, f"{name}_idf": vec.idf}
        for name, sc in (("turn", self.turn_scaler), ("dialogue", self.dlg_scaler)):
            if sc is not None:
                arrays |= {f"{name}_mean": sc.mean, f"{name}_std": sc.std}
        for name, head in self.heads.items():
            arrays |= {f"{name}_W": head.W, f"{name}_b": head.b}
        return {"heads": sorted(self.heads), "senders": list(self.senders)}, arrays

    def _set_state(self, config: dict, arrays: dict[str, np.ndarray]) -> None:
        p = self.params
        vecs, scalers = {}, {}
        for name in ("turn", "dialogue"):
            vecs[name] = (_Tfidf(p["analyzer"], p["ngram_max"], arrays[f"{name}_terms"], arrays[f"{name}_idf"])
                          if f"{name}_terms" in arrays else None)
            scalers[name] = (_Scaler(arrays[f"{name}_mean"], arrays[f"{name}_std"])
                             if f"{name}_mean" in arrays else None)
        self.turn_vec, self.dlg_vec = vecs["turn"], vecs["dialogue"]
        self.turn_scaler, self.dlg_scaler = scalers["turn"], scalers["dialogue"]
        self.heads = {name: _SoftLR(arrays[f"{name}_W"], np.asarray(arrays[f"{name}_b"], dtype=np.float64))
                      for name in config.get("heads", [])}
        self.senders = tuple(config.get("senders", ()))
        self._check_arrays(arrays)

    def _check_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        """A :func:`~dialeval.models.base.damaged` error naming the first array whose shape does not agree with the
        others' and the learnt scales' (a head's weights span its features: the vectoriser's terms, x 3 for a turn
        with its neighbours, then the scaler's columns), or that holds a value that is not finite."""
        width, checked = {}, set()
        for name, vec, sc in (("turn", self.turn_vec, self.turn_scaler), ("dialogue", self.dlg_vec, self.dlg_scaler)):
            if (vec is None) != (sc is None):
                raise damaged(f"arrays {name}_terms and {name}_mean come together; arrays.npz has one of them only")
            if vec is None:
                continue
            V, D = len(arrays[f"{name}_terms"]), len(arrays[f"{name}_mean"])
            for key, shape in ((f"{name}_terms", (V,)), (f"{name}_idf", (V,)), (f"{name}_mean", (D,)),
                               (f"{name}_std", (D,))):
                expect_array(arrays, key, shape, "the other arrays")
                checked.add(key)
            width[name] = V * (3 if name == "turn" and self.params["context_weight"] > 0 else 1) + D
        for name, scale in self.learnt.items():
            key = array_key(scale)
            if key not in self.heads:
                raise damaged(f"model.json lists no head {key!r} for scale {name!r}")
            part = "dialogue" if scale.level == "dialogue" else "turn"
            if part not in width:
                raise damaged(f"arrays.npz has no {part}_terms, which the head {key!r} reads")
            L = len(scale.levels)
            for k, shape in ((f"{key}_W", (L, width[part])), (f"{key}_b", (L,))):
                expect_array(arrays, k, shape, f"the scale's {L} levels and the {part} features' {width[part]} columns")
                checked.add(k)
        for key, a in arrays.items():  # the arrays no shape is declared for: finite too
            if key not in checked and a.dtype.kind == "f" and not np.isfinite(a).all():
                raise damaged(f"array {key!r} holds values that are not finite numbers (NaN or infinite)")

