"""Who may see which card: the views rule of the contract, and boards encoded once per view.

All racers of a race play the same deal, so a card face up on one racer's board may still lie
face down on another's; showing it would tell the second racer what is under his own cards.
Cards are compared as physical cards (deal positions; in Quadruple Canfield, which of the four
copies), as the bitmasks ``solrules.Game.seen`` and ``face_up()``. Before the deal is revealed
(:mod:`solrace.core.shared_deal`):

- a racer's own board: every face-up card (his ``state``);
- another racer's board, to a racer still racing: only the cards that racer has had face up
  himself (his ``seen``);
- to anyone else (spectators, the host, the HTTP API, racers of other races): only the cards
  every racer still racing in the deal has had face up (:meth:`SharedDeal.common`); a racer who has
  finished or resigned sees those plus his own;
- once the deal is revealed, everything.

:mod:`solrace.protocol.board_views` sends one racer's board to every follower as each may
see it, by this rule. Pure: no I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from solrace.core.race import Race
    from solrace.core.racer import Racer
    from solrace.core.shared_deal import SharedDeal


class Viewer(Protocol):
    """Who receives a board: the racers he speaks for (race → player) and the races he
    follows (race → whether he wants the other racers' boards)."""

    players: dict[str, str]
    follows: dict[str, bool]

Message = dict[str, Any]

#: Spectators and other outsiders (every 100 ms) or the race's own racers (every 250 ms).
SPECTATORS = "spectators"
RACERS = "racers"


def mask(deal: SharedDeal[Race], seat: Racer | None, masking: bool = True) -> int | None:
    """The cards of ``deal`` that the holder of ``seat`` (a racer of the deal, or None for
    anyone else) may be shown on boards other than his own; None: every card."""
    if not masking or deal.revealed:
        return None
    common = deal.common()
    if common is None and deal.held_until is not None:
        common = 0  # nobody races any more, but the deal is held: nothing is shown
    if seat is None:
        return common
    if not seat.done:
        return seat.game.seen
    return None if common is None else seat.game.seen | common


def seat_of(viewer: Viewer, race: Race) -> Racer | None:
    """The racer of ``race``'s deal that ``viewer`` is bound to (in this race, or in another
    race of the same tournament round), or None."""
    player = viewer.players.get(race.race)
    if player is not None:
        return race.racers.get(player)
    races = race.deal.races
    if len(races) > 1:
        for other in races:
            player = viewer.players.get(other.race)
            if player is not None:
                return other.racers.get(player)
    return None


def board_for(race: Race, player: str, seat: Racer | None, masking: bool = True) -> Message:
    """``player``'s board in ``race`` as the holder of ``seat`` may see it."""
    racer = race.racers[player]
    if seat is racer:
        return racer.game.board()
    return racer.game.board(mask=mask(race.deal, seat, masking))


def for_audience(viewer: Viewer, race: str, audience: str, player: str) -> bool:
    """Are board views of ``player`` for ``audience`` meant for ``viewer``? A racer gets the
    racers' views of his opponents (if he wants boards); everyone else the spectators'."""
    own = viewer.players.get(race)
    if audience == RACERS:
        return own is not None and own != player and viewer.follows.get(race, True)
    return own is None
