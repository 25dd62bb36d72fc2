"""``extractor eval``: run a model over the gold set (and optionally MSC) and print the figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..errors import ExtractorError
from ..evaluation import evaluate, load_evalset
from ..evaluation.faithfulness import (
    evaluate_faithfulness,
    faithfulness_json,
    render_faithfulness,
)
from ..evaluation.msc import evaluate_msc, iter_msc
from ..evaluation.render import msc_json, render_msc, render_report, report_json
from ..evaluation.runner import DEFAULT_CONCURRENCY
from ..models import get_client
from ._base import EXIT_OK, EXIT_REJECTED, UnusableInput
from ._common import model_options, policy_option


@click.command(name="eval")
@model_options(model_help="'offline' or a model name at --base-url.")
@click.option(
    "--set",
    "evalset",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Gold set (JSONL with a 'gold' field). Default: the shipped set.",
)
@policy_option
@click.option(
    "--msc",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Also score MSC turn-level user facts from this msc-valid.jsonl.",
)
@click.option("--msc-limit", type=click.IntRange(min=1), help="Only the first N MSC lines.")
@click.option(
    "--faithfulness",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Only measure the gate's faithfulness check on this msc-valid.jsonl (gold facts "
    "accepted, perturbations rejected; no model is run). --msc-limit applies.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=DEFAULT_CONCURRENCY,
    show_default=True,
    help="Conversations in flight at once.",
)
@click.option(
    "--lifecycle",
    is_flag=True,
    help="Instead: run the memory store's generated lifecycle scenarios (no model needed).",
)
@click.option(
    "--scenarios",
    type=click.IntRange(min=1),
    default=40,
    show_default=True,
    help="With --lifecycle: scenarios per family.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="With --lifecycle: RNG seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.pass_context
def eval_command(ctx: click.Context, /, **o: Any) -> None:
    """Run a model over the gold evaluation set through the real pipeline and print candidate
    precision / recall / F1 per memory type, span, hedge and temporal figures, and the safety
    figures (what the gate accepted or admitted that it must not).

    Exit codes: 0 every safety figure is zero; 1 some safety figure is not; 2 unusable input.

    \b
    Examples:
        extractor eval
        extractor eval --msc ../shared/data/msc-valid.jsonl --msc-limit 100
        extractor eval --faithfulness ../shared/data/msc-valid.jsonl
        extractor eval --model offline+verified:always --base-url http://127.0.0.1:8089/v1
        extractor eval --lifecycle --scenarios 200 --seed 1
    """
    if o["lifecycle"]:
        _lifecycle(ctx, o)
    if o["faithfulness"] is not None:
        _faithfulness(o["faithfulness"], o["msc_limit"], o["as_json"])
        return
    try:
        cases = load_evalset(o["evalset"])
        client = get_client(o["model"], base_url=o["base_url"], api_key=o["api_key"], cache=False)
        report = evaluate(
            cases,
            client,
            policy=o["policy"],
            concurrency=o["concurrency"],
            evalset=str(o["evalset"] or "shipped gold set"),
        )
        msc = None
        if o["msc"] is not None:
            msc_cases = list(iter_msc(o["msc"], limit=o["msc_limit"]))
            msc = evaluate_msc(msc_cases, client, policy=o["policy"], concurrency=o["concurrency"])
    except ExtractorError as exc:
        raise UnusableInput(str(exc)) from None
    if o["as_json"]:
        data: dict[str, Any] = {"evalset": report_json(report)}
        if msc is not None:
            data["msc"] = msc_json(msc)
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        click.echo(render_report(report))
        if msc is not None:
            click.echo("\n" + render_msc(msc))
    ctx.exit(EXIT_OK if report.safety.clean else EXIT_REJECTED)


def _lifecycle(ctx: click.Context, o: dict[str, Any]) -> None:
    """Taint escape, false/missed invalidation, restore correctness, exposure, descendants,
    corroboration, supersession and erasure residue over generated scenarios (seed §17)."""
    from ..evaluation.lifecycle import evaluate_lifecycle, render_lifecycle

    figures = evaluate_lifecycle(o["scenarios"], seed=o["seed"])
    if o["as_json"]:
        data = {**figures.model_dump(mode="json"), "safety": figures.safety, "clean": figures.clean}
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(render_lifecycle(figures))
    ctx.exit(EXIT_OK if figures.clean else EXIT_REJECTED)


def _faithfulness(path: Path, limit: int | None, as_json: bool) -> None:
    try:
        report = evaluate_faithfulness(path, limit=limit)
    except ExtractorError as exc:
        raise UnusableInput(str(exc)) from None
    if as_json:
        click.echo(json.dumps(faithfulness_json(report), indent=2, ensure_ascii=False))
    else:
        click.echo(render_faithfulness(report))
