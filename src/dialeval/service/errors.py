"""Errors of the service, each with its HTTP status (the routes turn them into answers).

Bad run or gold files are :class:`dialeval.DialevalError` (422) as everywhere in dialeval; these are
the service's own refusals.
"""

from __future__ import annotations

from dialeval.errors import DialevalError


class ServiceError(Exception):
    """A refusal with an HTTP status and optional headers (e.g. ``Retry-After``)."""

    status = 400

    def __init__(self, message: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.headers = headers or {}


class Unauthorized(ServiceError):
    status = 401


class Forbidden(ServiceError):
    status = 403


class NotFound(ServiceError):
    status = 404


class Conflict(ServiceError):
    status = 409


class TooLarge(ServiceError):
    status = 413


class Invalid(ServiceError):
    status = 422


class InvalidValue(Invalid):
    """The value given for one parameter of a service function is refused (422, like every :class:`Invalid`).

    It carries the parameter's name, so that the message can name what the caller gave: a Python caller reads
    ``overlap 0 is not allowed; ...`` (``what``, by default the parameter's name), while the CLI names the option
    its user typed, ``--overlap 0 is not allowed; ...`` (:class:`dialeval.cli._common.OptionNamed`).

    Parameters
    ----------
    param : str
        The parameter's name in the function's signature (``overlap``, ``count``, ``max_turns``).
    detail : str
        What is wrong with the value, to follow the name: what was received and what is allowed
        (``0 is not allowed; allowed are integers from 1 to 1000``).
    what : str, optional
        How the message names the value for a Python caller (``max turns``); default ``param``.

    Examples
    --------
    >>> e = InvalidValue("count", "0 is not allowed; allowed are integers from 1 to 10000")
    >>> e.message, e.param, e.status
    ('count 0 is not allowed; allowed are integers from 1 to 10000', 'count', 422)
    """

    def __init__(self, param: str, detail: str, *, what: str | None = None) -> None:
        super().__init__(f"{what or param} {detail}")
        self.param = param
        self.detail = detail


class QuotaSpent(ServiceError):
    status = 429


class Unavailable(ServiceError):
    status = 503


def status_of(e: ServiceError | DialevalError) -> int:
    """The HTTP status of a refusal: its own for a :class:`ServiceError`, 422 for a bad file or value."""
    return e.status if isinstance(e, ServiceError) else 422
