"""The leaderboard (STC-3/DialEval-style shared tasks): a task's gold stays on the server, its test set split once
into a public and a hidden half; teams submit runs within quotas and are ranked on the public half before close
and on 100% after.

Modules: :mod:`.quota` (the pure policy: the quota rule, a function of the clock), :mod:`.tables` (tasks and
their gold, submissions and their files), :mod:`.uploaded` (gold and runs as uploaded: one file or a ZIP),
:mod:`.runs` (scoring a run through the library), :mod:`.tasks` (create, split, close), :mod:`.submissions`
(submit and choose, the quota checked in the locked transaction; a team's view), :mod:`.scoring_pool` (scoring
uploads in processes), :mod:`.board` (the ranking, reused while the database says it is current),
:mod:`.export` (topic-by-run matrices for ``dialeval compare``) and :mod:`.routes` (pages and JSON API).
"""
