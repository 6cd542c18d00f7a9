"""Rule profiles: the numbers a casino posts (paytables, qualifiers, commission, house way...).

Profiles are TOML files shipped in `rules/profiles/<game>/<variant>/v<version>.toml`, validated at
load time into frozen dataclasses; a bad profile is refused with a `ProfileError` naming the field.
A released version is never edited (`rules/profiles/RELEASED.sha256` holds every file's hash and
a test refuses a change): a new paytable is a new version file, and every round settles under the
version its table opened with. A casino's own released profiles live in a folder of the same
layout named by the `CROUPIER_PROFILES` environment variable; they add names or versions, never
replace a built-in one. This
module holds what every game's profile shares (the `Profile` base, paytables, house ways, the typed
TOML reads); each game's own type and fields live in `games/<game>/profile.py`, and
`games.profiles` loads a profile of any registered game.

Every number `defaults.md` names lives in a profile, never in code. Rates are integer basis
points (500 = 5 %), money is integer céntimos, paytable pays are "to 1", ranks are written
`2`..`9`, `T` (or `10`), `J`, `Q`, `K`, `A`, hand categories in snake_case (`three_of_a_kind`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import ClassVar, Self, TypedDict

from events.models import Game
from rules.cards import RANKS, CardError, parse_cards
from rules.rankings.hand import Category


class ProfileError(ValueError):
    """A profile that cannot be used; the message names the profile and the field."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Paytable:
    """A value per hand category (odds "to 1", basis points or céntimos, as the field says);
    `None` for a category the table does not pay."""

    values: tuple[int | None, ...]  # indexed by Category value

    def get(self, category: Category) -> int | None:
        return self.values[category]

    def lines(self) -> tuple[tuple[Category, int], ...]:
        """The paid lines, by `Category` value (the five-card order), highest first."""
        return tuple(
            (Category(c), v) for c, v in reversed(list(enumerate(self.values))) if v is not None
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Band:
    """One row of a house way's two-pair or quads table (DEF-PGP1).

    Covers a high pair (or quads) rank from `from_rank` up to the next band. The two pairs (the
    quads) stay together in the high hand when the best single that can go low is at least
    `together_if_single_at_least`; `ALWAYS` (0) keeps them together, `NEVER` (13) always splits.
    """

    ALWAYS = 0
    NEVER = 13

    from_rank: int
    together_if_single_at_least: int


@dataclass(frozen=True, kw_only=True, slots=True)
class HouseWay:
    """The parameters of a posted house way (DEF-PGP1, PGP-A13c); `games.pai_gow.rules.house_way`
    applies them. Rows that every supported way shares (no pair, one pair, three pair, trips,
    two trips, quads with a pair) are fixed in code and documented there."""

    name: str
    version: int
    description: str
    two_pair: tuple[Band, ...]  # highest band first
    quads: tuple[Band, ...]  # highest band first
    split_trips_of_aces: bool  # pair of aces high, ace + next single low
    five_aces_pair_low_from: int  # a pair of this rank or better (not aces) goes low instead
    # straight/flush with one pair of these ranks and an ace: ace low, pair high, if that gives
    # a better low hand than the best low that keeps the straight/flush high.
    ace_low_over_straight_pairs: frozenset[int]
    # keep a full house together (two singles low) when its pair is at most this rank and the
    # two singles are at least this low hand, e.g. 2s with A-K; None: always split.
    full_house_together_pair_at_most: int | None
    full_house_together_low_at_least: tuple[int, int] | None


@dataclass(frozen=True, kw_only=True, slots=True)
class Profile:
    """What every game's rule profile states; each game's own type (`games/<game>/profile.py`)
    adds the numbers its page sets, and code narrows a `Profile` to it with `isinstance`."""

    name: str
    version: int
    description: str
    content_hash: str  # sha256 of the TOML text: what each settled round records

    game: ClassVar[Game]  # set by each game's type

    @classmethod
    def from_fields(cls, fields: Fields, header: ProfileHeader) -> Self:
        """The profile from its TOML fields, the common ones (`header`) already read; the game's
        type reads its own and leaves `fields.done()` to the caller."""
        raise NotImplementedError(f"{cls.__name__} does not read a profile")

    @classmethod
    def load(cls, ref: str) -> Self:
        """A released profile of this type's game by name, its latest version or ``@N``, e.g.
        ``TripokerProfile.load("tripoker/pe-2005")`` (loaded once)."""
        name, version = split_ref(ref)
        profile = _load(cls, name, version)
        if not isinstance(profile, cls):  # read_profile builds only `cls`
            raise TypeError(f"{name} is not a {cls.__name__}")
        return profile


class ProfileHeader(TypedDict):
    """The fields every profile has, as its game's type receives them."""

    name: str
    version: int
    description: str
    content_hash: str


BUILTIN_HOUSE_WAYS = ("foxwoods", "trump-plaza")
_HOUSE_WAYS_DIR = "house-ways"


PROFILES_ENV = "CROUPIER_PROFILES"
_VERSION_FILE = re.compile(r"v([1-9][0-9]*)\.toml")


def _data_dir() -> Traversable:
    return resources.files("rules").joinpath("profiles")


def _released(root: Traversable) -> dict[tuple[str, int], Traversable]:
    """`(<game slug>/<variant>, version)` -> file, for every `<game>/<variant>/v<N>.toml`."""
    found: dict[tuple[str, int], Traversable] = {}
    if not root.is_dir():
        return found
    for game in root.iterdir():
        if not game.is_dir() or game.name == _HOUSE_WAYS_DIR:
            continue
        for variant in game.iterdir():
            if not variant.is_dir():
                continue
            for file in variant.iterdir():
                match = _VERSION_FILE.fullmatch(file.name)
                if file.is_file() and match:
                    found[f"{game.name}/{variant.name}", int(match[1])] = file
    return found


_BUILTIN = _released(_data_dir())


def _files() -> dict[tuple[str, int], Traversable]:
    """Every released profile file: the built-in ones and the casino's own (`CROUPIER_PROFILES`),
    which may add names or versions but never replace a built-in one."""
    extra = os.environ.get(PROFILES_ENV)
    if not extra:
        return _BUILTIN
    return _with_own(extra)


def _with_own(folder: str) -> dict[tuple[str, int], Traversable]:
    """Read each time (a small folder): a version released while a consumer runs is seen at the
    next round that names it; what was loaded stays cached by `games.profiles`."""
    if not Path(folder).is_dir():
        raise ProfileError(f"{PROFILES_ENV}={folder}: not a folder of released profiles")
    own = _released(Path(folder))
    clash = sorted(set(own) & set(_BUILTIN))
    if clash:
        name, version = clash[0]
        raise ProfileError(
            f"{PROFILES_ENV}={folder}: {name} v{version} is a built-in profile; a released "
            "version is never replaced (give yours a new version or name)"
        )
    return {**_BUILTIN, **own}


BUILTIN_PROFILES = tuple(sorted({name for name, _ in _BUILTIN}))


def profile_names() -> tuple[str, ...]:
    """Every released profile's name (built-in and the casino's own), sorted."""
    return tuple(sorted({name for name, _ in _files()}))


def profile_versions(name: str) -> tuple[int, ...]:
    """The released versions of a profile, oldest first (empty for an unknown name)."""
    return tuple(sorted(v for n, v in _files() if n == name))


def split_ref(ref: str) -> tuple[str, int | None]:
    """``"tripoker/pe-2005@2"`` (or ``@v2``, as what-if and the messages print a version) ->
    (name, 2); without ``@`` the version is None (the latest)."""
    name, at, version = ref.partition("@")
    if not at:
        return ref, None
    version = version.removeprefix("v")
    if not re.fullmatch(r"[0-9]+", version) or int(version) < 1:
        raise ProfileError(f"{ref!r}: the version after '@' must be a number from 1")
    return name, int(version)


def builtin_profile_text(name: str, version: int | None = None) -> str:
    """The TOML text of a released profile, e.g. ``("tripoker/pe-2005", 1)``; the latest version
    when `version` is None."""
    versions = profile_versions(name)
    if not versions:
        raise ProfileError(
            f"unknown profile {name!r}; released profiles: {', '.join(profile_names())}"
        )
    chosen = versions[-1] if version is None else version
    if chosen not in versions:
        listed = ", ".join(f"v{v}" for v in versions)
        raise ProfileError(f"{name} v{chosen} is not released (released: {listed})")
    return read_text(_files()[name, chosen], f"{name} v{chosen}")


def read_text(file: Traversable | Path, source: str) -> str:
    """A profile file's text; one that cannot be read or is not UTF-8 is a `ProfileError`."""
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ProfileError(f"{source}: cannot be read ({exc.strerror or exc})") from None


def load_released(name: str, version: int | None, types: Sequence[type[Profile]]) -> Profile:
    """A released profile, checked to state the name and version its file is released as."""
    chosen = version if version is not None else (profile_versions(name) or (0,))[-1]
    source = f"{name}@{chosen}"
    profile = read_profile(builtin_profile_text(name, version), source=source, types=types)
    if (profile.name, profile.version) != (name, chosen):
        raise ProfileError(
            f"{source}: the file states {profile.name} v{profile.version}; a released file's "
            "name and version are its folder's and file's"
        )
    return profile


_LOADED: dict[tuple[type[Profile], str, int | None, str | None], Profile] = {}


def _load(kind: type[Profile], name: str, version: int | None) -> Profile:
    """`kind.load`, once per type, name, version and casino folder."""
    key = (kind, name, version, os.environ.get(PROFILES_ENV))
    if key not in _LOADED:
        _LOADED[key] = load_released(name, version, (kind,))
    return _LOADED[key]


@functools.cache
def load_house_way(name: str) -> HouseWay:
    """A built-in house way by name (`foxwoods`, `trump-plaza`), loaded once."""
    if name not in BUILTIN_HOUSE_WAYS:
        raise ProfileError(
            f"unknown house way {name!r}; built-in ways: {', '.join(BUILTIN_HOUSE_WAYS)}"
        )
    text = _data_dir().joinpath(_HOUSE_WAYS_DIR, f"{name}.toml").read_text(encoding="utf-8")
    return parse_house_way(text, source=name)


def read_profile(text: str, *, source: str, types: Sequence[type[Profile]]) -> Profile:
    """Validate a profile's TOML text (a casino's own file: the CLI reads it, rules stay pure):
    the fields every profile has here, its game's own through that game's type among `types`
    (`games.profiles.parse_profile` passes every registered game's)."""
    fields = Fields(_toml(text, source), source)
    game_name = fields.text("game")
    try:
        game = Game.from_slug(game_name)
    except ValueError:
        raise fields.error("game", f"unknown game {game_name!r}") from None
    name = fields.text("name")
    if not name.startswith(f"{game.slug}/"):
        raise fields.error("name", f"must start with '{game.slug}/', got {name!r}")
    version = fields.integer("version", minimum=1)
    description = fields.text("description")
    kind = next((t for t in types if t.game is game), None)
    if kind is None:
        expected = " or ".join(repr(t.game.slug) for t in types)
        raise fields.error("game", f"expected {expected}, got {game_name!r}")
    content_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
    profile = kind.from_fields(
        fields,
        ProfileHeader(
            name=name, version=version, description=description, content_hash=content_hash
        ),
    )
    fields.done()
    return profile


def parse_house_way(text: str, *, source: str = "<house way>") -> HouseWay:
    """Validate a house way's TOML text."""
    fields = Fields(_toml(text, source), source)
    full_house = fields.table("full_house")
    pair_at_most = full_house.optional_rank("together_if_pair_at_most")
    low_at_least = full_house.optional_text("together_if_low_at_least")
    if (pair_at_most is None) != (low_at_least is None):
        raise full_house.error(
            "together_if_low_at_least", "give both together_if_* fields or neither"
        )
    way = HouseWay(
        name=fields.text("name"),
        version=fields.integer("version", minimum=1),
        description=fields.text("description"),
        two_pair=fields.bands("two_pair", lowest=1),
        quads=fields.bands("quads", lowest=0),
        split_trips_of_aces=fields.table("trips").boolean("split_aces"),
        five_aces_pair_low_from=fields.table("five_aces").rank("pair_low_from"),
        ace_low_over_straight_pairs=frozenset(
            fields.table("straight_or_flush").ranks("ace_low_over_pairs")
        ),
        full_house_together_pair_at_most=pair_at_most,
        full_house_together_low_at_least=(
            None
            if low_at_least is None
            else full_house.low_hand("together_if_low_at_least", low_at_least)
        ),
    )
    for table in ("trips", "five_aces", "straight_or_flush", "full_house"):
        fields.table(table).done()
    fields.done()
    return way


def parse_rank(text: str) -> int:
    """Rank index 0..12 of ``"2"``..``"A"`` (``"10"`` or ``"T"`` for ten)."""
    token = "T" if text == "10" else text.upper()
    if len(token) != 1 or token not in RANKS:
        raise ValueError(f"unknown rank {text!r} (use 2-9, T or 10, J, Q, K, A)")
    return RANKS.index(token)


def _toml(text: str, source: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{source}: not valid TOML: {exc}") from None


class Fields:
    """Typed, path-aware reads from one TOML table; `done()` refuses fields nobody read."""

    def __init__(self, data: Mapping[str, object], source: str, prefix: str = "") -> None:
        self._data = data
        self._source = source
        self._prefix = prefix
        self._read: set[str] = set()
        self._tables: dict[str, Fields] = {}

    def error(self, key: str, problem: str) -> ProfileError:
        return ProfileError(f"{self._source}: field '{self._prefix}{key}': {problem}")

    def _take(self, key: str) -> object:
        if key not in self._data:
            raise self.error(key, "missing")
        self._read.add(key)
        return self._data[key]

    def done(self) -> None:
        unknown = sorted(set(self._data) - self._read)
        if unknown:
            raise self.error(unknown[0], "unknown field")
        for table in self._tables.values():
            table.done()

    def table(self, key: str) -> Fields:
        if key not in self._tables:
            value = self._take(key)
            if not isinstance(value, dict):
                raise self.error(key, "expected a table")
            self._tables[key] = Fields(value, self._source, f"{self._prefix}{key}.")
        return self._tables[key]

    def integer(self, key: str, *, minimum: int = 0, maximum: int | None = None) -> int:
        value = self._take(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"expected an integer, got {value!r}")
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
            raise self.error(key, f"must be {bound}, got {value}")
        return value

    def text(self, key: str) -> str:
        value = self._take(key)
        if not isinstance(value, str) or not value:
            raise self.error(key, f"expected a non-empty string, got {value!r}")
        return value

    def optional_text(self, key: str) -> str | None:
        return self.text(key) if key in self._data else None

    def boolean(self, key: str) -> bool:
        value = self._take(key)
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def rank(self, key: str) -> int:
        value = self._take(key)
        try:
            return parse_rank(str(value)) if isinstance(value, str | int) else parse_rank("?")
        except ValueError as exc:
            raise self.error(key, str(exc)) from None

    def optional_rank(self, key: str) -> int | None:
        return self.rank(key) if key in self._data else None

    def ranks(self, key: str) -> tuple[int, ...]:
        value = self._take(key)
        if not isinstance(value, list):
            raise self.error(key, "expected a list of ranks")
        try:
            return tuple(parse_rank(str(v)) for v in value)
        except ValueError as exc:
            raise self.error(key, str(exc)) from None

    def low_hand(self, key: str, text: str) -> tuple[int, int]:
        """Two ranks written together, e.g. ``"AK"``, highest first."""
        try:
            ranks = sorted((parse_rank(ch) for ch in text), reverse=True)
        except ValueError as exc:
            raise self.error(key, str(exc)) from None
        if len(ranks) != 2:
            raise self.error(key, f"expected two ranks such as 'AK', got {text!r}")
        return ranks[0], ranks[1]

    def cards(self, key: str, *, count: int) -> tuple[int, ...]:
        value = self.text(key)
        try:
            cards = parse_cards(value)
        except CardError as exc:
            raise self.error(key, str(exc)) from None
        if len(cards) != count:
            raise self.error(key, f"expected {count} cards, got {len(cards)}")
        return cards

    def positions(self, key: str, *, count: int) -> tuple[int, ...]:
        value = self._take(key)
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= count for v in value
        ):
            raise self.error(key, f"expected a list of card positions 1..{count}, got {value!r}")
        if len(set(value)) != len(value):
            raise self.error(key, f"repeated position in {value!r}")
        return tuple(sorted(value))

    def paytable(
        self, key: str, *, minimum: int = 0, maximum: int | None = None, complete: bool = False
    ) -> Paytable:
        table = self.table(key)
        values: list[int | None] = [None] * len(Category)
        for category in Category:
            if category.label in table._data:
                values[category] = table.integer(category.label, minimum=minimum, maximum=maximum)
            elif complete and category is not Category.FIVE_ACES:
                raise table.error(category.label, "missing (this table pays every hand)")
        table.done()
        if all(v is None for v in values):
            raise self.error(key, "pays nothing")
        return Paytable(values=tuple(values))

    def bands(self, key: str, *, lowest: int) -> tuple[Band, ...]:
        value = self._take(key)
        if not isinstance(value, list) or not value:
            raise self.error(key, "expected a non-empty array of tables [[...]]")
        bands: list[Band] = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.error(f"{key}[{i}]", "expected a table")
            row = Fields(item, self._source, f"{self._prefix}{key}[{i}].")
            together = row.text("together")
            if together == "always":
                threshold = Band.ALWAYS
            elif together == "never":
                threshold = Band.NEVER
            else:
                try:
                    threshold = parse_rank(together)
                except ValueError as exc:
                    raise row.error("together", f"'always', 'never' or a rank: {exc}") from None
            bands.append(Band(from_rank=row.rank("from"), together_if_single_at_least=threshold))
            row.done()
        tops = [b.from_rank for b in bands]
        if tops != sorted(tops, reverse=True) or len(set(tops)) != len(tops):
            raise self.error(key, "bands must go from the highest rank down, each rank once")
        if tops[-1] > lowest:
            raise self.error(key, f"the last band must start at rank {RANKS[lowest]} or lower")
        return tuple(bands)

    def house_way(self, key: str) -> HouseWay:
        name = self.text(key)
        try:
            return load_house_way(name)
        except ProfileError as exc:
            raise self.error(key, str(exc)) from None
