"""Readers bounded, flags checked, the culprit named (issue 41): small hostile files that would
inflate to gigabytes (a skops zip bomb, an ``.npy`` header declaring 4·10⁸ floats, a CSV padded
with NULs, YAML lists of millions), Python arguments of the wrong type, and tables of types the
models never read, each refused in one line naming what is wrong.

The memory cases run in a subprocess whose address space is capped at what importing ppdm takes
(measured once) plus :data:`BUDGET`: a reader that inflated its input would die of a MemoryError
instead of answering with the refusal.
"""

from __future__ import annotations

import copy
import io
import os
import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import ppdm
from ppdm.errors import ArgumentTypeError, DataError, ModelImportError, PpdmError, TreeFormatError, check_flags, plain, shown

SRC = Path(__file__).resolve().parents[2] / "src"
#: Memory a refusal may use beyond what importing ppdm and its libraries takes.
BUDGET = 2**30
SECONDS = 60.0
THREADS = dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"), "1")

def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200", **THREADS}
    env.pop("PPDM_DEBUG", None)
    return env


@pytest.fixture(scope="module")
def baseline(world: Any) -> int:
    """The address space (bytes) a process holds once it has audited a valid tree in-process and
    imported the libraries a reader imports (read from /proc: numpy, scipy and scikit-learn
    reserve much of it at import, whatever the input)."""
    code = (
        "from click.testing import CliRunner\nfrom ppdm.cli import main\nimport skops.io, sklearn.tree, yaml\n"
        f"assert CliRunner().invoke(main, ['audit', '--tree', {str(world.tree)!r}, '--data', {str(world.data)!r}, '-q']).exit_code == 0\n"
        "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmPeak')) * 1024)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=SECONDS * 2)
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1])


def _capped(limit: int) -> Any:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return cap


def _run_capped(argv: list[str], baseline: int) -> subprocess.CompletedProcess[str]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=SECONDS, preexec_fn=_capped(baseline + BUDGET))
    assert time.perf_counter() - start < SECONDS
    return done


def _cli_refuses(args: list[Any], baseline: int, *needles: str, inputs: tuple[Path, ...] = ()) -> None:
    """``ppdm args`` under the memory cap: exit 2, one line naming every needle, inputs unchanged."""
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in inputs}
    done = _run_capped([sys.executable, "-m", "ppdm", *map(str, args)], baseline)
    line = done.stderr.strip()
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "\n" not in line and line.startswith("error") and "unexpected" not in line and "Traceback" not in line, line
    for needle in needles:
        assert needle in line, (needle, line)
    assert {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in inputs} == before


def _python_refuses(code: str, baseline: int, error: str, *needles: str) -> None:
    """``code`` (which must raise) under the memory cap: the exception class named ``error`` (or
    a subclass), its message one line holding every needle."""
    wrapped = (
        "import sys\ntry:\n" + "".join(f"    {line}\n" for line in code.splitlines())
        + "except BaseException as e:\n    print(type(e).__name__, [c.__name__ for c in type(e).__mro__]); print(e); sys.exit(3)\n"
    )
    done = _run_capped([sys.executable, "-c", wrapped], baseline)
    assert done.returncode == 3, (done.returncode, done.stdout[-1000:], done.stderr[-2000:])
    kind, message = done.stdout.strip().split("\n", 1)
    assert f"'{error}'" in kind, (kind, message)
    assert "\n" not in message.strip(), message
    for needle in needles:
        assert needle in message, (needle, message)


