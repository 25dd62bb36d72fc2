"""The offline model: a deterministic extractor (rules and one shipped scorer), no network.

:class:`OfflineClient` is the CLI's default model; :func:`offline_proposal` is what it answers
(``{"candidates": [...]}`` in output format 2), which goes through the same validation gate as
any model's; :func:`offline_extract` is the same extraction as full format-1 units. What
it extracts and how well is in ``docs/offline-model.md``.

Modules, by what their rules detect:

* :mod:`.model` -- the client and the assembler: which rules read which speaker, the candidate
  limit, numbering and parent links.
* :mod:`.statements` -- what a user says about themselves: the assertion event and the claim it
  makes (WORLD_PROPOSITION, PREFERENCE, PROCEDURE, FAILURE_EXPERIENCE); conversational moves
  (offers, reactions, small talk, apologies, talk about the exchange and to the other speaker
  about their part in it, tasks for them, fragments of an answer) yield nothing.
* :mod:`.standalone` -- whether a user's claim stands alone as a memory: pro-forms pointing
  into another message ("They mean the world to me."), fragments, vague stand-ins, moves that
  pass with the exchange (promises to follow advice, talk about the conversation, passing
  states); a pro-form resolved from the question it answers ("Do you have a dog?" -- "I do not
  have one." -> "User does not have a dog.").
* :mod:`.answers` -- bare answers ("Yes, two of them.") read against the question they answer,
  quoted whole, never cut inside a sentence; none to an either-or question, a question about
  the exchange or one leaning on another message.
* :mod:`.replies` -- the other speaker's sentence a reply is quoted with when its pro-form has
  no referent of its own (``Told "...", User replied: "..."``): the one that holds the referent,
  or nothing; never a remark on what both speakers share ("our health", "we both").
* :mod:`.claims` -- an assistant's declarative claims, as MODEL_INFERENCE: about the user, or
  about the world when they give a figure the user asked for or the application made a
  response-commitment decision on the message; echoes of the user, generalities and ratings
  ("Museums are very interesting places."), talk about the exchange, pleasantries, advice and
  offers yield nothing.
* :mod:`.tools` -- tool results as TOOL_OBSERVATION, attempted actions that failed as
  FAILURE_EXPERIENCE, claims a retrieval tool attributes to a source.
* :mod:`.cues` -- what makes a sentence a non-fact: questions (a first-person "I should ...?"
  too), hypotheticals (but not the speaker's own wish), sarcasm and jokes, instructions to the
  memory system, certification words, template slots ("[name]").
* :mod:`.entities` -- people, places, organizations, contact and health data.
* :mod:`.english` -- the first-person sentence rewritten in the third person about "User";
  whom a "we" takes in when the chat names one group (the sentence, the other speaker's
  question, the user's earlier messages of the session), else "User and others".
* :mod:`.text` -- sentence, line and clause spans with exact offsets (a request run on after a
  statement is a clause of its own); discourse openers, whom a greeting addresses ("Hey Gina,",
  "Hello, my friend."), closing pleasantries and question tags; fragments ("Like in my state.",
  a subordinate clause cut from its main clause).
* :mod:`.scorer` -- the one learned part: a linear sentence scorer (weights in
  ``data/scorer.json``, trained on the MSC dev half) that drops the chatter claims of a user
  message, always keeping its best-scored claim; :mod:`.train` regenerates the weights
  (``python -m extractor.offline.train msc-valid.jsonl``), byte for byte.
* :mod:`.sensible` -- the second learned part: a claim keeper trained on the labelled samples
  of ``evalsets/offline-real`` (weights in ``data/sensible.json``) that drops, within a user
  message, the claims a reader would not keep, always keeping the message's best claim;
  :mod:`.train_sensible` regenerates the weights.
* :mod:`.draft` -- drafts and groups, and the fields every rule fills the same way (uncertainty,
  time, hedges kept) with the gate's own patterns; time by grammar (a past event is
  POINT_IN_TIME and stays true, a past state is PAST, a plan is FUTURE) and relative time
  written as its dates in the content ("yesterday" -> "on 2023-05-09").
"""

from __future__ import annotations

from .model import (
    MODEL_NAME,
    OfflineClient,
    estimate_usage,
    offline_extract,
    offline_proposal,
    offline_units,
)

__all__ = [
    "MODEL_NAME",
    "OfflineClient",
    "estimate_usage",
    "offline_extract",
    "offline_proposal",
    "offline_units",
]
