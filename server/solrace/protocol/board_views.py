"""One racer's board as every follower of the race may see it (the views rule of
:mod:`solrace.core.views`), each distinct view built and encoded once, however many
connections share it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from solrace.core.views import SPECTATORS, Viewer, for_audience, mask, seat_of
from solrace.protocol import messages
from solrace.protocol.event import Event

if TYPE_CHECKING:
    from solrace.core.race import Race

Message = dict[str, Any]


class BoardViews:
    """One racer's latest board as an unnumbered ``board`` view, for one audience of the race
    (:data:`SPECTATORS` or :data:`RACERS`), each distinct view encoded once.

    Published on the race's bus like an :class:`~solrace.protocol.event.Event`; each subscriber asks
    :meth:`pick` for its own view. The board and every viewer's mask are taken at the moment
    of the pick (the in-process bus delivers at once), and views that hide the same cards
    share one message and its encodings.
    """

    __slots__ = ("_full", "_masked", "_outsiders", "audience", "masking", "player", "race",
                 "racer", "up")

    to: str | None = None

    def __init__(self, race: Race, player: str, audience: str, masking: bool = True) -> None:
        self.race = race
        self.player = player
        self.racer = race.racers[player]
        self.audience = audience
        self.masking = masking
        self.up = self.racer.game.face_up()
        self._full: Event | None = None
        self._masked: dict[int, Event] = {}
        self._outsiders: Event | None = None  # the view of whoever races nowhere

    def _message(self, board: Message) -> Event:
        return Event(messages.board(self.race.race, self.player, board))

    def pick(self, viewer: Viewer, race: str) -> Event | None:
        """The view for ``viewer``, or None when this audience is not his."""
        if not viewer.players:
            # A spectator who races nowhere: one answer for a whole crowd of them.
            if self.audience != SPECTATORS:
                return None
            if self._outsiders is None:
                self._outsiders = self._pick(viewer, race)
            return self._outsiders
        return self._pick(viewer, race)

    def _pick(self, viewer: Viewer, race: str) -> Event | None:
        if not for_audience(viewer, race, self.audience, self.player):
            return None
        m = mask(self.race.deal, seat_of(viewer, self.race), self.masking)
        hidden = 0 if m is None else self.up & ~m
        if not hidden:
            if self._full is None:
                self._full = self._message(self.racer.game.board())
            return self._full
        event = self._masked.get(hidden)
        if event is None:
            event = self._masked[hidden] = self._message(self.racer.game.board(mask=m))
        return event
