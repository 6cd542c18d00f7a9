"""The login: scrypt password hashes (checked against RFC 7914's test vector), the users file,
roles and the pages each may see, lock-out after repeated failures, session expiry."""

from __future__ import annotations

import base64
import os
import stat
import time
from pathlib import Path

import pytest

from dashboards import auth

USERS = """
[users.ana]
role = "manager"
password_hash = "{ana}"

[users.sam]
role = "surveillance"
password_hash = "{sam}"

[sso]
"Ana@Casino.pe" = "manager"
"""


@pytest.fixture(scope="module")
def users() -> auth.Users:
    text = USERS.format(
        ana=auth.hash_password("ana-password-1"), sam=auth.hash_password("s3cret-sam")
    )
    return auth.parse_users(text, origin="users.toml")


def test_verify_accepts_rfc7914_scrypt_vector() -> None:
    # RFC 7914 section 12, first vector: scrypt(P="", S="", N=16, r=1, p=1, dkLen=64).
    expected = bytes.fromhex(
        "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
        "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"
    )
    encoded = "scrypt$16$1$1$$" + base64.b64encode(expected).decode()
    assert auth.verify_password("", encoded)
    assert not auth.verify_password("x", encoded)


def test_hash_is_salted_and_verifies_only_its_password() -> None:
    first, second = auth.hash_password("correct horse"), auth.hash_password("correct horse")
    assert first != second  # a fresh salt each time
    assert auth.verify_password("correct horse", first)
    assert auth.verify_password("correct horse", second)
    assert not auth.verify_password("correct horsE", first)


@pytest.mark.parametrize(
    "encoded",
    [
        "",
        "plain-text-password",
        "pbkdf2$1$2$3$aa$bb",
        "scrypt$16384$8$1$not-base64!$AAAA",
        "scrypt$16385$8$1$AAAA$AAAA",  # n not a power of two
        f"scrypt${2**24}$8$1$AAAA$AAAA",  # would need 16 GiB: refused, not attempted
        "scrypt$16384$8$1$AAAA$",  # no hash
    ],
)
def test_malformed_or_too_costly_hashes_never_match(encoded: str) -> None:
    assert not auth.verify_password("anything", encoded)


def test_users_file_roles_and_sso_addresses(users: auth.Users) -> None:
    assert users.accounts["ana"].role is auth.Role.MANAGER
    assert users.accounts["sam"].role is auth.Role.SURVEILLANCE
    assert users.sso_roles == {"ana@casino.pe": auth.Role.MANAGER}
    assert auth.sso_user(users, "ANA@casino.pe").role is auth.Role.MANAGER  # type: ignore[union-attr]
    assert auth.sso_user(users, "intruder@example.com") is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[users.x]\nrole = 'admin'\npassword_hash = 'h'\n", "role 'admin' is not one of"),
        ("[users.x]\nrole = 'manager'\n", "needs exactly role and password_hash"),
        (
            "[users.x]\nrole = 'manager'\npassword = 'plain'\n",
            "needs exactly role and password_hash",
        ),
        ("[people.x]\nrole = 'manager'\n", "unknown sections"),
        ("users = [", "not valid TOML"),
        ("", r"no \[users\.\*\] and no \[sso\] entries"),
    ],
)
def test_bad_users_file_is_refused_with_the_reason(text: str, problem: str) -> None:
    with pytest.raises(auth.UsersFileError, match=problem):
        auth.parse_users(text, origin="users.toml")


def test_right_password_logs_in_with_the_users_role(users: auth.Users) -> None:
    user = auth.authenticate(users, " sam ", "s3cret-sam")
    assert (user.name, user.role) == ("sam", auth.Role.SURVEILLANCE)


@pytest.mark.parametrize(
    ("name", "password"),
    [("ana", "wrong"), ("nobody", "ana-password-1"), ("ana", "ana-password-1' OR '1'='1"),
     ("ana' --", "x"), ("ana", "")],
)  # fmt: skip
def test_wrong_name_or_password_is_refused_with_one_message(
    users: auth.Users, name: str, password: str
) -> None:
    with pytest.raises(auth.LoginRefused, match="Wrong user name or password"):
        auth.authenticate(users, name, password)


def test_five_failures_lock_the_name_out_even_for_the_right_password() -> None:
    users = auth.parse_users(
        f'[users.locky]\nrole = "manager"\npassword_hash = "{auth.hash_password("pw-locky-1")}"\n',
        origin="users.toml",
    )
    for _ in range(auth.MAX_FAILURES):
        with pytest.raises(auth.LoginRefused, match="Wrong"):
            auth.authenticate(users, "locky", "guess")
    with pytest.raises(auth.LoginRefused, match="Too many failed attempts"):
        auth.authenticate(users, "locky", "pw-locky-1")


def test_surveillance_sees_integrity_dealers_and_round_explorer_only() -> None:
    manager = auth.User(name="a", role=auth.Role.MANAGER, logged_in_at=time.time())
    watcher = auth.User(name="s", role=auth.Role.SURVEILLANCE, logged_in_at=time.time())
    assert all(manager.may_see(page) for page in auth.PAGE_ROLES)
    assert {p for p in auth.PAGE_ROLES if watcher.may_see(p)} == {
        "integrity", "dealers", "round_explorer"
    }  # fmt: skip


def test_a_session_older_than_its_lifetime_is_logged_out() -> None:
    fresh = auth.User(name="a", role=auth.Role.MANAGER, logged_in_at=time.time())
    stale = auth.User(
        name="a", role=auth.Role.MANAGER, logged_in_at=time.time() - auth.SESSION_HOURS * 3600 - 1
    )
    assert auth.session_user({auth.SESSION_KEY: fresh}) == fresh
    assert auth.session_user({auth.SESSION_KEY: stale}) is None
    assert auth.session_user({auth.SESSION_KEY: "forged"}) is None
    assert auth.session_user({}) is None


def test_demo_users_are_private_files_whose_passwords_verify(tmp_path: Path) -> None:
    path, passwords = auth.write_demo_users(tmp_path / "dashboards")
    users = auth.load_users(path)
    assert set(passwords) == {"manager", "surveillance"}
    for name, password in passwords.items():
        assert auth.authenticate(users, name, password).role.value == name
    for file in (path, path.with_name("demo-credentials.txt")):
        assert stat.S_IMODE(os.stat(file).st_mode) == 0o600


def test_missing_users_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(auth.UsersFileError, match="croupier dashboard"):
        auth.load_users(tmp_path / "none.toml")
