"""The master key's file (:class:`solrace.core.keys.MasterKey`): read once when ``solrace
serve`` starts, made at the first start if missing.

The key is kept outside the store it protects, so that a copy of the database (or of Redis's
files) tells nothing sealed in it: beside the SQLite file by default (``<db>.key``), or where
``--key-file`` / ``SOLRACE_KEY_FILE`` says — the same file for every process sharing a Redis
(compose.yaml mounts one volume in every replica). Keep it out of the database's backups, or
back it up apart: a backup that holds both tells everything the key seals.

The file holds 32 random bytes (:mod:`secrets`) as 64 hex digits and a newline, made readable
by its owner only (0600). A file of exactly 32 raw bytes is taken too (``head -c 32
/dev/urandom``). Anything else stops the server with :class:`KeyFileError`: a key that cannot
be read is never replaced by a new one silently. A missing file is made — whether the store is
new or not: what is lost with a key costs a refill of the pool and the network tags' history
(see :mod:`solrace.core.keys`), and refusing to start would not bring it back. Several
processes making it at once agree on one key: each writes a file of its own and links it to
the name, and only the first link succeeds; the others read that one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
from pathlib import Path

from solrace.core.keys import KEY_BYTES, MasterKey

log = logging.getLogger(__name__)

#: Where the key of an embedded server's database is kept when no file is named.
SUFFIX = ".key"


class KeyFileError(Exception):
    """The key's file cannot be read or made: the server does not start (the message says
    why, for the operator)."""


def default_for(db: str | Path) -> Path:
    """The key's file beside an SQLite database: ``<db>.key``."""
    return Path(f"{db}{SUFFIX}")


def parse(data: bytes) -> bytes:
    """The secret in a key file's bytes: 64 hex digits (surrounding whitespace ignored) or
    exactly 32 raw bytes. ValueError for anything else."""
    text = data.strip()
    if len(text) == 2 * KEY_BYTES:
        with contextlib.suppress(ValueError):
            return bytes.fromhex(text.decode("ascii"))
    if len(data) == KEY_BYTES:
        return data
    raise ValueError(f"a key file holds {2 * KEY_BYTES} hex digits or {KEY_BYTES} raw bytes")


def read(path: Path) -> MasterKey:
    """The key in ``path`` (:class:`KeyFileError` if it cannot be read). A file that others
    than its owner may read is used, with a warning: it should not be."""
    try:
        data = path.read_bytes()
        mode = path.stat().st_mode
    except OSError as exc:
        raise KeyFileError(f"cannot read the master key's file {path}: {exc}") from exc
    try:
        secret = parse(data)
    except ValueError as exc:
        raise KeyFileError(f"{path} is not a master key's file ({exc}): restore the right "
                           f"file, or move this one away to make a new key") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("the master key's file %s can be read by others than its owner "
                    "(chmod 600 it)", path)
    return MasterKey(secret)


def load_or_create(path: Path) -> tuple[MasterKey, bool]:
    """The key in ``path``, made first if the file is missing; and whether it was made now
    (see the module docstring)."""
    if path.exists():
        return read(path), False
    secret = secrets.token_bytes(KEY_BYTES)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, secret.hex().encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, path)  # complete and private from the first moment it has its name
            made = True
        except FileExistsError:  # another process made it meanwhile: theirs is the key
            made = False
        _sync_directory(path.parent)
    except OSError as exc:
        raise KeyFileError(f"cannot make the master key's file {path}: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()
    return (MasterKey(secret), True) if made else (read(path), False)


def _sync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
