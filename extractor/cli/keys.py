"""``extractor keys create/list/revoke``: the API keys of ``extractor serve``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import KeyStoreError
from ..vocab import DEFAULT_SCOPES, Capability, Scope
from ._base import UnusableInput

if TYPE_CHECKING:
    from ..service.keys import ApiKey, KeyStore


keys_option = click.option(
    "--keys",
    "path",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="EXTRACTOR_KEYS",
    required=True,
    help="The key store (a SQLite file). Env: EXTRACTOR_KEYS.",
)


@contextmanager
def open_keys(path: Path, *, create: bool) -> Iterator[KeyStore]:
    """The key store at ``path``; its errors (and a missing 'server' extra) exit 2."""
    try:
        from ..service.keys import KeyStore

        store = KeyStore(path, create=create)
    except (ImportError, KeyStoreError) as exc:
        raise UnusableInput(str(exc)) from None
    try:
        yield store
    except KeyStoreError as exc:
        raise UnusableInput(str(exc)) from None
    finally:
        store.close()


def _listed(vocabulary: type[StrEnum]) -> Any:
    """A click callback: a comma-separated list of ``vocabulary`` values."""
    allowed = [item.value for item in vocabulary]

    def parse(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
        items = [item.strip() for item in value.split(",") if item.strip()]
        unknown = [item for item in items if item not in allowed]
        if unknown:
            raise click.BadParameter(f"{', '.join(map(repr, unknown))}: expected a comma-"
                                     f"separated list of {', '.join(allowed)}")  # fmt: skip
        return items

    return parse


@click.group()
def keys() -> None:
    """Create, list and revoke the API keys of 'extractor serve'.

    A key is bound to one tenant and one caller, with the scopes (operations) and purposes (read
    capabilities) it may request. The store keeps only a hash of each key.

    \b
    Examples:
        extractor keys create --keys keys.sqlite --tenant acme --caller support-bot
        extractor keys list --keys keys.sqlite
        extractor keys revoke --keys keys.sqlite 0123456789abcdef
    """


@keys.command()
@keys_option
@click.option("--tenant", required=True, help="The tenant every request with the key works in.")
@click.option("--caller", required=True, help="Who uses the key (recorded in the read audit).")
@click.option(
    "--scopes", default=",".join(DEFAULT_SCOPES), show_default=True, callback=_listed(Scope),
    help=f"Operations the key may perform: {', '.join(Scope)}.",
)  # fmt: skip
@click.option(
    "--purposes", default="", callback=_listed(Capability),
    help="Purposes the key may read memories for (comma-separated): "
    f"{', '.join(Capability)}. Default: none.",
)  # fmt: skip
def create(path: Path, tenant: str, caller: str, scopes: list[str], purposes: list[str]) -> None:
    """Create a key and print it (it is shown only this once; the store keeps its hash).

    \b
    Example:
        extractor keys create --keys keys.sqlite --tenant acme --caller support-bot \\
            --purposes PERSONALIZATION,CONVERSATIONAL_CONTEXT
    """
    with open_keys(path, create=True) as store:
        key, token = store.create(tenant=tenant, caller=caller,
                                  scopes=[Scope(s) for s in scopes],
                                  purposes=[Capability(p) for p in purposes])  # fmt: skip
    click.echo(token)
    click.echo(f"created key {key.key_id} ({_grant(key)}); it is not shown again", err=True)


@keys.command("list")
@keys_option
@click.option("--tenant", help="Only this tenant's keys.")
@click.option("--json", "as_json", is_flag=True, help="Print the keys as a JSON array.")
def list_keys(path: Path, tenant: str | None, as_json: bool) -> None:
    """List the keys (never their secrets), oldest first.

    \b
    Example:
        extractor keys list --keys keys.sqlite --tenant acme
    """
    with open_keys(path, create=False) as store:
        found = store.list(tenant=tenant)
    if as_json:
        click.echo(json.dumps([k.model_dump(mode="json") for k in found], indent=2))
        return
    for key in found:
        state = f"revoked {key.revoked_at:%Y-%m-%dT%H:%M:%SZ}" if key.revoked_at else "active"
        click.echo(f"{key.key_id}  {state:<28} {_grant(key)}")


@keys.command()
@keys_option
@click.argument("key_id")
def revoke(path: Path, key_id: str) -> None:
    """Revoke a key: every service using this store refuses it from its next request on.

    \b
    Example:
        extractor keys revoke --keys keys.sqlite 0123456789abcdef
    """
    with open_keys(path, create=False) as store:
        key = store.revoke(key_id)
    click.echo(f"revoked key {key.key_id} ({_grant(key)})")


def _grant(key: ApiKey) -> str:
    return (f"tenant {key.tenant}, caller {key.caller}, scopes {','.join(key.scopes) or '-'}, "
            f"purposes {','.join(key.purposes) or '-'}")  # fmt: skip
