"""Rule profiles of every registered game: a built-in one by name, or a casino's own file,
parsed by its game's profile type (`GameSpec.profile_type`, `games/<game>/profile.py`); what
every profile shares is `rules.profile`'s."""

from __future__ import annotations

import functools
from collections.abc import Iterator

from games.registry import GAMES
from rules.profile import BUILTIN_PROFILES, Profile, builtin_profile_text, read_profile

_TYPES = tuple(spec.profile_type for spec in GAMES.values())


@functools.cache
def load_profile(name: str) -> Profile:
    """A built-in profile by name, e.g. ``load_profile("tripoker/pe-2005")`` (loaded once)."""
    return parse_profile(builtin_profile_text(name), source=name)


def parse_profile(text: str, *, source: str = "<profile>") -> Profile:
    """Validate a profile's TOML text (a casino's own file: the CLI reads it, rules stay pure)."""
    return read_profile(text, source=source, types=_TYPES)


def iter_builtin_profiles() -> Iterator[Profile]:
    """Every built-in profile, loaded and validated."""
    for name in BUILTIN_PROFILES:
        yield load_profile(name)
