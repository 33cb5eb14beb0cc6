"""Distribution measures: ``f(pred, gold)`` on two 1-D distributions (a float) or two 2-D arrays of rows
(a 1-D array). Every function here is generated from :mod:`dialeval.measures.registry`.

>>> from dialeval.measures import rsnod
>>> round(rsnod([0, 1, 0], [1, 0, 0], variant="2018"), 4)
0.9129
"""

from __future__ import annotations

from collections.abc import Callable

from dialeval.measures.registry import MEASURES, Measure, get, make_docstring, names, register


def _public(m: Measure) -> Callable:
    if m.has_variant:
        def f(pred, gold, variant="paper"):
            return m(pred, gold, variant=variant)
    else:
        def f(pred, gold):
            return m(pred, gold)
    f.__name__ = f.__qualname__ = m.name
    f.__module__ = __name__
    f.__doc__ = make_docstring(m)
    return f


nvd = _public(MEASURES["nvd"])
rnss = _public(MEASURES["rnss"])
jsd = _public(MEASURES["jsd"])
mse = _public(MEASURES["mse"])
nmd = _public(MEASURES["nmd"])
od = _public(MEASURES["od"])
nod = _public(MEASURES["nod"])
sod = _public(MEASURES["sod"])
snod = _public(MEASURES["snod"])
rnod = _public(MEASURES["rnod"])
rsnod = _public(MEASURES["rsnod"])

__all__ = ["MEASURES", "Measure", "get", "jsd", "mse", "names", "nmd", "nod", "nvd", "od", "register", "rnod",
           "rnss", "rsnod", "snod", "sod"]
