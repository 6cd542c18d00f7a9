"""Rule profiles of every registered game: a released one by name (its latest version) or
``name@version``, or a casino's own file, parsed by its game's profile type
(`GameSpec.profile_type`, `games/<game>/profile.py`); what every profile shares is
`rules.profile`'s."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator

from games.registry import GAMES
from rules.profile import (
    PROFILES_ENV,
    Profile,
    load_released,
    profile_names,
    profile_versions,
    read_profile,
    split_ref,
)

_TYPES = tuple(spec.profile_type for spec in GAMES.values())


def load_profile(ref: str, version: int | None = None) -> Profile:
    """A released profile, e.g. ``load_profile("tripoker/pe-2005")`` (the latest version),
    ``load_profile("tripoker/pe-2005@1")`` or ``load_profile("tripoker/pe-2005", 1)``; loaded
    once."""
    name, at = split_ref(ref)
    return _load(name, version if version is not None else at, os.environ.get(PROFILES_ENV))


@functools.cache
def _load(name: str, version: int | None, folder: str | None) -> Profile:
    return load_released(name, version, _TYPES)


def parse_profile(text: str, *, source: str = "<profile>") -> Profile:
    """Validate a profile's TOML text (a casino's own file: the CLI reads it, rules stay pure)."""
    return read_profile(text, source=source, types=_TYPES)


def iter_released_profiles() -> Iterator[Profile]:
    """Every released version of every profile (built-in and the casino's own), validated."""
    for name in profile_names():
        for version in profile_versions(name):
            yield load_profile(name, version)
