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


class QuotaSpent(ServiceError):
    status = 429


class Unavailable(ServiceError):
    status = 503


def status_of(e: ServiceError | DialevalError) -> int:
    """The HTTP status of a refusal: its own for a :class:`ServiceError`, 422 for a bad file or value."""
    return e.status if isinstance(e, ServiceError) else 422
