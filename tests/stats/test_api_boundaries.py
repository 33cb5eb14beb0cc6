"""Public functions a probe called with hostile arguments: each is refused at the boundary with a DialevalError
that says what was received, where a value was used as something else, a file was written where it should not
be, or a TypeError leaked from inside."""

from __future__ import annotations

import numpy as np
import pytest

from dialeval.errors import DialevalError


@pytest.mark.parametrize(("args", "message"), [
    (("mse", 0), r"L = 0 is not allowed; allowed are integers >= 2"),          # a ZeroDivisionError
    (("mse", "abc"), r"L = 'abc' is not allowed"),                              # a TypeError
    (("mse", -1), r"L = -1 is not allowed"),                                    # returned -2.0
    (("nmd", 3, "bogus"), r"variant 'bogus' is not allowed"),                   # returned 1.0
])
def test_worst_checks_the_bins_and_the_variant_for_every_measure(args, message):
    from dialeval.scoring.engine import worst

    with pytest.raises(DialevalError, match=message):
        worst(*args)


def test_measure_names_refuse_an_unknown_scale():
    from dialeval.measures import names

    with pytest.raises(DialevalError, match="scale 'abc' is not allowed; allowed are ordinal, nominal"):
        names("abc")   # it returned []


def test_run_names_and_notes_are_lists_not_strings():
    """'abc' named three runs a, b and c; None was a TypeError."""
    from dialeval.stats import compare_measures, compare_runs_matrix

    X = np.random.default_rng(0).random((10, 3))
    for runs in ("abc", None, 5):
        with pytest.raises(DialevalError, match="runs must be a list of texts"):
            compare_runs_matrix(X, runs, B=50)
    with pytest.raises(DialevalError, match="notes must be a list of texts; received 'abc'"):
        compare_measures({"m": X}, ["a", "b", "c"], B=50, notes="abc")


@pytest.mark.parametrize("stem", ["/tmp/elsewhere", "a/b", "..", "", None])
def test_a_report_stem_is_a_plain_file_name(stem, tmp_path):
    """A stem with folders wrote outside out_dir (stem='/tmp/x' wrote /tmp/x.md)."""
    from dialeval.report import plot_means, write_report
    from dialeval.stats import compare_measures

    c = compare_measures({"quality.nmd.A": np.random.default_rng(0).random((10, 3))}, ["a", "b", "c"], B=50)
    for write in (lambda: write_report(c, "md", tmp_path, stem=stem), lambda: plot_means(c, tmp_path, stem=stem)):
        with pytest.raises(DialevalError, match="allowed is a plain file name without folders"):
            write()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("x", [np.array([1 + 1j, 2, 3]), np.array([True, False, True]), [True, 1.0, 2.0]])
def test_booleans_and_complex_numbers_are_refused_as_the_measures_refuse_them(x):
    """bootstrap_ci dropped the imaginary part (mean 2.0, a ComplexWarning) and took booleans as 0/1."""
    from dialeval.stats import bootstrap_ci

    with pytest.raises(DialevalError, match="expected real numbers"):
        bootstrap_ci(x)


def test_the_exact_randomisation_test_checks_B_and_seed_too():
    from dialeval.stats import paired_randomization_test

    with pytest.raises(DialevalError, match="B = 'abc' is not allowed"):
        paired_randomization_test([.1, .5, .3], [.2, .4, .1], B="abc")
    with pytest.raises(DialevalError, match="seed 'x' is not allowed"):
        paired_randomization_test([.1, .5, .3], [.2, .4, .1], seed="x")


@pytest.mark.parametrize(("probs", "threshold", "message"), [
    (None, 0.0, r"expected n x 3 distributions \(O, T, X\)"),           # an IndexError
    ([[5.0, -3.0, 0.0]], 0.0, "negative value"),                          # labelled O
    ([[0.2, 0.4, 0.4]], float("nan"), "threshold nan is not allowed"),    # labelled O
])
def test_breakdown_labels_check_their_distributions(probs, threshold, message):
    from dialeval.breakdown import lenient_breakdown, majority_labels

    for f in (majority_labels, lenient_breakdown):
        with pytest.raises(DialevalError, match=message):
            f(np.array(probs, dtype=float) if probs is not None else None, threshold)


@pytest.mark.parametrize("out", [True, {"a": 1}, 3.5, ""])
def test_predict_writes_only_to_a_path(out, tmp_path, monkeypatch):
    """out=True wrote a file named 'True'."""
    from dialeval.cli.demo import demo_dir
    from dialeval.models import predict

    monkeypatch.chdir(tmp_path)
    with pytest.raises(DialevalError, match="out must be the path of a file to write"):
        predict(str(demo_dir() / "gold.json"), model="prior-does-not-matter", out=out)
    assert list(tmp_path.iterdir()) == []


