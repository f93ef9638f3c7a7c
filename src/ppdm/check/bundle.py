"""The checker's bundle: the release files in a folder of their own, with a manifest of hashes.

SACRO-ML writes a release folder apart from the training artefacts; ppdm's ``--bundle DIR``
holds what may leave the environment: the model file (copied byte for byte), the release record
or the check's JSON, the report, and ``manifest.json`` listing each file's name, size and SHA-256
(and the policy's). Nothing of the training data goes in: a model known by its outputs (its
predicted probabilities per training row) is named by its scores files' hashes, not copied. Every file is written whole
(:func:`ppdm.files.write_atomic`), none over a file the call read, and a bundle folder that holds
files other than a previous bundle's is refused (a bundle is never written over inputs).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ppdm.errors import PpdmError
from ppdm.files import ReadFiles, atomic_path, refuse_overwriting_input, write_atomic

__all__ = ["MANIFEST", "check_bundle", "write_bundle"]

MANIFEST = "manifest.json"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_bundle(
    folder: str | Path,
    *,
    files: Mapping[str, str | Path] | None = None,
    texts: Mapping[str, str] | None = None,
    policy: Any = None,
    inputs: Iterable[str | Path] | ReadFiles = (),
    referenced: Mapping[str, str | Path] | None = None,
) -> Path:
    """Write the bundle ``folder``: ``files`` (name in the bundle → a file to copy, e.g. the
    model), ``texts`` (name → text, e.g. the record's JSON) and the manifest; ``policy``: the
    :class:`~ppdm.check.policy.Policy` cited; ``referenced`` (role → file): files the release
    answers for but does not hold, hashed in the manifest and not copied (a model known by its
    outputs: its scores files, which are per training row). Returns the manifest's path."""
    root = Path(folder)
    files, texts = dict(files or {}), dict(texts or {})
    read = inputs if isinstance(inputs, ReadFiles) else ReadFiles(inputs)
    check_bundle(root, [*files, *texts], read)
    root.mkdir(parents=True, exist_ok=True)
    entries = []
    for name, source in files.items():
        data = Path(source).read_bytes()
        with atomic_path(root / name, read) as tmp:
            tmp.write_bytes(data)
        entries.append({"name": name, "bytes": len(data), "sha256": _sha256(data), "copied_from": str(source)})
    for name, text in texts.items():
        data = text.encode("utf-8")
        write_atomic(root / name, text, inputs=read)
        entries.append({"name": name, "bytes": len(data), "sha256": _sha256(data)})
    cited = [_referenced(role, source) for role, source in (referenced or {}).items()]
    manifest = {
        "format": "ppdm-bundle",
        "version": 1,
        "files": entries,
        "referenced": cited,
        "policy": None if policy is None else {"name": policy.name, "sha256": policy.sha256},
    }
    path = root / MANIFEST
    write_atomic(path, json.dumps(manifest, indent=1) + "\n", inputs=read)
    return path


def _referenced(role: str, source: str | Path) -> dict[str, Any]:
    data = Path(source).read_bytes()
    return {"role": role, "file": str(source), "bytes": len(data), "sha256": _sha256(data), "copied": False}


def check_bundle(root: Path, names: list[str], read: ReadFiles | Iterable[str | Path] = ()) -> None:
    """Refuse, before any work, a bundle that cannot be written: names that clash or hold folders,
    a folder holding files not of a bundle of these names, a file the call read."""
    read = read if isinstance(read, ReadFiles) else ReadFiles(read)
    if MANIFEST in names or len(set(names)) != len(names):
        raise PpdmError(f"{root}: a bundle's files need distinct names other than {MANIFEST}")
    for name in names:
        if Path(name).name != name:
            raise PpdmError(f"{root}: a bundle's file name {name!r} must be a plain name, no folders")
    if root.exists() and not root.is_dir():
        raise PpdmError(f"{root}: not a folder; give a folder for the bundle")
    if root.is_dir():
        stray = sorted(p.name for p in root.iterdir() if p.name not in {*names, MANIFEST} and not p.name.startswith("."))
        if stray:
            raise PpdmError(f"{root}: the folder holds {stray[0]!r}, not a file of this bundle; give an empty or new folder")
    for name in (*names, MANIFEST):
        refuse_overwriting_input(root / name, read)
