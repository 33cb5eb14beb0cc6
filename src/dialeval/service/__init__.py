"""The online evaluation service: one package per capability, on what they share.

Capabilities, each with the same inside (a pure policy module with the clock passed in, its ``tables``, its
``routes``, its templates under ``templates/<capability>/``); their operations work without HTTP, so the
organiser commands (``dialeval admin``) call them directly:

- :mod:`~dialeval.service.leaderboard`: tasks with a public and a hidden half, quotas, submissions, the
  leaderboard, the matrix export;
- :mod:`~dialeval.service.collection`: chats with an engine or between people, pairing, WOCHAT export;
- :mod:`~dialeval.service.annotation`: annotation projects, assignment, labels, agreement.

Shared:

- :mod:`~dialeval.service.db`: the locked write transaction (SQLite or PostgreSQL) and the shared tables;
  :mod:`~dialeval.service.migrate` the shipped Alembic migrations.
- :mod:`~dialeval.service.teams`, :mod:`~dialeval.service.invitations`, :mod:`~dialeval.service.ratelimit`,
  :mod:`~dialeval.service.names`: teams and organisers, invitation codes, registration's rate limit, names.
- :mod:`~dialeval.service.uploads` (413 before reading), :mod:`~dialeval.service.tokens` (hashes only),
  :mod:`~dialeval.service.bearer` (the token of a request), :mod:`~dialeval.service.csrf`,
  :mod:`~dialeval.service.security` (headers), :mod:`~dialeval.service.errors` (refusals with their HTTP
  status), :mod:`~dialeval.service.boundary`, :mod:`~dialeval.service.config`.
- :mod:`~dialeval.service.app`: the app factory: the shared routes (team registration, the organiser's team
  routes, the home page) and each capability's router.
"""
