"""Rule profiles through time: a released version is never edited, a new one is a new file, and
each version loads by name (a casino's own folder adds versions, never replaces one)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from games.profiles import iter_released_profiles, load_profile
from games.tripoker.profile import TripokerProfile
from rules.profile import (
    PROFILES_ENV,
    ProfileError,
    builtin_profile_text,
    profile_names,
    profile_versions,
)
from rules.rankings import Category

PROFILES = Path(__file__).resolve().parents[2] / "rules" / "profiles"


def released_hashes() -> dict[str, str]:
    lines = (PROFILES / "RELEASED.sha256").read_text().splitlines()
    return {path: digest for digest, path in (line.split("  ", 1) for line in lines)}


def test_a_released_file_is_never_changed_or_removed() -> None:
    """RELEASED.sha256 is appended to when a version is released, never edited: a paytable change
    is a new version file (this test fails on any edit of a released one)."""
    on_disk = {
        str(p.relative_to(PROFILES)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in PROFILES.rglob("*.toml")
    }
    released = released_hashes()
    assert on_disk == released, "a released profile file was changed, added unlisted or removed"


def test_each_profile_records_the_hash_of_its_file() -> None:
    released = released_hashes()
    for profile in iter_released_profiles():
        path = f"{profile.name}/v{profile.version}.toml"
        assert profile.content_hash == released[path]


def test_a_version_loads_by_name_at_version_and_the_latest_without() -> None:
    assert profile_versions("tripoker/pe-2005") == (1,)
    assert load_profile("tripoker/pe-2005@1") is load_profile("tripoker/pe-2005", 1)
    assert load_profile("tripoker/pe-2005") == load_profile("tripoker/pe-2005@1")
    with pytest.raises(ProfileError, match=r"tripoker/pe-2005 v2 is not released \(released: v1\)"):
        load_profile("tripoker/pe-2005@2")
    # as what-if prints it (`recorded_profile`, `whatif_profile`): pasted back, it loads
    assert load_profile("tripoker/pe-2005@v1") is load_profile("tripoker/pe-2005", 1)
    for wrong in ("tripoker/pe-2005@x", "tripoker/pe-2005@v", "tripoker/pe-2005@vv1"):
        with pytest.raises(ProfileError, match="version after '@'"):
            load_profile(wrong)


def own_folder(tmp_path: Path, name: str, version: int, text: str) -> Path:
    game, _, variant = name.partition("/")
    folder = tmp_path / "own"
    (folder / game / variant).mkdir(parents=True, exist_ok=True)
    (folder / game / variant / f"v{version}.toml").write_text(text, encoding="utf-8")
    return folder


def standard_v2() -> str:
    """tripoker/standard v2: the 1-3-6-30-40 pair plus table (flush pays 3 instead of 4)."""
    text = builtin_profile_text("tripoker/standard", 1)
    assert "version = 1\n" in text and "\nflush = 4\n" in text
    return text.replace("version = 1\n", "version = 2\n").replace("\nflush = 4\n", "\nflush = 3\n")


def test_a_casinos_folder_adds_a_version_and_both_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        PROFILES_ENV, str(own_folder(tmp_path, "tripoker/standard", 2, standard_v2()))
    )
    v1, v2 = load_profile("tripoker/standard@1"), load_profile("tripoker/standard@2")
    assert (v1.version, v2.version) == (1, 2)
    assert isinstance(v1, TripokerProfile) and isinstance(v2, TripokerProfile)
    assert v1.pair_plus.get(Category.FLUSH) == 4 and v2.pair_plus.get(Category.FLUSH) == 3
    others = [c for c, _ in v1.pair_plus.lines() if c is not Category.FLUSH]
    assert [v1.pair_plus.get(c) for c in others] == [v2.pair_plus.get(c) for c in others]
    assert v1.content_hash != v2.content_hash
    assert load_profile("tripoker/standard") == v2  # the latest
    assert TripokerProfile.load("tripoker/standard@1") == v1
    monkeypatch.delenv(PROFILES_ENV)
    assert load_profile("tripoker/standard") == v1  # without the folder, v2 is unknown
    with pytest.raises(ProfileError, match="v2 is not released"):
        load_profile("tripoker/standard@2")


def test_a_casinos_folder_cannot_replace_a_builtin_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = standard_v2().replace("version = 2\n", "version = 1\n")
    monkeypatch.setenv(PROFILES_ENV, str(own_folder(tmp_path, "tripoker/standard", 1, text)))
    with pytest.raises(ProfileError, match="tripoker/standard v1 is a built-in profile"):
        profile_names()


def test_a_file_must_state_the_name_and_version_it_is_released_as(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        PROFILES_ENV, str(own_folder(tmp_path, "tripoker/standard", 3, standard_v2()))
    )
    with pytest.raises(ProfileError, match="the file states tripoker/standard v2"):
        load_profile("tripoker/standard@3")


@pytest.mark.parametrize("ref", ["tripoker/standard@²", "tripoker/standard@", "@", "x@0", "x@-1"])
def test_a_bad_version_is_refused_by_name(ref: str) -> None:
    with pytest.raises(ProfileError, match="version after '@'"):
        load_profile(ref)


def test_a_casino_file_that_is_not_utf8_or_a_folder_that_is_not_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = own_folder(tmp_path, "tripoker/standard", 2, standard_v2())
    (folder / "tripoker" / "standard" / "v2.toml").write_bytes(b"name = '\xff'\n")
    monkeypatch.setenv(PROFILES_ENV, str(folder))
    with pytest.raises(ProfileError, match="tripoker/standard v2: not UTF-8"):
        load_profile("tripoker/standard@2")
    monkeypatch.setenv(PROFILES_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(ProfileError, match="not a folder of released profiles"):
        load_profile("tripoker/standard")


def test_a_version_released_while_running_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "own"
    folder.mkdir()
    monkeypatch.setenv(PROFILES_ENV, str(folder))
    with pytest.raises(ProfileError, match="v2 is not released"):
        load_profile("tripoker/standard@2")
    own_folder(tmp_path, "tripoker/standard", 2, standard_v2())
    assert load_profile("tripoker/standard@2").version == 2
