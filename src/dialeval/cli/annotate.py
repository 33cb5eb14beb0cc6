"""``dialeval admin create-annotation / annotation-status / exclude-annotator / export-annotations``:
annotation projects (COLLECT.md, WOCHAT task 2). ``dialeval admin invite NAME`` makes their codes too.

The commands join the ``admin`` group (they work on the service's database directly, like the others there).
"""

from __future__ import annotations

from pathlib import Path

import typer

from dialeval.cli._common import choice_enum, err, out, refuse_existing_file, warn
from dialeval.cli._corpus_io import FROM_HELP, SENDERS_EXAMPLE, InFormat, load, parse_pairs
from dialeval.cli.admin import DbOption, _db, _service_call, command
from dialeval.errors import DialevalError
from dialeval.io.formats import writable
from dialeval.service.annotation.assignment import DEFAULT_TIMEOUT
from dialeval.service.annotation.schemes import SCHEMES
from dialeval.service.config import utcnow

SchemeChoice = choice_enum("SchemeChoice", list(SCHEMES))
ExportTo = choice_enum("ExportTo", writable())
StatusFormat = choice_enum("StatusFormat", ["table", "json"])
SCHEME_HELP = "What annotators label: " + "; ".join(f"{s.name}: {s.title}" for s in SCHEMES.values()) + "."


@command("create-annotation")
def create_annotation_cmd(
    name: str = typer.Argument(..., help="Project name (A-Z a-z 0-9 . _ -), used in URLs."),
    corpus: Path | None = typer.Option(None, "--corpus", help="A corpus file or folder any dialeval command "
                                       "reads (STC-3, WOCHAT, DBDC, ConTurE, DSTC9)."),
    collection: str | None = typer.Option(None, "--collection", help="Or the ended chats of a chat collection."),
    scheme: SchemeChoice = typer.Option(..., help=SCHEME_HELP),  # type: ignore[valid-type]
    overlap: int = typer.Option(..., help="k: how many different annotators finish each item (1-1000)."),
    guidelines: Path | None = typer.Option(None, help="Guidelines shown to annotators (Markdown file)."),
    hide_speakers: bool = typer.Option(False, "--hide-speakers", help="Show speakers as 'Speaker 1/2' and hide "
                                       "dialogue ids (WOCHAT: the ISMACHINE tag is offered)."),
    timeout: str = typer.Option(DEFAULT_TIMEOUT, "--assignment-timeout", help="An item with no label saved for "
                                "this long goes back to the pool (e.g. 30m, 1h, 90s)."),
    seed: int | None = typer.Option(None, help="Seed of the random order among equally filled items (default: "
                                    "drawn, then stored)."),
    from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP),  # type: ignore[valid-type]
    database_url_: str | None = DbOption,
) -> None:
    """Create an annotation project; then make codes with `dialeval admin invite NAME --count N`."""
    from dialeval.service.annotation import projects

    if (corpus is None) == (collection is None):
        raise DialevalError("give exactly one of --corpus PATH or --collection NAME")
    text = ""  # read before any work: a wrong path costs nothing
    if guidelines is not None:
        try:
            text = guidelines.read_text(encoding="utf-8")
        except OSError as e:
            why = "it is a folder" if guidelines.is_dir() else (e.strerror or type(e).__name__).lower()
            raise DialevalError(f"--guidelines {guidelines}: cannot read it ({why}); give a Markdown file") from None
        except UnicodeDecodeError as e:
            raise DialevalError(f"--guidelines {guidelines}: not UTF-8 text (byte {e.start}: {e.reason}); save it "
                                "as UTF-8") from None
    db = _db(database_url_)
    if collection is not None:
        from dialeval.service.collection.export import collection_corpus
        data = _service_call(collection_corpus, db, collection)
        source = f"collection {collection}"
    else:
        data = load(corpus, from_)
        source = str(corpus)
    p = _service_call(projects.create_project, db, name, data, scheme.value, overlap, utcnow(), guidelines=text,
                      hide_speakers=hide_speakers, timeout=timeout, seed=seed, source=source)
    if note := projects.not_carried_note(p, source):
        warn(note)
    left_out = p.meta.get("left_out", [])
    if left_out:
        warn(f"{len(left_out)} dialogue(s) have nothing to label with scheme {p.scheme} and were left out (e.g. "
             f"{left_out[0]}: no turn of the senders it labels)")
    err.print(f"annotation project {p.name}: {p.meta['dialogues']} items from {source}, scheme {p.scheme}, "
              f"k = {p.overlap}; "
              f"annotators join at /annotate/{p.name} with a code from: dialeval admin invite {p.name} --count N",
              markup=False)


@command("annotation-status")
def annotation_status_cmd(name: str = typer.Argument(...),
                          format_: StatusFormat = typer.Option("table", "--format",  # type: ignore[valid-type]
                                                               help="table (text) or json."),
                          database_url_: str | None = DbOption) -> None:
    """Progress, time per item, Krippendorff's alpha per scale so far, each annotator's agreement with the rest."""
    from dialeval.service.annotation.status import annotation_status, status_table

    st = _service_call(annotation_status, _db(database_url_, create=False), name, utcnow())
    if format_.value == "json":
        out.print_json(data=st)
    else:
        print("\n".join(status_table(st)))


@command("exclude-annotator")
def exclude_annotator_cmd(name: str = typer.Argument(...),
                          annotator: str = typer.Argument(..., help="The annotator's id, e.g. A003 "
                                                          "(see annotation-status)."),
                          database_url_: str | None = DbOption) -> None:
    """Exclude an annotator: their code stops working and the items they finished go back to the pool."""
    from dialeval.service.annotation.projects import exclude_annotator

    r = _service_call(exclude_annotator, _db(database_url_, create=False), name, annotator, utcnow())
    err.print(f"annotator {r['annotator']} excluded from {name}; {r['assignments_returned']} assignment(s) back "
              "in the pool (their labels are kept but neither counted nor exported)", markup=False)


@command("export-annotations")
def export_annotations_cmd(name: str = typer.Argument(...),
                           to: ExportTo = typer.Option(..., "--to", help="Format to write."),  # type: ignore[valid-type]
                           out_path: Path = typer.Option(..., "--out", help="Where: a new folder (WOCHAT: or a "
                                                         "file ending in .xml; STC-3: a .json file)."),
                           senders: str | None = typer.Option(None, help="Sender map, e.g. "
                                                              "'user=customer, system=helpdesk' (STC-3)."),
                           drop_labels: bool = typer.Option(False, "--drop-labels", help="Write even if labels the "
                                                            "format cannot hold must be dropped (they are listed)."),
                           force: bool = typer.Option(False, "--force", help="Replace the file --out names if it "
                                                      "exists (a folder is never replaced)."),
                           database_url_: str | None = DbOption) -> None:
    """Write the finished annotations (each annotator's labels as given) for `dialeval gold`, `evaluate`..."""
    from dialeval.service.annotation.export import export_annotations

    refuse_existing_file(out_path, force=force)
    report = _service_call(export_annotations, _db(database_url_, create=False), name, to.value, out_path,
                           sender_map=parse_pairs(senders, "--senders", SENDERS_EXAMPLE),
                           drop_labels=drop_labels)
    for line in report.lines():
        err.print(line, markup=False)


def register(app: typer.Typer) -> None:
    """The commands are on ``admin_app`` already (added when this module is imported)."""
