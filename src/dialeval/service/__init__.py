"""The online evaluation service: teams, tasks with a public and a hidden half, quotas, a leaderboard.

- :mod:`~dialeval.service.db`: SQLAlchemy models and the locked write transaction (SQLite or PostgreSQL);
  :mod:`~dialeval.service.migrate` the shipped Alembic migrations.
- :mod:`~dialeval.service.quota`: the quota rule, one pure function of the clock.
- :mod:`~dialeval.service.teams`, :mod:`~dialeval.service.tasks`, :mod:`~dialeval.service.submissions`,
  :mod:`~dialeval.service.leaderboard`, :mod:`~dialeval.service.export`: what the service does, without HTTP;
  the organiser commands (``dialeval admin``) call these directly. :mod:`~dialeval.service.runs` scores a
  run for a task through the library only.
- :mod:`~dialeval.service.uploads` (413 before reading), :mod:`~dialeval.service.tokens` (hashes only),
  :mod:`~dialeval.service.errors` (refusals with their HTTP status), :mod:`~dialeval.service.config`.
- :mod:`~dialeval.service.app`: the FastAPI routes (JSON API and server-rendered pages) only.
"""
