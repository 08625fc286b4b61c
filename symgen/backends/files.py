"""Writing a set of generated files all together or not at all.

Every file is first written whole to a temporary in the destination directory; only when all
are written are they renamed into place (``os.replace``, atomic on POSIX and Windows). A
failure before the renames leaves the destination untouched; a failure during them puts back
the files already replaced (from hard-link backups, where the file system has them), so a
header and its source never mismatch. Temporaries are created with mode 0666 through the
process umask, like any file the user writes; the umask is never changed (that would be
process-global and race with other threads).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from symgen.errors import SymgenError


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _new_temporary(directory: Path, name: str) -> tuple[int, Path]:
    """An exclusive new file ``.<name>.<random>.tmp`` in ``directory``: its fd and path."""
    for _ in range(100):
        path = directory / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name for {name} in {directory}")


def _backup(dest: Path) -> Path | None:
    """A hard link to the current ``dest`` (None when links fail)."""
    link = dest.with_name(f".{dest.name}.{secrets.token_hex(6)}.old")
    try:
        os.link(dest, link)
    except OSError:
        return None
    return link


def write_files_atomically(directory: str | os.PathLike, files: Mapping[str, str]) -> list[Path]:
    """Write ``files`` (name -> text, UTF-8) into ``directory`` (created if needed) all
    together; returns the written paths in order. Raises :class:`SymgenError` naming the
    destination file (never a temporary) and the system's reason."""
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SymgenError(f"cannot create the directory {out}: {_reason(exc)}") from None
    temporaries: dict[Path, Path] = {}  # destination -> temporary
    backups: dict[Path, Path | None] = {}  # destination that exists -> its backup link
    replaced: list[Path] = []
    dest = out
    try:
        for name, text in files.items():
            dest = out / name
            fd, tmp = _new_temporary(out, name)
            temporaries[dest] = tmp
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        for dest in temporaries:
            if dest.is_file():
                backups[dest] = _backup(dest)
        for dest, tmp in temporaries.items():
            os.replace(tmp, dest)
            replaced.append(dest)
    except OSError as exc:
        _roll_back(replaced, backups)
        raise SymgenError(f"cannot write {dest}: {_reason(exc)}") from None
    finally:
        for path in [*temporaries.values(), *(b for b in backups.values() if b)]:
            path.unlink(missing_ok=True)
    return list(temporaries)


def _roll_back(replaced: list[Path], backups: Mapping[Path, Path | None]) -> None:
    """Put back the previous content of each file in ``replaced``, or remove it when it did
    not exist before (best effort: a file whose backup could not be made stays new)."""
    for dest in replaced:
        try:
            if dest not in backups:
                dest.unlink(missing_ok=True)
            elif (old := backups[dest]) is not None:
                os.replace(old, dest)
        except OSError:
            pass


__all__ = ["write_files_atomically"]
