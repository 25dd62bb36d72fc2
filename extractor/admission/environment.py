"""Does a procedure state the environment in which it succeeded?

Seed section 15: a successful trajectory is only reusable together with the conditions under
which success was established (command, tool versions, OS/runtime, preconditions); otherwise
"this command sequence solved the issue" gets imitated in a different environment. Candidates
have no structured environment field, so this is a deterministic text check on the source
quote -- the words of a message, never the content, which a model writes and could fill with a
command or versions nobody wrote. All three parts must be present:

* a **command**: inline code (`` `...` ``), a shell prompt line (``$ ...``), or a well-known
  command-line tool followed by an argument (``pip install``, ``git checkout``, ...);
* a **version**: ``3.11``, ``v2.1.0``, ``==1.4``, ``@18``, ``version 7``;
* a **precondition**: an OS or runtime (Ubuntu, macOS, Windows, Docker, ...), a commit, a branch,
  or an explicit condition ("requires", "with ... installed", "after", "given", "when").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import caseless
from ..candidates import MemoryCandidate

_TOOLS = (
    "pip3?|pipx|npm|npx|yarn|pnpm|apt(?:-get)?|brew|git|docker|kubectl|helm|make|cmake|cargo|"
    "go|python3?|node|pytest|conda|poetry|uv|curl|wget|sudo|systemctl|chmod|chown|export|"
    "terraform|ansible|mvn|gradle|dotnet|gem|bundle|composer|rustup|nvm|pyenv"
)
COMMAND = re.compile(rf"`[^`\n]+`|^\s*\$\s+\S|\b(?:{_TOOLS})\s+-{{0,2}}[\w./:=@-]+", re.MULTILINE)
VERSION = re.compile(
    r"\bv?\d+\.\d+(?:\.\d+)*\b|==\s*\d|@\d|\bversion\s+\d|\b(?:python|node|java|go|ruby)\s*\d",
    re.IGNORECASE,
)
PRECONDITION = re.compile(
    r"\b(?:ubuntu|debian|fedora|centos|alpine|arch linux|rhel|linux|macos|mac os|os x|windows|"
    r"wsl|docker|kubernetes|ios|android|commit\s+[0-9a-f]{7,40}|branch\s+\S+|on\s+main|"
    r"requires?|required|with\s+\S+(?:\s+\S+)?\s+installed|after\s+\w+|given|precondition|"
    r"when\s+\w+|as\s+root|with\s+sudo|in\s+a\s+(?:venv|virtualenv))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Environment:
    command: bool
    version: bool
    precondition: bool

    @property
    def complete(self) -> bool:
        return self.command and self.version and self.precondition

    def missing(self) -> list[str]:
        parts = {"command": self.command, "version": self.version}
        parts["precondition"] = self.precondition
        return [name for name, present in parts.items() if not present]


def environment_of(candidate: MemoryCandidate) -> Environment:
    """Which parts of its environment a candidate's quote states."""
    text = candidate.source_span.quote
    return Environment(
        command=COMMAND.search(text) is not None,
        version=caseless.search(VERSION, text),
        precondition=caseless.search(PRECONDITION, text),
    )
