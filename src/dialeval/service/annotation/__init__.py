"""Annotation projects (WOCHAT task 2, COLLECT.md): several annotators judge every item of a corpus.

Modules: :mod:`.schemes` (the one registry of annotation schemes, from the corpus model's scales),
:mod:`.tables` (projects, items, annotators, assignments, labels), :mod:`.assignment` (the pure policy:
which item next, slots, expiry), :mod:`.projects` (the operations, in locked transactions), :mod:`.status`
(progress and agreement), :mod:`.export` (the labels as a Corpus, written by the existing writers),
:mod:`.guidelines` (safe Markdown) and :mod:`.routes` (pages and JSON API).
"""
