"""Benchmark of reading WOCHAT XML (``dialeval.read_corpus`` on a folder), with plain ElementTree as baseline.

Input: the DBDC3 English eval dialogues (200) converted to WOCHAT XML by the real CLI (``dialeval corpus
convert ... --to wochat``), then copied with new dialogue ids up to ``--files`` files. Timed: the whole of
``dialeval.read_corpus(folder)`` (format detection, decoding, parsing, checks, corpus objects), best of
``--repeat``; baseline: ``xml.etree.ElementTree.parse`` of every file and a full ``iter()`` over its elements.

``--src DIR`` imports dialeval from another source tree (e.g. a read-only worktree of an older commit) to time
the code before a change on the same input.

Measured (2 cores, 800 files, 30 MB, best of 3; "before" is ``--src`` of a worktree of the commit before):

    plain ElementTree parse + iter                                                            0.73-0.81 s
    read_corpus, before (defusedxml's Python-level XMLParser: a Python call per tag;           5.54-5.68 s
                         a dict built per annotator tag through _as_tag; cycle collections)
    read_corpus, after  (C parser when the file has no DOCTYPE; leaner annotator loop;         2.41-2.46 s
                         cycle collector paused while each file is read)

What is left above the baseline is mostly the corpus itself: about 1.7 million Python objects for 1,600 files
(two dicts and a list per annotator), which the cycle collector walks as the corpus grows (about half of the
time at 1,600 files); ``dialeval corpus stats`` on 1,600 files: 11.9 s before, 6.0 s after.

Run:

    python benchmarks/bench_wochat_read.py [--files 800] [--repeat 3] [--src /tmp/wt-old/src]
"""

from __future__ import annotations

import argparse
import re
import shutil
import string
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = next((p / "shared" / "data" / "dbdc3" / "en" / "eval" for p in HERE.parents
             if (p / "shared" / "data" / "dbdc3" / "en" / "eval").is_dir()),
            HERE.parent.parent / "shared" / "data" / "dbdc3" / "en" / "eval")
_ID = re.compile(r'(<dialogue id=")([^\W\d][\w.-]*?)([0-9]{5})(")')


def make_input(folder: Path, n: int) -> int:
    """``n`` WOCHAT files: the converted DBDC3 eval set, then copies with new ids (``CIC00201`` -> ``CICxa00201``).
    Returns the total size in bytes."""
    base = folder / "base"
    subprocess.run([sys.executable, "-m", "dialeval", "corpus", "convert", str(DATA), str(base), "--to", "wochat"],
                   check=True, capture_output=True)
    files = sorted(base.glob("*.xml"))
    out = folder / "wochat"
    out.mkdir()
    size = 0
    for i in range(n):
        src = files[i % len(files)]
        copy = i // len(files)
        text = src.read_text(encoding="utf-8")
        if copy:
            suffix = "x" + string.ascii_lowercase[copy % 26] * (1 + copy // 26)
            text, k = _ID.subn(rf"\g<1>\g<2>{suffix}\g<3>\g<4>", text, count=1)
            assert k == 1, src
        dest = out / (f"{src.stem}_{copy}.xml" if copy else src.name)
        dest.write_text(text, encoding="utf-8")
        size += dest.stat().st_size
    return size


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def plain_etree(folder: Path) -> int:
    n = 0
    for f in sorted(folder.glob("*.xml")):
        for _ in ET.parse(f).getroot().iter():
            n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=800)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", type=Path, help="import dialeval from this source folder instead")
    args = ap.parse_args()
    if args.src:
        sys.path.insert(0, str(args.src.resolve()))
    import dialeval

    with tempfile.TemporaryDirectory() as tmp:
        size = make_input(Path(tmp), args.files)
        folder = Path(tmp) / "wochat"
        print(f"dialeval from {Path(dialeval.__file__).parent}")
        print(f"{args.files} WOCHAT files, {size / 1e6:.1f} MB (DBDC3 en eval converted, replicated)")
        t_et, elems = best_of(lambda: plain_etree(folder), args.repeat)
        t_rd, corpus = best_of(lambda: dialeval.read_corpus(folder), args.repeat)
        turns = sum(len(d.turns) for d in corpus.dialogues)
        print(f"plain ElementTree parse + iter: {t_et:6.2f} s  ({elems:,} elements)")
        print(f"dialeval.read_corpus:           {t_rd:6.2f} s  ({len(corpus.dialogues):,} dialogues, {turns:,} turns)"
              f"  = {t_rd / t_et:.1f}x the baseline, best of {args.repeat}")
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
