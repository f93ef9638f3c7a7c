"""One entry point for every model file ppdm reads: :func:`load_model` tells the formats apart.

The CLI's ``--model`` / ``--tree`` options accept any of:

* a ``ppdm-tree`` JSON file (:func:`ppdm.tree.io.load_tree`) → :class:`Tree`;
* a ``ppdm-forest`` JSON file (:func:`ppdm.tree.forest_io.load_forest`) → :class:`Forest`;
* an XGBoost JSON model (``booster.save_model("m.json")``: an object with a ``learner``) and a
  LightGBM ``dump_model()`` JSON (an object with ``tree_info``) → :class:`Forest`;
* a LightGBM model text file (``booster.save_model("m.txt")``: it starts with ``tree``) →
  :class:`Forest`;
* a scikit-learn model in skops' secure format (``skops.io.dump(model, "m.skops")``: a tree, a
  forest, gradient boosting, or a Pipeline ending in one; :func:`ppdm.tree.estimator.from_estimator`)
  → :class:`Tree` or :class:`Forest`. Only the types in :data:`SKOPS_TRUSTED` beyond skops' own
  safe list are loaded; a file holding any other type is refused, naming it (``pip install
  "ppdm[skops]"``).

The libraries' files number their input columns; naming them and tracing one-hot columns back
to attributes needs the training table, unencoded, with its class column (``data``; see
:func:`~ppdm.tree.xgboost_json.forest_from_xgboost`). Only text is read: nothing is unpickled.
Every error is one line that starts with the file's name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ppdm.data.roles import text_columns
from ppdm.errors import ModelImportError, PpdmError, TreeFormatError, advising
from ppdm.tree.forest import Forest
from ppdm.tree.forest_io import forest_from_dict
from ppdm.tree.io import tree_from_dict
from ppdm.tree.lightgbm_text import forest_from_lightgbm
from ppdm.tree.model import Tree
from ppdm.tree.xgboost_json import forest_from_xgboost

__all__ = ["is_skops", "load_estimator", "load_model", "model_kind", "save_model"]

KINDS = ("ppdm-tree", "ppdm-forest", "xgboost-json", "lightgbm-json", "lightgbm-text", "skops")

#: The types a ``.skops`` file may hold beyond skops' default safe list: scikit-learn's tree
#: structures (every estimator, encoder and pipeline ppdm imports is on skops' own list), an MLP's
#: optimiser state (scikit-learn's own, arrays and numbers) and the neighbour searches a kNN
#: classifier stores its training rows in (the classifiers the black-box attacks and the output
#: checker read by their answers).
SKOPS_TRUSTED = (
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
    "sklearn.neighbors._kd_tree.KDTree",
    "sklearn.neighbors._ball_tree.BallTree",
)

#: Modules whose every type a ``.skops`` file may hold: the distance metrics a kNN classifier's
#: neighbour search keeps (scikit-learn's own, no code of the file's).
SKOPS_TRUSTED_PREFIXES = ("sklearn.metrics._dist_metrics.",)


#: The first bytes of a zip archive: skops' format.
ZIP_MAGIC = b"PK\x03\x04"


#: A skops archive's member may inflate to at most this many times its compressed size (a tree's
#: arrays and schema compress a few times, a zip bomb a thousand) or the floor, whichever is
#: larger; all members together likewise against the archive's size.
SKOPS_INFLATION, SKOPS_MEMBER_FLOOR, SKOPS_INFLATED_FLOOR = 30, 32 * 2**20, 256 * 2**20


def save_model(model: Tree | Forest, path: str | Path) -> None:
    """Write ``model`` to ``path`` in ppdm's JSON (``ppdm-forest`` or ``ppdm-tree``), atomically."""
    from ppdm.tree.forest_io import save_forest
    from ppdm.tree.io import save_tree

    if isinstance(model, Forest):  # the file formats differ; nothing else here does
        save_forest(model, path)
    else:
        save_tree(model, path)


