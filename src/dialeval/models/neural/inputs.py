"""The inputs of the neural networks: turn vectors' parts built from the texts (utterance means, the lexical
part, context similarities) and the arrays the networks read (padded, ragged, chunked; padded targets)."""

from __future__ import annotations

import numpy as np

from dialeval.models import encoders
from dialeval.models.base import damaged, expect_array
from dialeval.models.data import TurnTable
from dialeval.models.turndata import ScaleArrays


def padded(table: TurnTable, feats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(n, T, D)`` turn features padded with zeros and the ``(n, T)`` mask of real turns."""
    n, T = table.n_dialogues, int(table.n_turns.max())
    X = np.zeros((n, T, feats.shape[1]), dtype=np.float32)
    X[table.dialogue, table.position] = feats
    mask = np.zeros((n, T), dtype=bool)
    mask[table.dialogue, table.position] = True
    return X, mask


def ragged(table: TurnTable, feats: np.ndarray) -> dict[str, np.ndarray]:
    """Training inputs without padding: the turns' features ``F`` (float32, flat turn rows), each dialogue's
    first row ``start``, its number of turns ``len`` and the ``(n, T)`` mask of real turns. A batch is padded as
    it is drawn (:func:`.training.batch_X`): one dialogue of 630 turns (DSTC9 has one) no longer pads every other."""
    mask = np.zeros((table.n_dialogues, int(table.n_turns.max())), dtype=bool)
    mask[table.dialogue, table.position] = True
    return {"F": feats.astype(np.float32), "start": table.start[:-1].astype(np.int64),
            "len": table.n_turns.astype(np.int64), "mask": mask}


def padded_chunks(table: TurnTable, feats: np.ndarray, size: int = 128):
    """Prediction's inputs chunk by chunk: ``(dialogues, turns, X, mask)`` for ``size`` dialogues of similar
    length at a time (little padding, and never the whole table padded to its longest dialogue): their table
    rows, their flat turn rows, their padded features in float64 (BLAS rounding no longer shows in the
    probabilities) and the mask of real turns."""
    order = np.argsort(table.n_turns, kind="stable")
    for s in range(0, len(order), size):
        chunk = order[s:s + size]
        turns = table.turn_rows(chunk)
        X, mask = padded(table.take(chunk), feats[turns])
        yield chunk, turns, X.astype(np.float64), mask


def turn_targets(table: TurnTable, shape: tuple[int, int], y: ScaleArrays, names: list[str]) -> dict[str, np.ndarray]:
    """Padded targets of turn-level scales: ``Y/<scale>`` (n, T, L) float32 and the mask ``m/<scale>`` (n, T)."""
    data = {}
    for name in names:
        rows, probs = y[name].rows, y[name].probs
        Y = np.zeros((*shape, probs.shape[1]), dtype=np.float32)
        m = np.zeros(shape, dtype=bool)
        Y[table.dialogue[rows], table.position[rows]] = probs
        m[table.dialogue[rows], table.position[rows]] = True
        data[f"Y/{name}"], data[f"m/{name}"] = Y, m
    return data


LEXICAL = {"analyzer": "char_wb", "ngram_max": 3, "max_features": 20000}
"""The TF-IDF of the lexical part of a turn's vector (:class:`Lexical`): character 1-3-grams within word
boundaries (a Chinese turn's characters and their pairs and triples), the 20,000 most frequent."""


class Lexical:
    """A turn's lexical vector: its TF-IDF (:data:`LEXICAL`, sublinear tf) projected on the ``k`` first right
    singular vectors of the training turns' TF-IDF matrix (truncated SVD), each dimension divided by its
    standard deviation over the training turns. The singular vectors are kept at float16 precision, as saved,
    from the start: a loaded model computes exactly what the fitted one did.

    Why: the sentence encoder maps a turn to meaning; which words and characters a customer or an agent uses
    (a model name, an error code, "thanks") is information it blurs. In 5-fold CV on STC-3 it lowered every
    DQ and ND figure of both files, the Chinese file's most (NMD A 0.0777 to 0.0730, JSD 0.0221 to 0.0203;
    the shipped model card has the table).
    """

    def __init__(self, tfidf, components: np.ndarray, std: np.ndarray) -> None:
        self.tfidf, self.components, self.std = tfidf, components, std

    @classmethod
    def fit(cls, texts: list[str], k: int, seed: int) -> Lexical | None:
        """Fitted on the training turns; None when they have too few distinct n-grams for one dimension."""
        from sklearn.decomposition import TruncatedSVD

        from dialeval.models.linear import _Tfidf

        tfidf, M = _Tfidf.fit(texts, LEXICAL["analyzer"], LEXICAL["ngram_max"], LEXICAL["max_features"])
        k = min(k, M.shape[1] - 1, M.shape[0] - 1)
        if k < 1:
            return None
        svd = TruncatedSVD(n_components=k, random_state=seed).fit(M)
        components = svd.components_.astype(np.float16).astype(np.float64)
        Z = np.asarray(M @ components.T)
        return cls(tfidf, components, Z.std(axis=0) + 1e-6)

    def transform(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), k)`` float32 lexical vectors."""
        return (np.asarray(self.tfidf.transform(texts) @ self.components.T) / self.std).astype(np.float32)

    def config(self) -> dict:
        return {"dims": len(self.components), **LEXICAL}

    def arrays(self) -> dict[str, np.ndarray]:
        return {"terms": self.tfidf.terms, "idf": self.tfidf.idf, "components": self.components.astype(np.float16),
                "std": self.std}

    @classmethod
    def load(cls, config: dict, arrays: dict[str, np.ndarray]) -> Lexical:
        """What :meth:`config` and :meth:`arrays` saved (their names without ``lexical/``); a
        :func:`~dialeval.models.base.damaged` error naming the array when one is missing, of another shape than
        the configuration's ``dims`` and the other arrays imply, or not finite."""
        from dialeval.models.linear import _Tfidf

        k = int(config["dims"])
        V = len(arrays["terms"]) if "terms" in arrays else 0
        for name, shape in (("terms", (V,)), ("idf", (V,)), ("components", (k, V)), ("std", (k,))):
            expect_array(arrays, name, shape, f"model.json's lexical dims = {k} and the {V} terms of 'lexical/terms'",
                         shown=f"lexical/{name}", kind=None if name == "terms" else "f")
        if not V:
            raise damaged("array 'lexical/terms' holds no term; the lexical part needs at least one")
        tfidf = _Tfidf(config["analyzer"], int(config["ngram_max"]), arrays["terms"], arrays["idf"])
        return cls(tfidf, arrays["components"].astype(np.float64), np.asarray(arrays["std"], dtype=np.float64))


def utterance_means(texts: list[str], emb: np.ndarray, progress: bool | None = None) -> np.ndarray:
    """Per turn, the L2-normalised mean of its utterances' embeddings (a turn's text joins its utterances with
    newlines); a one-utterance turn keeps ``emb``, its own embedding, and only the others' utterances are
    embedded."""
    out = emb.copy()
    parts = [[u for u in t.split("\n") if u.strip()] for t in texts]
    multi = [i for i, us in enumerate(parts) if len(us) > 1]
    if not multi:
        return out
    flat = encoders.embed([u for i in multi for u in parts[i]], progress=progress)
    owner = np.repeat(np.arange(len(multi)), [len(parts[i]) for i in multi])
    sums = np.zeros((len(multi), emb.shape[1]), dtype=np.float64)
    np.add.at(sums, owner, flat)
    out[multi] = (sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)).astype(out.dtype)
    return out


SIMILARITY_FEATURES = ("sim_previous", "sim_same_sender_max", "repeats_same_sender")


def context_similarities(table: TurnTable, emb: np.ndarray) -> np.ndarray:
    """Per turn: cosine with the previous turn's embedding, the largest cosine with an earlier turn of the
    same sender, and 1 when its text repeats an earlier turn of the same sender word for word (0 where
    there is no such turn). Relevance to what was just said and repetition: what breakdowns look like."""
    out = np.zeros((len(table.texts), len(SIMILARITY_FEATURES)), dtype=np.float32)
    who = np.asarray(table.senders, dtype=object)
    for i in range(table.n_dialogues):
        a, b = int(table.start[i]), int(table.start[i + 1])
        E = emb[a:b].astype(np.float64)
        S = E @ E.T
        for k in range(1, b - a):
            out[a + k, 0] = S[k, k - 1]
            same = np.flatnonzero(who[a:a + k] == who[a + k])
            if len(same):
                out[a + k, 1] = S[k, same].max()
                out[a + k, 2] = float(any(table.texts[a + j].strip() == table.texts[a + k].strip() for j in same))
    return out
