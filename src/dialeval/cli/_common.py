"""Shared CLI helpers: one-line errors, warnings, rich consoles, choices from the registries."""

from __future__ import annotations

from enum import Enum

from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def warn(message: str) -> None:
    err.print(f"warning: {message}", markup=False)


def choice_enum(name: str, values: list[str] | tuple[str, ...]) -> type[Enum]:
    """An Enum for typer choices, generated from a registry list (never a second list by hand)."""
    return Enum(name, {v.replace("-", "_").upper() or "NONE": v for v in values}, type=str)  # type: ignore[return-value]
