"""``dialeval gold``: write the gold distributions (annotators' labels per item) of any corpus."""

from __future__ import annotations

from pathlib import Path

import typer

from dialeval.cli._common import err, named_as_options, outputs_apart
from dialeval.cli._corpus_io import FROM_HELP, NAMES_HELP, InFormat, NamePolicy, load, print_json
from dialeval.corpus import merge_blocks
from dialeval.distributions import check_min_labels, gold_distributions, gold_document
from dialeval.errors import DialevalError
from dialeval.io.jsonarray import dump_json


def register(app: typer.Typer) -> None:
    @app.command("gold")
    def gold_cmd(
        path: Path = typer.Argument(..., help="An annotated corpus (file or folder), any supported format."),
        output: Path | None = typer.Option(None, "--out", "-o", help="Write the JSON here (atomically); "
                                           "stdout when left out."),
        scale: list[str] | None = typer.Option(None, "--scale", help="Only these scales (repeatable)."),
        blocks: bool = typer.Option(False, "--blocks", help="Merge consecutive turns of one sender into "
                                    "utterance blocks first."),
        min_labels: int = typer.Option(1, help="Leave out items with fewer labels than this."),
        from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP),  # type: ignore[valid-type]
        names: NamePolicy = typer.Option("error", "--wochat-names", help=NAMES_HELP),  # type: ignore[valid-type]
    ) -> None:
        """Write the gold distributions: per scale and item, the share of annotators who gave each label.

        The output is also a valid run for `dialeval evaluate` (a perfect one: every measure 0).
        """
        outputs_apart([path], {"--out": output})
        with named_as_options({"min_labels": "--min-labels"}):
            check_min_labels(min_labels)
        corpus = load(path, from_, names)
        if blocks:
            corpus = merge_blocks(corpus)
        dists = gold_distributions(corpus, list(scale) if scale else None, min_labels=min_labels)
        if not any(len(d) for d in dists.values()):
            if min_labels > 1 and gold_distributions(corpus, list(scale) if scale else None):
                raise DialevalError(f"no item has --min-labels {min_labels} labels or more", file=str(path))
            raise DialevalError("the corpus has no labels to build a gold from (is it a test file?)", file=str(path))
        doc = gold_document(corpus, dists)
        summary = ", ".join(f"{n}: {len(d)} {d.scale.level}-level item(s)" for n, d in dists.items()) or "no labels"
        if output is None:
            print_json(doc)
        else:
            dump_json(doc, output)
            err.print(f"wrote {output}: {summary}", markup=False)