def load_model(path: str | Path, data: pd.DataFrame | None = None, *, class_attribute: str | None = None, config: Any = None) -> Tree | Forest:
    """Read the tree or forest in ``path``, whichever of the formats above it is.

    ``data``: the training table (unencoded, with the class column), needed by XGBoost, LightGBM
    and skops files only; their counts are checked against it when it has as many rows as the
    model was trained on. ``class_attribute``: the class column of ``data`` (default: the one
    column outside the model's inputs with as many values as the model has classes). ``config``:
    an XGBoost model's training configuration (``booster.save_config()``: a path, text or
    dictionary), which the model file does not hold: its λ, η and whether rows were subsampled (with
    ``subsample=1`` every round counts every training row once, so each round is read, not the first alone).
    """
    from ppdm.files import as_path

    p = as_path(path, "model", TreeFormatError)
    kind, content = _read(p)
    if config is not None and kind != "xgboost-json":
        raise ModelImportError(f"{p}: a training configuration (config=) is XGBoost's; this is a {kind} model")
    try:
        if kind == "ppdm-tree":
            return tree_from_dict(content)
        if kind == "ppdm-forest":
            return forest_from_dict(content)
        if data is None:
            what = "a scikit-learn model splits encoded columns" if kind == "skops" else f"{_an(kind.split('-')[0])} model numbers its input columns"
            raise advising(
                ModelImportError(f"{what}: pass the training table (data=) to {'read' if kind == 'skops' else 'name'} them"), "(data=)", None, "(--data)",
            )
        data = text_columns(data) if isinstance(data, pd.DataFrame) else data
        if class_attribute is not None and class_attribute not in data.columns:
            raise ModelImportError(f"the class column {class_attribute!r} is not a column of the training table")
        if kind == "skops":
            from ppdm.tree.estimator import from_estimator

            return from_estimator(_skops(p), data, class_attribute=class_attribute)
        if kind == "xgboost-json":
            return forest_from_xgboost(content, data, class_attribute=class_attribute, config=config)
        return forest_from_lightgbm(content, data, class_attribute=class_attribute)
    except PpdmError as exc:
        raise exc.with_prefix(str(p)) from None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        # a library's file with a field of the wrong shape that no check above anticipated
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__
        raise TreeFormatError(f"{p}: a malformed {kind} model ({what[:120]})") from None


def _an(word: str) -> str:
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def model_kind(path: str | Path) -> str:
    """Which of :data:`KINDS` the file ``path`` holds (its content decides, not its name)."""
    from ppdm.files import as_path

    return _read(as_path(path, "model", TreeFormatError))[0]


def _read(p: Path) -> tuple[str, Any]:
    """The file's kind and its content (a parsed JSON object, or the LightGBM text)."""
    from ppdm.files import MAX_MODEL_BYTES, load_json, read_bytes

    raw = read_bytes(p, "model", MAX_MODEL_BYTES, TreeFormatError)
    if raw.startswith(ZIP_MAGIC):
        return "skops", None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TreeFormatError(f"{p}: not a text file (ppdm reads JSON models, LightGBM text models and skops files, never pickles)") from None
    if text.startswith(("tree\n", "tree\r\n")):
        return "lightgbm-text", text.replace("\r\n", "\n")
    try:
        doc = load_json(text, str(p), TreeFormatError)
    except TreeFormatError as exc:
        if "not valid JSON" not in str(exc):
            raise
        raise TreeFormatError(f"{exc}; not a LightGBM model text file either".replace("not valid JSON", "neither JSON", 1)) from None
    if not isinstance(doc, dict):
        raise TreeFormatError(f"{p}: expected a JSON object (a ppdm tree or forest, an XGBoost or LightGBM model)")
    fmt = doc.get("format")
    if fmt in ("ppdm-tree", "ppdm-forest"):
        return str(fmt), doc
    if "learner" in doc:
        return "xgboost-json", doc
    if "tree_info" in doc:
        return "lightgbm-json", doc
    found = f"format {fmt!r}" if fmt is not None else "no 'format' field"
    raise TreeFormatError(
        f"{p}: not a model file ppdm reads ({found}; expected a ppdm-tree or ppdm-forest file, an XGBoost JSON "
        "model or a LightGBM model)"
    )


def is_skops(path: str | Path) -> bool:
    """Whether the file ``path`` is a zip archive, skops' format (its content decides, not its name)."""
    with open(path, "rb") as handle:
        return handle.read(len(ZIP_MAGIC)) == ZIP_MAGIC


