"""When a deal becomes public: the races that share one deal, and whether it is revealed.

Every racer of a race plays the same deal; so do the races of one tournament round. Such a group
is a :class:`SharedDeal`. Until every race of the group is over, nothing of the deal is public: not
the seed, the salt, the move lists, the replays, nor any card beyond what the views rule allows
(:mod:`solrace.core.views`, which takes its "racers still racing" from here). Once the last race of
the group ends, everything is: the deal is *revealed*.

A race on its own is a group of one (revealed by its ``race_over``). A deal may also be *held*
past the end of its races (the daily deal: until every attempt of the day has ended): it is
revealed only once :meth:`SharedDeal.release` is told a time past ``held_until``. Pure: no
I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Generic, Protocol, TypeVar


class SeenCards(Protocol):
    """A racer's game, as far as the deal cares: the cards it has had face up (a bitmask)."""

    @property
    def seen(self) -> int: ...


class DealRacer(Protocol):
    """A racer, as far as the deal cares."""

    @property
    def done(self) -> bool: ...

    @property
    def game(self) -> SeenCards: ...


class DealRace(Protocol):
    """A race, as far as the deal cares (:class:`solrace.core.race.Race` is one; this module
    does not import it, which imports this one)."""

    deal: Any

    @property
    def status(self) -> str: ...

    @property
    def racers(self) -> Mapping[str, DealRacer]: ...


R = TypeVar("R", bound=DealRace)


class SharedDeal(Generic[R]):
    """The races that play one deal (see the module docstring)."""

    def __init__(self, races: list[R]) -> None:
        self.races = races
        self._common: int | None = None
        self._common_valid = False
        #: Until when (unix ms) the deal stays secret even once its races are over.
        self.held_until: int | None = None

    @property
    def revealed(self) -> bool:
        """True once every race of the deal is over (and it is not held): seed, salt, moves
        and cards are public."""
        return self.held_until is None and all(race.status == "finished" for race in self.races)

    def release(self, now: int) -> None:
        """A held deal is no longer held from ``held_until`` on."""
        if self.held_until is not None and now >= self.held_until:
            self.held_until = None

    def racers(self) -> Iterator[DealRacer]:
        for race in self.races:
            yield from race.racers.values()

    def still_racing(self) -> Iterator[DealRacer]:
        """Racers of the deal who have neither finished nor resigned, in races not over."""
        for race in self.races:
            if race.status != "finished":
                for racer in race.racers.values():
                    if not racer.done:
                        yield racer

    def common(self) -> int | None:
        """The cards every racer still racing has had face up (a bitmask): what anyone else may
        be shown. ``None`` when nobody races any more (nothing is hidden then)."""
        if not self._common_valid:
            common: int | None = None
            for racer in self.still_racing():
                seen = racer.game.seen
                common = seen if common is None else common & seen
            self._common = common
            self._common_valid = True
        return self._common

    def changed(self) -> None:
        """Some racer saw a new card or stopped racing: :meth:`common` must be worked out
        again."""
        self._common_valid = False

    def join(self, race: R) -> None:
        """Add ``race`` to this deal (a tournament round's next race on the same seed)."""
        if race not in self.races:
            self.races.append(race)
            race.deal = self
            self.changed()
