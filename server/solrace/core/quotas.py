"""Fair shares of what the server holds: no client, nor a crowd of addresses, can take it all.

Every cap a client can fill (connections, races, tournaments, a tournament's entrants) is
guarded three ways, by :func:`admit`:

- the cap itself (``limit_reached`` once it is full);
- a **share per client address**: one address holds at most so many (a club behind one
  address fits; one machine cannot fill the server alone);
- a **reserve**: the last part of the cap (:data:`QUOTA_RESERVE`, a fifth) is kept for addresses
  that hold nothing yet. A flood from a hundred addresses fills the cap up to the reserve,
  takes one more each, and stops there; a newcomer still gets in.

Addresses are compared by :func:`client_key`: an IPv6 client is its /64 network (one host
gets a whole /64 and could otherwise rotate through it). Pure: no I/O.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from solrace.core.errors import Code
from solrace.core.race_parts import RaceError
from solrace.settings import (
    CONNECTIONS_PER_ADDRESS,
    ENTRANTS_PER_ADDRESS,
    HOUSE_BOTS,
    HOUSE_BOTS_PER_ADDRESS,
    MAX_LOBBIES,
    MAX_RACES,
    MAX_TOURNAMENTS,
    QUOTA_RESERVE,
    QUOTA_SMALL,
    RACES_PER_ADDRESS,
    TOURNAMENTS_PER_ADDRESS,
)


@dataclass
class Caps:
    """The caps of one server process and each address's share of them (``--max-*``)."""

    races: int = MAX_RACES
    races_per_address: int = RACES_PER_ADDRESS
    lobbies: int = MAX_LOBBIES  # races not started yet, per address and per connection
    tournaments: int = MAX_TOURNAMENTS
    tournaments_per_address: int = TOURNAMENTS_PER_ADDRESS
    entrants_per_address: int = ENTRANTS_PER_ADDRESS  # in one tournament
    connections: int = 1 << 30
    connections_per_address: int = CONNECTIONS_PER_ADDRESS
    house_bots: int = HOUSE_BOTS  # playing at once
    house_bots_per_address: int = HOUSE_BOTS_PER_ADDRESS


def client_key(address: str) -> str:
    """The unit of fairness for an address: itself, or its /64 network for IPv6."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def refusal(held: int, used: int, cap: int, share: int, need: int = 1) -> str | None:
    """Why a client holding ``held`` may not take ``need`` more when ``used`` of ``cap`` are
    taken (None: he may): ``"full"``, ``"share"`` or ``"reserve"``."""
    if used + need > cap:
        return "full"
    if held + need > share:
        return "share"
    reserve = math.ceil(cap * QUOTA_RESERVE) if cap >= 10 else 0
    if used + need > cap - reserve and held >= QUOTA_SMALL:
        return "reserve"
    return None


def outside_reserve(used: int, cap: int, need: int) -> bool:
    """Do ``need`` more fit in the cap without touching the reserve? (What a tournament's
    round asks: its races come in dozens, the reserve is for single players.)"""
    reserve = math.ceil(cap * QUOTA_RESERVE) if cap >= 10 else 0
    return used + need <= cap - reserve


def admit(what: str, held: int, used: int, cap: int, share: int, need: int = 1) -> None:
    """Raise ``limit_reached`` (a RaceError) with a sentence a player understands if the
    client may not take ``need`` more ``what`` (see :func:`refusal`)."""
    why = refusal(held, used, cap, share, need)
    if why == "full":
        raise RaceError(Code.LIMIT_REACHED, f"this server holds as many {what} as it can: try "
                        "again later")
    if why == "share":
        raise RaceError(Code.LIMIT_REACHED, f"your network already holds {held} {what}, its "
                        f"share of this server: finish some first")
    if why == "reserve":
        raise RaceError(Code.LIMIT_REACHED, f"this server is nearly full of {what}; the rest is "
                        "kept for players who hold none: finish some first")
