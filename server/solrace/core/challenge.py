"""Challenges: one player asks another — by name, or anyone who opens a link — to a race of two.
Pure: time comes in as an argument (unix ms), ids from the caller.

A challenge names its game and time limit (those of a quick race) and whether the challenger
asked for a rated race; it is rated only when both are accounts (and then the rules of rated
play still apply when it is scored: one network, or the same two too often, is casual). It
waits until the other player accepts (both are seated in a new race at once: a seated race of
two, as a quick race), declines, or the challenger cancels it, or until its end
(``expires_at``: solrace.service.challenges sets it). A declined link stays open for whoever
else has it; a named challenge ends.

What a client can make the server hold here is bounded (:func:`refusal`): open challenges per
challenger, named challenges waiting for one player (nobody's screen fills with them), per
client network (with the fair share and reserve of :mod:`solrace.core.quotas`) and in all.
:class:`ChallengeBook` keeps the open challenges of one process (the embedded server); with
several processes they are Redis's (:mod:`solrace.cluster.challenges`), under the same rule.
"""

from __future__ import annotations

import heapq
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from solrace.core.errors import Code
from solrace.core.quotas import refusal as quota_refusal
from solrace.core.race_parts import RaceError
from solrace.settings import (
    CHALLENGES_PER_ADDRESS,
    CHALLENGES_PER_PLAYER,
    CHALLENGES_TO_PLAYER,
    MAX_CHALLENGES,
)

Message = dict[str, Any]

#: Milliseconds an expired challenge is kept after its end, for its process's timer to take it
#: and tell its players (a timer fires a little late): only then is it dropped unseen.
KEPT_AFTER_MS = 60_000