# -- archives: skops ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def skops_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A valid skops file of a small tree, a zip bomb of it (schema.json inflating to 1 GB from
    about 1 MB), an array whose header declares 4·10⁸ floats in a few bytes, and variants."""
    sio = pytest.importorskip("skops.io")
    from sklearn.tree import DecisionTreeClassifier

    root = tmp_path_factory.mktemp("skops")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((60, 3)), columns=["a", "b", "c"])
    sio.dump(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, X["a"] > 0.5), root / "ok.skops")
    with zipfile.ZipFile(root / "ok.skops") as valid:
        members = {n: valid.read(n) for n in valid.namelist()}
    out = {"ok": root / "ok.skops", "data": root / "data.csv"}
    X.assign(y=X["a"] > 0.5).to_csv(out["data"], index=False)

    def write(name: str, replace: dict[str, Any]) -> None:
        out[name] = root / f"{name}.skops"
        with zipfile.ZipFile(out[name], "w", zipfile.ZIP_DEFLATED) as archive:
            for member, data in {**members, **replace}.items():
                if data is None:
                    continue
                if callable(data):
                    info = zipfile.ZipInfo(member)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    with archive.open(info, "w", force_zip64=True) as handle:
                        data(handle)
                else:
                    archive.writestr(member, data)

    def bomb(handle: Any) -> None:
        handle.write(members["schema.json"].rstrip()[:-1])
        block = b" " * 2**24
        for _ in range(64):
            handle.write(block)
        handle.write(b"}")

    def header(shape: tuple[int, ...], dtype: str, body: bytes) -> bytes:
        buffer = io.BytesIO()
        np.lib.format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
        return buffer.getvalue() + body

    first_array = next(n for n in members if n.endswith(".npy"))
    write("bomb", {"schema.json": bomb})
    write("npy", {first_array: header((400_000_000,), "<f8", b"\0" * 4096)})
    write("npy2d", {first_array: header((20_000, 20_000), "<i8", b"\0" * 64)})
    write("npyjunk", {first_array: b"\x93NUMPY\x01\x00\x10\x00{'descr': <f8 }  \n"})
    write("noschema", {"schema.json": None})
    return out


SKOPS_CASES = {
    "bomb": ("schema.json inflates", "more than 30 times"),
    "npy": ("declares 400,000,000 values of float64", "3,200,000,000 bytes"),
    "npy2d": ("declares 20,000×20,000 values of int64",),
    "npyjunk": ("no valid numpy header",),
    "noschema": ("not a skops model file", "no schema.json"),
}


@pytest.mark.parametrize("case", list(SKOPS_CASES))
def test_a_skops_archive_that_would_inflate_is_refused_in_bounded_memory(skops_files, baseline, case):
    files = skops_files
    _cli_refuses(["audit", "--model", files[case], "--data", files["data"], "--class", "y", "-q"], baseline, str(files[case]), *SKOPS_CASES[case],
                 inputs=(files[case], files["data"]))


def test_the_skops_checks_pass_a_valid_file(skops_files):
    from ppdm.tree.model_files import _check_archive

    _check_archive(skops_files["ok"])  # no refusal: every member within bounds, every header true


def test_a_memory_error_inside_skops_is_reported_as_such(skops_files, monkeypatch):
    import skops.io as sio

    def exhausted(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(sio, "get_untrusted_types", exhausted)
    with pytest.raises(TreeFormatError, match="ran out of memory reading the skops file"):
        ppdm.load_model(skops_files["ok"], pd.read_csv(skops_files["data"]), class_attribute="y")


# -- CSV: NULs anywhere, huge numbers -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tables")
    out: dict[str, Path] = {}

    def sparse(name: str, head: bytes, size: int) -> None:  # NULs as a sparse file: a gigabyte in no disk space
        out[name] = root / f"{name}.csv"
        with open(out[name], "wb") as handle:
            handle.write(head)
            handle.truncate(size)

    sparse("nul-1g", b"a,class\n1,x\n", 2**30)
    sparse("nul-after-rows", b"a,class\n" + b"".join(b"%d,%s\n" % (i, b"xy"[i % 2 : i % 2 + 1]) for i in range(5000)), 2**28)
    out["nul-middle"] = root / "nul-middle.csv"
    out["nul-middle"].write_bytes(b"a,class\n1,x\n2,y\n3,\0z\n4,x\n")
    out["brace-big"] = root / "brace-big.csv"
    with open(out["brace-big"], "wb") as handle:
        handle.write(b'{"a": ')
        handle.truncate(2**27)
    rows = [f"{i},{'ab'[i % 2]}" for i in range(30)]
    for name, value in (("nines", "9" * 400), ("nines-negative", "-" + "9" * 400), ("nines-1000", "9" * 1000)):
        out[name] = root / f"{name}.csv"
        out[name].write_text("\n".join(["amount,class", *rows, f"{value},a", *rows]) + "\n")
    return out


CSV_CASES = {
    "nul-1g": ("line 3", "holds a NUL character"),
    "nul-after-rows": ("line 5,002", "holds a NUL character"),
    "nul-middle": ("line 4", "holds a NUL character"),
    "brace-big": ("starts with '{' like a JSON document",),
    "nines": ("line 32", "column 'amount'", "(400 characters)", "a number beyond any float"),
    "nines-negative": ("line 32", "(401 characters)", "a number beyond any float"),
    "nines-1000": ("line 32", "(1,000 characters)"),
}


#: The cases that would take gigabytes run in a capped subprocess; the others in-process.
CSV_CAPPED = ("nul-1g", "nul-after-rows", "brace-big")


def _csv_args(command: str, path: Path, out: Path) -> list[Any]:
    return {
        "train": ["train", "--data", path, "--class-attribute", "class", "--out", out, "-q"],
        "audit-rules": ["audit-rules", "--data", path, "--sensitive", "class", "--rules-out", out, "-q"],
    }[command]


@pytest.mark.parametrize("case", CSV_CAPPED)
def test_a_csv_that_would_inflate_is_refused_in_bounded_memory(tables, baseline, tmp_path, case):
    path, out = tables[case], tmp_path / "out.json"
    _cli_refuses(_csv_args("train", path, out), baseline, str(path), *CSV_CASES[case], inputs=(path,))
    assert not out.exists()


@pytest.mark.parametrize("command", ["train", "audit-rules"])
@pytest.mark.parametrize("case", list(CSV_CASES))
def test_a_csv_with_nuls_or_huge_numbers_is_refused(tables, refuse, tmp_path, case, command):
    path, out = tables[case], tmp_path / "out.json"
    refuse(_csv_args(command, path, out), str(path), *CSV_CASES[case], outputs=[out, path])


@pytest.mark.parametrize("case", ["nul-middle", "nines", "nines-negative"])
def test_load_csv_names_the_line_in_python(tables, raises, case):
    from ppdm.data.datasets import load_csv

    raises(lambda: load_csv(tables[case]), DataError, *CSV_CASES[case])


# -- YAML: lists of millions, repeated entries -----------------------------------------------------------
@pytest.fixture(scope="module")
def yamls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("yaml")
    out: dict[str, Path] = {}

    def write(name: str, text: str) -> None:
        out[name] = root / f"{name}.yaml"
        out[name].write_text(text)

    write("known-3e6", "sensitive: class\nknown:\n" + "- parents\n" * 1_200_000)  # 12 MB
    write("known-flow", "sensitive: class\nknown: [" + "parents, " * 1_300_000 + "health]\n")
    write("individuals-3e6", "sensitive: class\nknown: [parents]\nknown_individuals: [" + "1, " * 4_000_000 + "2]\n")
    write("individuals-distinct", "sensitive: class\nknown: [parents]\nknown_individuals:\n" + "".join(f"- {i}\n" for i in range(1_500_000)))
    write("mapping-keys", "sensitive: class\nknown: [parents]\nextra:\n" + "".join(f"  k{i}: {i}\n" for i in range(800_000)))
    write("hierarchy-3e6", "hierarchies:\n  workclass:\n    kind: categorical\n    tree:\n      ANY:\n" + "".join(f"      - v{i}\n" for i in range(900_000)))  # 14 MB
    write("known-twice", "sensitive: class\nknown: [parents, health, parents]\n")
    write("individuals-twice-late", "sensitive: class\nknown: [parents]\nknown_individuals: [" + ", ".join(map(str, range(100_000))) + ", 99999]\n")
    return out


YAML_CLI = {
    "known-3e6": ("more than 200,000 YAML values",),
    "known-flow": ("line 2", "more than 200,000 YAML values"),
    "individuals-3e6": ("more than 200,000 YAML values",),
    "individuals-distinct": ("more than 200,000 YAML values",),
    "mapping-keys": ("more than 200,000 YAML values",),
    "known-twice": ("known: column 'parents' is listed twice",),
    "individuals-twice-late": ("known_individuals: row 99999 is listed twice",),
}


YAML_CAPPED = ("known-3e6", "individuals-3e6", "mapping-keys")


@pytest.mark.parametrize("case", YAML_CAPPED)
def test_a_threat_yaml_of_millions_is_refused_quickly_in_bounded_memory(world, yamls, baseline, case, tmp_path):
    out = tmp_path / "out.json"
    start = time.perf_counter()
    _cli_refuses(["audit", "--tree", world.tree, "--data", world.data, "--threat", yamls[case], "--out", out, "-q"], baseline,
                 str(yamls[case]), *YAML_CLI[case], inputs=(yamls[case], world.data, world.tree))
    assert time.perf_counter() - start < 30 and not out.exists()


@pytest.mark.parametrize("command", ["audit", "defend"])
@pytest.mark.parametrize("case", list(YAML_CLI))
def test_a_threat_yaml_of_millions_or_repeats_is_refused(world, yamls, refuse, case, tmp_path, command):
    out = tmp_path / "out.json"
    args = {
        "audit": ["audit", "--tree", world.tree, "--data", world.data, "--threat", yamls[case], "--out", out, "-q"],
        "defend": ["defend", "--model", world.tree, "--data", world.data, "--threat", yamls[case], "--out", out, "-q"],
    }[command]
    refuse(args, str(yamls[case]), *YAML_CLI[case], outputs=[out, yamls[case]])


def test_a_hierarchy_yaml_of_millions_is_refused_in_bounded_memory(yamls, baseline):
    _python_refuses(f"from ppdm.data.hierarchy import load_hierarchies\nload_hierarchies({str(yamls['hierarchy-3e6'])!r})", baseline,
                    "HierarchyError", "more than 200,000 YAML values")


def test_a_yaml_alias_is_still_refused_naming_it(raises, tmp_path):
    from ppdm.attacks.core.threat import load_threat

    path = tmp_path / "alias.yaml"
    path.write_text("sensitive: &s class\nknown: [*s]\n")
    raises(lambda: load_threat(path), PpdmError, "line 2", "YAML aliases (*s) are not read")


def test_a_settings_yaml_within_the_bound_is_read(tmp_path):
    from ppdm.attacks.core.threat import load_threat

    path = tmp_path / "many.yaml"
    path.write_text("known: [parents]\nknown_individuals: [" + ", ".join(map(str, range(50_000))) + "]\n")
    assert load_threat(path).known_individuals == tuple(range(50_000))


# -- Python flags -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tree(world):
    return ppdm.load_model(world.tree)


@pytest.fixture(scope="module")
def frame(world):
    return pd.read_csv(world.data)


THREAT = ppdm.ThreatModel(known=("parents", "health"))
FLAGS = ["exact", "estimate", "labels", "internal", "sample", "class_known"]
NOT_FLAGS = {"no": "'no'", "False": "'False'", "one": 1, "zero": 0, "none": None, "list": [False]}


@pytest.mark.parametrize(
    "flag, value", [(f, v) for f in FLAGS for v in NOT_FLAGS if not (f == "class_known" and v == "none")],  # class_known=None: from the data
)
def test_an_audit_flag_that_is_not_a_boolean_is_refused(tree, frame, flag, value):
    given = NOT_FLAGS[value]
    given = given.strip("'") if isinstance(given, str) else given
    with pytest.raises(ArgumentTypeError) as info:
        ppdm.audit(tree, frame, THREAT, **{flag: given})
    assert isinstance(info.value, TypeError)
    message = str(info.value)
    assert message.startswith(f"{flag} must be True or False, got {given!r}") and "\n" not in message, message


@pytest.mark.parametrize("flag", ["exact", "sample"])
def test_a_numpy_boolean_is_a_flag(tree, frame, flag):
    done = ppdm.audit(tree, frame, THREAT, **{flag: np.bool_(False)})
    assert done.results


@pytest.mark.parametrize("field", ["class_known", "sa_published"])
@pytest.mark.parametrize("value", ["no", 1, 0.0, [True]])
def test_a_threat_model_flag_that_is_not_a_boolean_is_refused(field, value):
    with pytest.raises(ArgumentTypeError, match=f"^{field} must be True"):
        ppdm.ThreatModel(**{field: value})


@pytest.mark.parametrize("field", ["class_known", "sa_published"])
def test_a_threat_model_takes_a_numpy_boolean_as_a_plain_one(field):
    threat = ppdm.ThreatModel(**{field: np.bool_(True)})
    assert getattr(threat, field) is True


def test_check_flags_names_the_parameter():
    check_flags(a=True, b=False, c=np.bool_(True))
    with pytest.raises(ArgumentTypeError, match=r"^b must be True or False, got 'yes' \(str\)$"):
        check_flags(a=True, b="yes")


# -- Python arguments of the wrong type ----------------------------------------------------------------
TARGETS = {"dict": {"certain": 0}, "int": 5, "float": 0.5, "list": ["certain=0"], "tuple": ("certain", 0)}


@pytest.mark.parametrize("case", list(TARGETS))
def test_an_audit_target_of_the_wrong_type_is_refused(tree, frame, case):
    with pytest.raises(ArgumentTypeError, match="^target must be a Target or its text"):
        ppdm.audit(tree, frame, THREAT, target=TARGETS[case])


@pytest.mark.parametrize("case", list(TARGETS))
def test_a_defend_target_of_the_wrong_type_is_refused(tree, frame, case):
    with pytest.raises(ArgumentTypeError, match="^target must be a Target or its text") as info:
        ppdm.defend(tree, frame, THREAT, TARGETS[case])
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("threat", ["certain=0", 5, {"known": ["parents"]}])
def test_a_defend_threat_that_is_not_a_threat_model_is_refused(tree, frame, threat):
    with pytest.raises(ArgumentTypeError, match="^threat must be a ThreatModel"):
        ppdm.defend(tree, frame, threat, "certain=0")


def _with(frame: pd.DataFrame, column: str, values: Any) -> pd.DataFrame:
    out = frame.copy()
    out[column] = values
    return out


BAD_TABLES = {
    "duplicate-column": (lambda f: pd.concat([f, f[["parents"]]], axis=1), "two columns named 'parents'"),
    "duplicate-class": (lambda f: pd.concat([f, f[["class"]]], axis=1), "two columns named 'class'"),
    "complex": (lambda f: _with(f, "health", np.arange(len(f)) + 1j), "column 'health' holds complex numbers"),
    "complex64": (lambda f: _with(f, "health", (np.arange(len(f)) + 1j).astype(np.complex64)), "column 'health' holds complex numbers"),
    "datetime": (lambda f: _with(f, "health", pd.date_range("2020-01-01", periods=len(f))), "column 'health' holds dates or durations"),
    "datetime-tz": (lambda f: _with(f, "health", pd.date_range("2020-01-01", periods=len(f), tz="UTC")), "column 'health' holds dates"),
    "timedelta": (lambda f: _with(f, "health", pd.to_timedelta(np.arange(len(f)), unit="s")), "holds dates or durations"),
    "period": (lambda f: _with(f, "health", pd.period_range("2020-01", periods=len(f), freq="M")), "holds dates or durations"),
    "index-all-zero": (lambda f: f.set_axis([0] * len(f)), "data's index repeats the row id 0"),
    "index-repeated": (lambda f: f.set_axis(list(range(len(f) - 1)) + [3]), "data's index repeats the row id 3"),
    "index-numpy": (lambda f: f.set_axis(np.zeros(len(f), dtype=np.int64)), "repeats the row id 0:"),
}


@pytest.mark.parametrize("case", list(BAD_TABLES))
def test_a_table_the_audit_cannot_read_faithfully_is_refused_naming_it(tree, frame, raises, case):
    make, needle = BAD_TABLES[case]
    raises(lambda: ppdm.audit(tree, make(frame), THREAT), DataError, needle)


@pytest.mark.parametrize("case", ["duplicate-column", "complex", "datetime"])
def test_defend_refuses_the_same_tables(tree, frame, raises, case):
    make, needle = BAD_TABLES[case]
    raises(lambda: ppdm.defend(tree, make(frame), THREAT, "certain=0"), DataError, needle)


def _polars_like(frame: pd.DataFrame, fails: bool = False) -> Any:
    def to_pandas(self: Any) -> pd.DataFrame:
        if fails:
            raise ModuleNotFoundError("pyarrow")
        return frame

    return type("DataFrame", (), {"__module__": "polars.dataframe.frame", "to_pandas": to_pandas})()


def test_a_polars_frame_is_read_through_to_pandas(tree, frame):
    assert len(ppdm.audit(tree, _polars_like(frame), THREAT).people()) == len(ppdm.audit(tree, frame, THREAT).people())


def test_a_polars_frame_that_does_not_convert_says_how(tree, frame, raises):
    raises(lambda: ppdm.audit(tree, _polars_like(frame, fails=True), THREAT), DataError, "polars DataFrame", "data.to_pandas()")


# -- messages print plain values -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, text",
    [(np.int64(3), "3"), (np.float64(1.5), "1.5"), (np.str_("personal"), "'personal'"), (np.bool_(True), "True"),
     ((np.int64(1), np.str_("a")), "(1, 'a')"), ([np.float32(2.0)], "[2.0]"), ("x" * 100, "'" + "x" * 76 + "...")],
)
def test_messages_show_plain_values(value, text):
    assert shown(value) == text
    assert "np." not in shown(value)
    assert plain(np.array(3)) == 3


def test_a_numpy_text_as_the_sensitive_column_is_named_plainly(tree, frame, raises):
    threat = ppdm.ThreatModel(known=(np.str_("parents"),), sensitive=np.str_("nope"))
    raises(lambda: ppdm.audit(tree, frame, threat), DataError, "the sensitive column 'nope' is not in the data")
    assert type(threat.sensitive) is str and type(threat.known[0]) is str


# -- published copies are linear and independent -------------------------------------------------------
def test_published_copies_node_by_node_sharing_nothing_mutable(tree, monkeypatch):
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("copy.deepcopy recurses once per level of a deep tree")

    monkeypatch.setattr(copy, "deepcopy", refuse)
    shown_tree = tree.published("class-counts")
    assert shown_tree is not tree and all(a is not b for a, b in zip(shown_tree.nodes, tree.nodes, strict=True))
    shown_tree.nodes[0].counts[0] += 1
    shown_tree.nodes[0].children.append(99)
    assert tree.nodes[0].counts[0] + 1 == shown_tree.nodes[0].counts[0] and 99 not in tree.nodes[0].children
    labels = tree.published("labels")
    assert all(n.counts is None for n in labels.nodes) and all(n.counts is not None for n in tree.nodes)


# -- the culprit named ----------------------------------------------------------------------------------
@pytest.mark.parametrize("threat", [None, THREAT], ids=["default-threat", "declared-threat"])
def test_a_table_without_a_split_column_names_that_column(tree, frame, raises, threat):
    split = tree.root.split.attribute
    known = ppdm.ThreatModel(known=tuple(c for c in ("parents", "health", "form") if c != split)) if threat is not None else None
    raises(lambda: ppdm.audit(tree, frame.drop(columns=[split]), known), DataError, "the tree splits on column(s) missing from the data", repr(split))


def test_a_table_without_the_class_column_names_the_class_not_the_sensitive_column(tree, frame, raises):
    raises(lambda: ppdm.audit(tree, frame.drop(columns=["class"]), THREAT), DataError, "the data has no column 'class'", "pass class_attribute=")


def test_a_forest_without_the_class_column_names_the_class(frame, raises):
    from sklearn.ensemble import RandomForestClassifier

    X = pd.get_dummies(frame.drop(columns=["class"]), prefix_sep="_")
    forest = ppdm.from_estimator(RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, frame["class"]), frame)
    raises(lambda: ppdm.audit(forest, frame.drop(columns=["class"]), THREAT, progress=False), DataError, "the data has no column 'class'")


def test_a_tree_file_without_its_class_attribute_names_the_default_class_on_the_command_line(world, refuse, tmp_path):
    import json

    published = json.loads(Path(world.atree).read_text())
    published.pop("class_attribute", None)
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(published))
    refuse(["audit", "--tree", bare, "--data", world.adult, "--sensitive", "sex", "--out", tmp_path / "out.json"], "no column 'class'", "--class")


def test_a_tree_fitted_with_sample_weights_is_explained(frame, raises):
    from sklearn.tree import DecisionTreeClassifier

    X = pd.get_dummies(frame.drop(columns=["class"]), prefix_sep="_")
    weights = np.where(frame["class"] == frame["class"].iloc[0], 2.0, 1.0)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, frame["class"], sample_weight=weights)
    raises(lambda: ppdm.audit(model, frame), ModelImportError, "the tree was fitted with sample_weight or class_weight", "weighted records and", "sums of weights")


@pytest.mark.parametrize("kind", ["LGBMClassifier", "LGBMRegressor"])
def test_an_unfitted_lightgbm_model_is_called_unfitted(frame, kind):
    lightgbm = pytest.importorskip("lightgbm")
    from ppdm.errors import NotFittedError

    with pytest.raises(NotFittedError, match=f"^the {kind} is not fitted: call fit"):
        ppdm.from_estimator(getattr(lightgbm, kind)(), frame)
