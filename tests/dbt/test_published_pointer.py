"""A damaged `published.json` (truncated, edited, not JSON) is a clear LakeError, never a raw
exception out of a reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra import lake as lakes
from infra.marts import PUBLISHED, published_build


@pytest.mark.parametrize(
    "text",
    ['{"marts_snapshot_id": 3', "[]", '{"marts_snapshot_id": "x"}', "\x00\xff", "{}", "null"],
)
def test_a_damaged_pointer_is_a_clear_error(tmp_path: Path, text: str) -> None:
    (tmp_path / PUBLISHED).write_text(text, errors="surrogateescape")
    with pytest.raises(lakes.LakeError, match="croupier build"):
        published_build(tmp_path)


def test_no_pointer_is_no_published_build(tmp_path: Path) -> None:
    assert published_build(tmp_path) is None