@dataclass(frozen=True, slots=True)
class Challenge:
    """An open challenge: who made it (his id, name, shown rating and whether it is
    provisional, whether he is an account, his network's tag and his client network for the
    bound per network), the race it asks for, when it ends, and whom it is for (``to``: a
    player's id; empty for a link anyone may take)."""

    id: str
    by: str
    by_name: str
    game: str
    time_limit: int
    rated: bool
    created_at: int
    expires_at: int
    by_rating: int = 1500
    by_provisional: bool = True
    by_account: bool = False
    by_net: str = ""
    network: str = ""
    to: str = ""
    to_name: str = ""

    @property
    def link(self) -> str:
        """The path of its page, which anyone may open."""
        return f"/challenge/{self.id}"

    def view(self) -> Message:
        """The challenge as its players' pages see it (no network, no tag)."""
        out: Message = {"challenge": self.id, "by": {"id": self.by, "name": self.by_name,
                                                     "rating": self.by_rating,
                                                     "provisional": self.by_provisional},
                        "game": self.game, "time_limit": self.time_limit,
                        "rated": self.rated, "created_at": self.created_at,
                        "expires_at": self.expires_at, "link": self.link,
                        "to": {"id": self.to, "name": self.to_name} if self.to else None}
        return out

    def dumps(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def loads(cls, raw: str | bytes) -> Challenge:
        """A challenge as stored (JSON); fields this version does not know are ignored."""
        data = json.loads(raw)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def refusal(by_player: int, to_player: int, by_network: int, total: int) -> str | None:
    """Why one more challenge may not be opened when its challenger has ``by_player`` open,
    its player has ``to_player`` waiting for him (named ones only), its network ``by_network``
    and ``total`` are open: ``"player"``, ``"to"``, or a reason of
    :func:`solrace.core.quotas.refusal`; None: it may. (The Redis script applies the same
    rule: :mod:`solrace.cluster.challenges`.)"""
    if by_player >= CHALLENGES_PER_PLAYER:
        return "player"
    if to_player >= CHALLENGES_TO_PLAYER:
        return "to"
    return quota_refusal(by_network, total, MAX_CHALLENGES, CHALLENGES_PER_ADDRESS)


def refuse(why: str | None, by_network: int = 0) -> None:
    """Raise ``limit_reached`` saying why (see :func:`refusal`); nothing for None."""
    if why == "player":
        raise RaceError(Code.LIMIT_REACHED, f"you have {CHALLENGES_PER_PLAYER} challenges open "
                        "already: wait for an answer, or cancel one")
    if why == "to":
        raise RaceError(Code.LIMIT_REACHED, "this player has too many challenges waiting for "
                        "him: try again in a minute")
    if why == "share":
        raise RaceError(Code.LIMIT_REACHED, f"your network already has {by_network} open "
                        "challenges, its share: wait for their answers first")
    if why is not None:  # full, or the reserve kept for networks with none
        raise RaceError(Code.LIMIT_REACHED, "the server holds as many open challenges as it can: "
                        "try again later")


@dataclass
class ChallengeBook:
    """The open challenges of one process, with the counts :func:`admit` needs; expired
    ones are dropped as time goes by (:meth:`prune`, run by every call)."""

    challenges: dict[str, Challenge] = field(default_factory=dict)
    by: dict[str, set[str]] = field(default_factory=dict)
    to: dict[str, set[str]] = field(default_factory=dict)
    networks: dict[str, set[str]] = field(default_factory=dict)
    ends: list[tuple[int, str]] = field(default_factory=list)  # a heap: (expires_at, id)

    def open(self, ch: Challenge, now: int, check: bool = True) -> None:
        """Hold ``ch`` until it is taken or expires; RaceError ``limit_reached`` (nothing
        held) when over a bound (``check`` false: a challenge given back, held again)."""
        self.prune(now)
        if check:
            held = len(self.networks.get(ch.network, ()))
            refuse(refusal(len(self.by.get(ch.by, ())),
                           len(self.to.get(ch.to, ())) if ch.to else 0, held,
                           len(self.challenges)), held)
        self.challenges[ch.id] = ch
        for index, key in ((self.by, ch.by), (self.to, ch.to), (self.networks, ch.network)):
            if key:
                index.setdefault(key, set()).add(ch.id)
        heapq.heappush(self.ends, (ch.expires_at, ch.id))

    def get(self, cid: str, now: int) -> Challenge | None:
        """The open challenge ``cid`` (None if there is none, or it has expired)."""
        self.prune(now)
        ch = self.challenges.get(cid)
        return ch if ch is not None and ch.expires_at > now else None

    def take(self, cid: str) -> Challenge | None:
        """Take ``cid`` out (accepted, declined, cancelled, or its end came): the challenge,
        expired or not, or None if it was taken already. Only one caller ever gets it."""
        ch = self.challenges.pop(cid, None)
        if ch is None:
            return None
        for index, key in ((self.by, ch.by), (self.to, ch.to), (self.networks, ch.network)):
            ids = index.get(key)
            if ids is not None:
                ids.discard(cid)
                if not ids:
                    del index[key]
        return ch

    def of(self, player: str, now: int) -> tuple[list[Challenge], list[Challenge]]:
        """The open challenges made for ``player`` and by him, oldest first."""
        self.prune(now)

        def listed(ids: set[str]) -> list[Challenge]:
            return sorted((c for c in map(self.challenges.__getitem__, ids)
                           if c.expires_at > now), key=lambda c: (c.created_at, c.id))

        return listed(self.to.get(player, set())), listed(self.by.get(player, set()))

    def prune(self, now: int) -> list[Challenge]:
        """Drop the challenges whose end came ``KEPT_AFTER_MS`` ago (their process's timer
        took them then and told their players: these are only those it missed); the
        dropped."""
        dropped = []
        while self.ends and self.ends[0][0] + KEPT_AFTER_MS <= now:
            _, cid = heapq.heappop(self.ends)
            ch = self.challenges.get(cid)
            if ch is not None and ch.expires_at + KEPT_AFTER_MS <= now:
                dropped.append(ch)
                self.take(cid)
        return dropped
