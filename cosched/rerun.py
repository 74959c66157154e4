"""The one rerun rule of the long commands (`experiment`, `experiment-sim`, `compare`, `measure`).

An output folder belongs to one run configuration, recorded in a key file written before the first
result (config.json, spec.json; for `compare` the identity columns of compare.csv). Running a
command again:

- a missing or empty folder: the run starts;
- a folder holding a run of the *same* configuration: the run resumes, keeping every finished row
and
  computing only the missing ones, so an interrupted run plus its rerun give exactly the rows of one
  uninterrupted run;
- a folder holding a run of another configuration, an unreadable key, or files this command did not
write:
  refused with one line naming the folder (InputError, exit 2), nothing is touched;
- with `--force`: the outputs this command owns in the folder (key, tables, plots, temporary
leftovers) are
  removed and the run starts over; files it does not own are left alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from cosched.errors import InputError
from cosched.locks import LOCK_FILE

__all__ = ["claim_output", "claim_rows", "json_key", "remove_owned", "digest", "FORCE_HINT"]

FORCE_HINT = "rerun with the same options to resume, or add --force to start over"


def digest(*parts) -> str:
    """Short stable content hash of strings, bytes, numpy arrays or files (pathlib.Path)."""
    sha = hashlib.sha256()
    for part in parts:
        if isinstance(part, Path):
            part = part.read_bytes()
        elif hasattr(part, "tobytes"):
            is_object = getattr(getattr(part, "dtype", None), "kind", "") == "O"  # object arrays
            part = (part.astype(str) if is_object else part).tobytes()
        elif not isinstance(part, bytes):
            part = repr(part).encode()
        sha.update(len(part).to_bytes(8, "little"))
        sha.update(part)
    return sha.hexdigest()[:16]


def json_key(
    expected: dict, normalise: Callable[[dict], dict] | None = None
) -> Callable[[Path], bool]:
    """A `matches` for `claim_output`: the key file is JSON equal to `expected` (after
    `normalise`)."""
    expected = json.loads(json.dumps(expected))

    def matches(path: Path) -> bool:
        try:
            stored = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise InputError(
                f"unreadable run configuration ({error}); add --force to start over",
                source=str(path),
            ) from None
        if normalise is not None and isinstance(stored, dict):
            stored = normalise(stored)
        return stored == expected

    return matches


def _owned(entry: Path, owned: tuple[str, ...]) -> bool:
    name = entry.name
    # atomic_path leftovers
    return name in owned or any(name.startswith(f".{item}.") for item in owned)


def _empty(entry: Path, owned: tuple[str, ...]) -> bool:
    """A temporary leftover, or an owned folder holding nothing but such entries: no result in
    it."""
    if entry.name not in owned:
        return True
    return (
        entry.is_dir()
        and not entry.is_symlink()
        and all(
            child.name.startswith(".") or (child.is_dir() and not any(child.iterdir()))
            for child in entry.iterdir()
        )
    )


def remove_owned(out: Path, owned: Iterable[str]) -> None:
    """Delete the entries of `out` that the command owns (files, folders, temporary leftovers)."""
    owned = tuple(owned)
    for entry in Path(out).iterdir():
        if _owned(entry, owned):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink(missing_ok=True)


def claim_output(
    out: str | os.PathLike,
    *,
    command: str,
    key_file: str,
    owned: Iterable[str],
    matches: Callable[[Path], bool],
    force: bool = False,
    option: str = "--out",
) -> bool:
    """Apply the rerun rule to the folder `out`: True to resume, False to start (after `--force`'s
    clean-up).

    `command` names the command in messages ("experiment"), `key_file` is the file inside `out`
    recording the configuration, `owned` every entry name the command writes into `out` (the key
    file included) and `matches(key_path)` tells whether the stored configuration is this run's.
    """
    out = Path(out)
    owned = tuple(dict.fromkeys([key_file, *owned]))
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", source=str(out), field=option)
    if not out.exists():
        return False
    if force:
        remove_owned(out, owned)
        return False
    key = out / key_file
    if key.exists():
        if not matches(key):
            raise InputError(
                f"this folder holds a different {command} run ({key_file} differs); {FORCE_HINT}, "
                f"or choose another {option}",
                source=str(out),
            )
        return True
    entries = sorted(entry for entry in out.iterdir() if entry.name != LOCK_FILE)
    foreign = [entry.name for entry in entries if not _owned(entry, owned)]
    results = [entry.name for entry in entries if _owned(entry, owned) and not _empty(entry, owned)]
    if foreign:
        listed = ", ".join(foreign[:3]) + (
            f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        )
        raise InputError(
            f"this folder holds files not written by cosched {command} ({listed}); choose another "
            f"{option}, or add --force to write there (it removes only what {command} writes)",
            source=str(out),
        )
    if results:
        raise InputError(
            f"this folder holds {command} results without the {key_file} that tells how they were "
            f"made (an older version?); add --force to start over, or choose another {option}",
            source=str(out),
        )
    remove_owned(out, owned)  # temporary leftovers of a run killed before its first result
    return False


def claim_rows(
    path: str | os.PathLike | None,
    identity: dict,
    *,
    command: str,
    key: str,
    force: bool = False,
    folder: str | os.PathLike | None = None,
) -> dict:
    """The rerun rule for a CSV whose rows carry the run's identity columns (`compare`): the earlier
    rows by `key`.

    `folder` (the --out folder holding `path`, if --out named a folder): its other files count as
    foreign. Rows of another identity are refused unless `force`, which removes the file. Values
    compare as text.
    """
    if path is None:
        return {}
    path = Path(path)
    expected = {name: str(value) for name, value in identity.items()}

    def read(csv: Path) -> list[dict]:
        import pandas as pd

        try:
            return pd.read_csv(csv, keep_default_na=False).to_dict("records")
        except (
            OSError,
            UnicodeDecodeError,
            pd.errors.ParserError,
            pd.errors.EmptyDataError,
        ) as error:
            raise InputError(
                f"unreadable earlier results ({error}); add --force to start over", source=str(csv)
            ) from None

    def matches(csv: Path) -> bool:
        return all(
            key in row and all(str(row.get(name)) == value for name, value in expected.items())
            for row in read(csv)
        )

    if folder is not None:
        if not claim_output(
            folder,
            command=command,
            key_file=path.name,
            owned=(path.name,),
            matches=matches,
            force=force,
        ):
            return {}
    elif path.exists() and not path.is_dir():
        if force:
            path.unlink()
            return {}
        if not matches(path):
            raise InputError(
                f"this file holds a different {command} run (other options or inputs); "
                f"{FORCE_HINT}, or choose another --out",
                source=str(path),
            )
    else:
        return {}
    return {row[key]: row for row in read(path)}