def load_estimator(path: str | Path) -> Any:
    """The fitted scikit-learn estimator in the skops file ``path``, loaded only if every type it
    holds is on skops' safe list or :data:`SKOPS_TRUSTED` (never a pickle)."""
    from ppdm.files import as_path

    p = as_path(path, "model", TreeFormatError)
    try:
        return _skops(p)
    except PpdmError as exc:
        raise exc.with_prefix(str(p)) from None


def _skops(p: Path) -> Any:
    """The estimator in a skops file, loaded only if every type it holds is trusted."""
    try:
        import skops.io as sio
    except ImportError:
        raise ModelImportError('reading a .skops file needs skops: pip install "ppdm[skops]"') from None
    _check_archive(p)
    try:
        untrusted = sio.get_untrusted_types(file=p)
    except MemoryError:
        raise TreeFormatError("ran out of memory reading the skops file") from None
    except Exception:  # a zip that is not a skops file: skops raises several types
        raise TreeFormatError("a zip archive but not a skops model file") from None
    refused = sorted(t for t in set(untrusted) - set(SKOPS_TRUSTED) if not t.startswith(SKOPS_TRUSTED_PREFIXES))
    if refused:
        raise ModelImportError(
            f"the skops file holds types ppdm does not load ({', '.join(refused[:3])}{', ...' if len(refused) > 3 else ''}): "
            "only scikit-learn's own types are read"
        )
    try:
        return sio.load(p, trusted=list(untrusted))
    except MemoryError:
        raise TreeFormatError("ran out of memory reading the skops file") from None


def _check_archive(p: Path) -> None:
    """Refuse a skops archive whose members would inflate beyond bounds before skops reads any:
    their declared sizes (which :mod:`zipfile` holds every member to) against
    :data:`SKOPS_INFLATION`, and each ``.npy`` array's header
    (its shape times its item size) against the bytes the member holds."""
    import zipfile
    import zlib

    try:
        with zipfile.ZipFile(p) as archive:
            members = archive.infolist()
            if "schema.json" not in {m.filename for m in members}:
                raise TreeFormatError("a zip archive but not a skops model file (it has no schema.json)")
            for member in members:
                if member.file_size > max(SKOPS_MEMBER_FLOOR, SKOPS_INFLATION * member.compress_size):
                    raise TreeFormatError(
                        f"the skops member {member.filename} inflates from {member.compress_size:,} to {member.file_size:,} bytes, "
                        f"more than {SKOPS_INFLATION} times: not read"
                    )
            budget = max(SKOPS_INFLATED_FLOOR, SKOPS_INFLATION * p.stat().st_size)
            inflated = sum(m.file_size for m in members)
            if inflated > budget:
                largest = max(members, key=lambda m: m.file_size)
                raise TreeFormatError(
                    f"the skops archive inflates to {inflated:,} bytes ({largest.filename} alone {largest.file_size:,}), "
                    f"more than {SKOPS_INFLATION} times its size: not read"
                )
            for member in members:
                if member.filename.endswith(".npy"):
                    _check_array(archive, member)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise TreeFormatError(f"a zip archive but not a skops model file ({exc})") from None
    except OSError as exc:
        raise TreeFormatError(f"cannot read it ({exc.strerror or exc})") from None


def _check_array(archive: Any, member: Any) -> None:
    """Refuse an ``.npy`` member whose header declares more data than the member holds (numpy
    would allocate the declared array before finding the data short)."""
    import numpy as np
    from numpy.lib import format as npy

    with archive.open(member) as handle:
        try:
            version = npy.read_magic(handle)
            header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
            shape, _, dtype = header(handle)
        except (ValueError, SyntaxError, TypeError) as exc:
            raise TreeFormatError(f"the skops array {member.filename} has no valid numpy header ({str(exc)[:80]})") from None
        declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
        held = member.file_size - handle.tell()
    if declared > held:
        shown = "×".join(f"{int(n):,}" for n in shape)
        raise TreeFormatError(
            f"the skops array {member.filename} declares {shown} values of {dtype} ({declared:,} bytes) but holds {held:,} bytes"
        )
