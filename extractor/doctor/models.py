"""What ``extractor doctor`` found out about a server, and what it recommends."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ModeOutcome = Literal["supported", "unsupported", "unreadable", "error"]


class ModeCheck(BaseModel):
    """One structured-output mode tried with a small extraction."""

    model_config = ConfigDict(extra="forbid")

    mode: str
    outcome: ModeOutcome
    detail: str = ""
    seconds: float | None = None


class Speeds(BaseModel):
    """Measured speeds; ``None`` when the server answered too fast to time (a mock) or not."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens_per_s: float | None = None
    generation_tokens_per_s: float | None = None
    round_trip_s: float | None = Field(
        default=None, description="A one-token answer to a one-line prompt."
    )
    single_slot: bool | None = Field(
        default=None, description="Two requests at once took about twice as long as one."
    )


class Recommendation(BaseModel):
    """Options of ``extractor run`` for this server (each one exists on ``extractor run``)."""

    model_config = ConfigDict(extra="forbid")

    mode: str | None
    max_tokens: int
    model_timeout: float
    concurrency: int
    max_chunk_chars: int
    system_as_user: bool = False

    def options(self) -> list[str]:
        """The recommendation as ``extractor run`` arguments."""
        args = [] if self.mode is None else ["--mode", self.mode]
        args += [
            "--max-tokens", str(self.max_tokens),
            "--model-timeout", f"{self.model_timeout:g}",
            "--concurrency", str(self.concurrency),
            "--max-chunk-chars", str(self.max_chunk_chars),
        ]  # fmt: skip
        return args + (["--system-as-user"] if self.system_as_user else [])


class DoctorReport(BaseModel):
    """Everything ``extractor doctor`` checked, in order."""

    model_config = ConfigDict(extra="forbid")

    base_url: str
    model: str
    local: bool
    reachable: bool
    authenticated: bool | None = None
    listed_models: list[str] | None = Field(
        default=None, description="GET /models, when the server has it."
    )
    system_prompt_delivered: bool | None = None
    modes: list[ModeCheck] = Field(default_factory=list)
    speeds: Speeds = Field(default_factory=Speeds)
    recommendation: Recommendation | None = None
    problems: list[str] = Field(default_factory=list)

    @property
    def usable(self) -> bool:
        """Whether ``extractor run`` can work with this server (some mode answered readably)."""
        return self.recommendation is not None and self.recommendation.mode is not None


__all__ = ["DoctorReport", "ModeCheck", "ModeOutcome", "Recommendation", "Speeds"]
