"""Imports every model kind so that it registers itself (see :func:`dialeval.models.base.register`)."""

from dialeval.models import baselines, linear, neural  # noqa: F401
