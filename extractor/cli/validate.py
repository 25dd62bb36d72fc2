"""``extractor validate``: run the validation gate over an extraction made elsewhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

import click

from ..conversation import Conversation, iter_inputs
from ..errors import ExtractorError, InputError
from ..validation import ValidationOptions, validate_extraction
from ._base import EXIT_OK, EXIT_REJECTED, UnusableInput, rejection_line


@click.command()
@click.argument("conversation", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.argument("extraction", type=click.File("rb"))
@click.option("--allow-system-sources", is_flag=True, help="Let system text be quoted.")
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
def validate(
    conversation: Path, extraction: IO[bytes], allow_system_sources: bool, as_json: bool
) -> None:
    """Check an extraction produced elsewhere against its conversation.

    Exit code 0 when every candidate is accepted, 1 when any is rejected, 2 when the inputs
    cannot be read.

    \b
    Example:
        extractor validate conversation.json extraction.json
    """
    convs = list(iter_inputs([conversation]))
    if len(convs) != 1:
        raise click.UsageError(
            f"{conversation}: expected exactly one conversation, got {len(convs)}"
        )
    conv = convs[0]
    if isinstance(conv, InputError):
        raise UnusableInput(str(conv))
    assert isinstance(conv, Conversation)
    try:
        report = validate_extraction(
            extraction.read(), conv, ValidationOptions(allow_system_sources=allow_system_sources)
        )
    except ExtractorError as exc:
        raise UnusableInput(f"{extraction.name}: {exc}") from None
    if as_json:
        click.echo(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        click.echo(f"{len(report.accepted)} accepted, {len(report.rejections)} rejected")
        for c in report.corrections:
            click.echo(f"corrected {c.candidate_id}: [{c.claimed_start}:{c.claimed_end}] -> "
                       f"[{c.start}:{c.end}]")  # fmt: skip
        for e in report.content_corrections:
            click.echo(f"corrected {e.candidate_id}: content -> {e.content}")
        for r in report.rejections:
            click.echo(rejection_line(r))
    raise SystemExit(EXIT_OK if report.ok else EXIT_REJECTED)