def test_functions_of_a_corpus_refuse_anything_else():
    """None or a path gave an AttributeError ("'NoneType' object has no attribute 'scales'")."""
    from dialeval.agreement import scale_agreement
    from dialeval.distributions import gold_distributions, label_counts
    from dialeval.metaeval import dimension_means, turn_scale_scores

    for call in (lambda: gold_distributions(None), lambda: label_counts(None, "A"), lambda: dimension_means(None),
                 lambda: turn_scale_scores(None, "x"), lambda: scale_agreement(None, "A")):
        with pytest.raises(DialevalError, match=r"corpus must be a dialeval\.Corpus; received None"):
            call()
    with pytest.raises(DialevalError, match=r"read it first with dialeval\.read_corpus"):
        gold_distributions("gold.json")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"auto": "abc", "human": {}}, "auto must be a mapping of dialogue ids to numbers; received 'abc'"),
    ({"auto": {"a": 1.0}, "human": None}, "human must be a mapping"),
    ({"auto": {"a": 1.0}, "human": {"x": {"a": 1.0}}, "systems": "abc"}, "systems must be a mapping"),
    ({"auto": {"a": 1.0}, "human": {"x": {"a": 1.0}}, "levels": None}, "levels must be a non-empty list"),
    ({"auto": {"a": 1.0}, "human": {"x": {"a": 1.0}}, "methods": ()}, "methods must be a non-empty list"),
])
def test_correlate_with_humans_checks_its_mappings(kwargs, message):
    """'abc' was a TypeError (string indices), None an AttributeError; no levels returned an empty table."""
    from dialeval.metaeval import correlate_with_humans

    with pytest.raises(DialevalError, match=message):
        correlate_with_humans(**kwargs)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: __import__("dialeval.agreement", fromlist=["x"]).krippendorff_alpha("abc"),
     r"counts: expected a units x levels table of label counts, received 'abc'"),      # a ValueError
    (lambda: __import__("dialeval.agreement", fromlist=["x"]).krippendorff_alpha([[1, 2], [3]]),
     r"counts: expected a units x levels table"),                                       # ragged: a ValueError
    (lambda: __import__("dialeval.agreement", fromlist=["x"]).krippendorff_alpha([[1j, 1]]),
     r"counts: expected a units x levels table"),                                       # a TypeError
    (lambda: __import__("dialeval.stats.comparison", fromlist=["x"]).not_different_groups(np.eye(2), None, 0.05),
     r"order None is not allowed"),                                                    # a TypeError
    (lambda: __import__("dialeval.stats.comparison", fromlist=["x"]).not_different_groups(
        [["a", "b"], ["c", "d"]], [0, 1], 0.05), r"pvalues: expected a square"),       # a ValueError
    (lambda: __import__("dialeval.stats.kendall", fromlist=["x"]).kendall_b([1, 2, np.nan], [1, 2, 3]),
     r"finite numbers"),                                                               # NaN went through
    (lambda: __import__("dialeval.report.tables", fromlist=["x"]).report_text(None, "json"),
     r"the comparison must be a dialeval.stats.comparison.Comparison; received None"),  # an AttributeError
    (lambda: __import__("dialeval.report.tables", fromlist=["x"]).get_format(["json"]),
     r"report format \['json'\] is not allowed"),                                      # unhashable: a TypeError
    (lambda: __import__("dialeval.report.runs", fromlist=["x"]).compare_scored(None),
     r"matrix must be a dialeval.report.runs.RunMatrix; received None"),               # an AttributeError
    (lambda: __import__("dialeval.models", fromlist=["x"]).run_records(None, None),
     r"corpus must be a dialeval.Corpus; received None"),                              # an AttributeError
])
def test_more_public_functions_refuse_what_they_cannot_use(call, message):
    with pytest.raises(DialevalError, match=message):
        call()


def test_gold_document_and_run_records_check_their_other_argument(tmp_path):
    from dialeval.corpus import Corpus
    from dialeval.distributions import gold_document
    from dialeval.models import run_records

    corpus = Corpus(dialogues=[], scales={}, source="x", format="stc3")
    with pytest.raises(DialevalError, match=r"dists None are not allowed; allowed is a dict of scale name"):
        gold_document(corpus, None)
    with pytest.raises(DialevalError, match=r"est must be a dialeval.models.base.Estimator; received 'm'"):
        run_records(corpus, "m")


@pytest.mark.parametrize("call", [
    lambda arr: __import__("dialeval.agreement", fromlist=["x"]).krippendorff_alpha([[1, 1], [2, 0]], kind=arr),
    lambda arr: __import__("dialeval.stats", fromlist=["x"]).anova2(np.eye(3) + 1, on_zero_error=arr),
    lambda arr: __import__("dialeval.measures", fromlist=["x"]).rsnod([[.5, .5]], [[.5, .5]], variant=arr),
    lambda arr: __import__("dialeval.models.base", fromlist=["x"]).kind_class(arr),
])
def test_an_array_given_for_an_option_is_refused_not_an_ambiguous_truth_value(call):
    with pytest.raises(DialevalError, match="allowed are"):
        call(np.array(["nominal", "ordinal"]))

