"""The key store: API keys bound to a tenant, a caller and a grant, hashed at rest (SQLite).

A key is shown once, when it is created (``mce_<key_id>_<secret>``); the store keeps only its
SHA-256 digest. A key is a random 192-bit secret, so a fast digest is the right one: nothing can
be guessed from it and checking a key costs one indexed lookup, the same for every key, known or
not. Revoking a key takes effect on the next request of every running service that uses the same
file, since nothing is cached.

Tables (a public contract, documented in docs/server.md; changed only by a new named migration):

``api_keys``
    ``key_id`` (primary key), ``key_hash`` (``sha256:<hex>`` of the whole token, unique),
    ``tenant``, ``caller``, ``scopes`` and ``purposes`` (JSON lists), ``created_at``,
    ``revoked_at`` (NULL while the key is valid).
``migrations``
    ``name``, ``applied_at``: one row per applied migration.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..errors import KeyStoreError
from ..vocab import DEFAULT_SCOPES, Capability, Scope

TOKEN_PREFIX = "mce"
#: Tenants and callers: a letter or digit, then up to 127 letters, digits or ``. _ : @ -``.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
_NAME = re.compile(NAME_PATTERN)
_TOKEN = re.compile(rf"^{TOKEN_PREFIX}_([0-9a-f]{{16}})_([0-9a-f]{{48}})$")


class ApiKey(BaseModel):
    """A key as the store records it (never its secret)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key_id: str
    tenant: str
    caller: str
    scopes: tuple[Scope, ...]
    purposes: tuple[Capability, ...]
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


def hash_token(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(kind: str, value: str) -> str:
    """``value`` as a tenant or caller name; :class:`KeyStoreError` naming the option if not."""
    if not _NAME.match(value):
        raise KeyStoreError(
            f"--{kind} {value!r} is not a valid {kind} name: use 1-128 letters, digits or "
            "'._:@-', starting with a letter or digit"
        )
    return value


def m001_api_keys(db: sqlite3.Connection) -> None:
    """The ``api_keys`` table."""
    db.execute("""CREATE TABLE api_keys (
    key_id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    caller TEXT NOT NULL,
    scopes TEXT NOT NULL,
    purposes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
)""")
    db.execute("CREATE INDEX idx_api_keys_tenant ON api_keys (tenant)")


#: Every migration, in order. Append only.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [m001_api_keys]

_COLUMNS = "key_id, tenant, caller, scopes, purposes, created_at, revoked_at"


class KeyStore:
    """API keys in a SQLite file, created on first use. Safe to share across threads."""

    def __init__(
        self,
        path: Path | str,
        *,
        create: bool = True,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.path = Path(path)
        self._clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.Lock()
        if not create and str(path) != ":memory:" and not self.path.is_file():
            raise KeyStoreError(
                f"no key store at {self.path}: create a key first with "
                f"'extractor keys create --keys {self.path} --tenant T --caller C'"
            )
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._migrate()
        except sqlite3.Error as exc:
            raise KeyStoreError(f"cannot open the key store {self.path}: {exc}") from None

    def close(self) -> None:
        self._db.close()

    def create(
        self,
        *,
        tenant: str,
        caller: str,
        scopes: Sequence[Scope] = DEFAULT_SCOPES,
        purposes: Sequence[Capability] = (),
    ) -> tuple[ApiKey, str]:
        """A new key; returns its record and the token, which is never shown again."""
        key_id = secrets.token_hex(8)
        token = f"{TOKEN_PREFIX}_{key_id}_{secrets.token_hex(24)}"
        key = ApiKey(
            key_id=key_id,
            tenant=check_name("tenant", tenant),
            caller=check_name("caller", caller),
            scopes=tuple(sorted(set(scopes))),
            purposes=tuple(sorted(set(purposes))),
            created_at=self._clock(),
        )
        row = (key.key_id, hash_token(token), key.tenant, key.caller,
               json.dumps(list(key.scopes)), json.dumps(list(key.purposes)),
               key.created_at.isoformat())  # fmt: skip
        with self._transaction() as db:
            db.execute(
                "INSERT INTO api_keys (key_id, key_hash, tenant, caller, scopes, purposes, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                row,
            )
        return key, token

    def authenticate(self, token: str) -> ApiKey | None:
        """The key whose token this is (revoked or not), or ``None`` for any other string."""
        if not _TOKEN.match(token):
            return None
        with self._lock:
            found = self._db.execute(
                f"SELECT {_COLUMNS} FROM api_keys WHERE key_hash = ?", (hash_token(token),)
            ).fetchone()
        return None if found is None else _key(found)

    def list(self, *, tenant: str | None = None) -> list[ApiKey]:
        """Every key, oldest first; only ``tenant``'s when given."""
        where, args = ("WHERE tenant = ?", (tenant,)) if tenant is not None else ("", ())
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM api_keys {where} ORDER BY created_at, key_id", args
            ).fetchall()
        return [_key(row) for row in rows]

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key (idempotent: a revoked key keeps its first revocation time)."""
        with self._transaction() as db:
            db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL",
                (self._clock().isoformat(), key_id),
            )
            found = db.execute(
                f"SELECT {_COLUMNS} FROM api_keys WHERE key_id = ?", (key_id,)
            ).fetchone()
        if found is None:
            raise KeyStoreError(
                f"no key {key_id!r} in {self.path} (see 'extractor keys list --keys {self.path}')"
            )
        return _key(found)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _migrate(self) -> None:
        self._db.execute("CREATE TABLE IF NOT EXISTS migrations "
                         "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")  # fmt: skip
        for migration in MIGRATIONS:
            with self._transaction() as db, closing(db.cursor()) as cursor:
                done = cursor.execute(
                    "SELECT 1 FROM migrations WHERE name = ?", (migration.__name__,)
                ).fetchone()
                if done is None:
                    migration(db)
                    cursor.execute(
                        "INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
                        (migration.__name__, self._clock().isoformat()),
                    )


def _key(row: tuple[str, ...]) -> ApiKey:
    key_id, tenant, caller, scopes, purposes, created_at, revoked_at = row
    return ApiKey(
        key_id=key_id,
        tenant=tenant,
        caller=caller,
        scopes=tuple(Scope(s) for s in json.loads(scopes)),
        purposes=tuple(Capability(p) for p in json.loads(purposes)),
        created_at=datetime.fromisoformat(created_at),
        revoked_at=datetime.fromisoformat(revoked_at) if revoked_at else None,
    )


__all__ = ["ApiKey", "KeyStore", "hash_token"]
