"""``dialeval demo``: score the shipped demo run against the shipped demo corpus."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import typer

from dialeval.cli._common import err
from dialeval.cli.evaluate import show_summary
from dialeval.errors import DialevalError
from dialeval.io.atomic import make_folder, write_bytes
from dialeval.scoring import evaluate

DEMO_FILES = ("gold.json", "run.json", "README.md")


def demo_dir() -> Path:
    """The folder of the shipped demo corpus (gold.json, run.json, README.md)."""
    return Path(str(files("dialeval") / "data" / "demo"))


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo_cmd(out_dir: Path | None = typer.Option(None, "--out", help="Also copy the demo files here.")) -> None:
        """Score a demo run on a small made-up corpus (no data needed)."""
        d = demo_dir()
        if out_dir is not None:  # before anything is printed: a wrong --out is the only output
            make_folder(out_dir, "the demo files (--out)")
            others = [n for n in DEMO_FILES if (out_dir / n).exists()
                      and (not (out_dir / n).is_file() or (out_dir / n).read_bytes() != (d / n).read_bytes())]
            if others:
                raise DialevalError(f"--out {out_dir} holds {', '.join(others)} of its own (not the demo's); nothing "
                                    "was copied: give a new or empty folder")
        err.print("Demo corpus: 8 dialogues written for dialeval; annotations and run are MADE UP for the "
                  f"demo.\nFiles: {d}", markup=False)
        if out_dir is not None:
            for name in DEMO_FILES:
                write_bytes(out_dir / name, (d / name).read_bytes())
            err.print(f"Copied to {out_dir}; try: dialeval evaluate {out_dir / 'run.json'} "
                      f"{out_dir / 'gold.json'} --format table", markup=False)
        summary = evaluate(str(d / "run.json"), str(d / "gold.json"))
        show_summary(summary, "demo run vs demo gold")
