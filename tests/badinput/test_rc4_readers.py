"""Root cause 4: every reader is bounded. What is not a regular file (a folder, a FIFO, /dev/zero)
is refused by name before it is opened, files beyond what their kind can be are refused by size,
YAML aliases (a few lines that expand to gigabytes) and keys written twice are errors."""

from __future__ import annotations

import os
import threading

import pytest

#: Every option that reads a file: (id, arguments with {x} for the file under test, its kind).
READERS = [
    ("audit-threat", ["audit", "--tree", "{tree}", "--data", "{data}", "--threat", "{x}", "-q"], "threat-model"),
    ("audit-tree", ["audit", "--tree", "{x}", "--data", "{data}", "-q"], "model"),
    ("audit-model", ["audit", "--model", "{x}", "--data", "{data}", "-q"], "model"),
    ("audit-data", ["audit", "--tree", "{tree}", "--data", "{x}", "-q"], "CSV"),
    ("rules-rules", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--rules", "{x}", "-q"], "rules"),
    ("rules-data", ["audit-rules", "--data", "{x}", "--sensitive", "class", "--rules", "{rules}", "-q"], "CSV"),
    ("train-data", ["train", "--data", "{x}", "--class-attribute", "class", "--out", "{w}/t.json", "-q"], "CSV"),
    ("train-hierarchies", ["train", "--data", "{adult}", "--class-attribute", "income", "--k", "5", "--hierarchies", "{x}.yaml", "--out", "{w}/t.json", "-q"], "hierarchy"),
    ("defend-hierarchies", ["defend", "--model", "{tree}", "--data", "{data}", "--hierarchies", "{x}.json", "-q"], "hierarchy"),
    ("defend-test", ["defend", "--model", "{tree}", "--data", "{data}", "--test", "{x}", "-q"], "CSV"),
    ("defend-threat", ["defend", "--model", "{tree}", "--data", "{data}", "--threat", "{x}", "-q"], "threat-model"),
    ("attack-model", ["attack", "--model", "{x}", "--data", "{data}"], "model"),
    ("attack-known", ["attack", "--model", "{tree}", "--data", "{data}", "--attack", "background", "--known", "{x}"], "CSV"),
    ("report-result", ["report", "{x}", "--out", "{w}/r.html", "-q"], "an attack result"),
    ("report-model", ["report", "{result}", "--model", "{x}", "--out", "{w}/r.html", "-q"], "model"),
    ("report-threat", ["report", "{result}", "--threat", "{x}", "--out", "{w}/r.html", "-q"], "threat-model"),
    ("report-frontier", ["report", "{result}", "--frontier", "{x}", "--out", "{w}/r.html", "-q"], "a frontier"),
    ("show", ["show", "{x}"], "tree"),
    ("prune-tree", ["prune", "--tree", "{x}", "--method", "1", "--s", "2", "--out", "{w}/p.json", "-q"], "tree"),
    ("prune-data", ["prune", "--tree", "{tree}", "--method", "1", "--s", "2", "--data", "{x}", "--out", "{w}/p.json", "-q"], "CSV"),
    ("hierarchy-data", ["hierarchy", "--data", "{x}", "--column", "parents"], "CSV"),
    ("disguise-data", ["disguise", "--data", "{x}", "--theta", "0.8", "--out", "{w}/d.csv", "-q"], "CSV"),
]


def fill(args, world, tmp_path, x):
    names = {n: str(getattr(world, n)) for n in ("tree", "data", "rules", "adult", "result")}
    return [a.format(**names, w=tmp_path, x=x) for a in args]


@pytest.fixture
def fifo(tmp_path):
    """A FIFO; should a reader open it (and block), a writer opens and closes it after a while,
    so that the test fails instead of hanging."""
    path = tmp_path / "pipe"
    os.mkfifo(path)
    os.mkfifo(tmp_path / "pipe.yaml")
    os.mkfifo(tmp_path / "pipe.json")
    done = threading.Event()

    def unblock():
        if not done.wait(15):
            for p in (path, tmp_path / "pipe.yaml", tmp_path / "pipe.json"):
                try:
                    os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass

    watchdog = threading.Thread(target=unblock, daemon=True)
    watchdog.start()
    yield path
    done.set()


@pytest.mark.parametrize("args, kind", [c[1:] for c in READERS], ids=[c[0] for c in READERS])
def test_a_fifo_is_refused_by_name_without_being_opened(world, refuse, tmp_path, fifo, args, kind):
    refuse(fill(args, world, tmp_path, fifo), "pipe", "not a regular file")


@pytest.mark.parametrize("args, kind", [c[1:] for c in READERS if "{x}." not in " ".join(c[1])], ids=[c[0] for c in READERS if "{x}." not in " ".join(c[1])])
def test_dev_zero_is_refused_by_name(world, refuse, tmp_path, args, kind):
    refuse(fill(args, world, tmp_path, "/dev/zero"), "/dev/zero: not a regular file")


@pytest.mark.parametrize("args, kind", [c[1:] for c in READERS if "{x}." not in " ".join(c[1])], ids=[c[0] for c in READERS if "{x}." not in " ".join(c[1])])
def test_a_folder_is_refused_by_name(world, refuse, tmp_path, args, kind):
    folder = tmp_path / "folder"
    folder.mkdir()
    refuse(fill(args, world, tmp_path, folder), "folder: is a directory")


@pytest.mark.parametrize("args, kind", [c[1:] for c in READERS if c[0] in ("audit-threat", "show", "rules-rules", "report-result", "audit-data")],
                         ids=[c[0] for c in READERS if c[0] in ("audit-threat", "show", "rules-rules", "report-result", "audit-data")])
def test_a_missing_file_is_named(world, refuse, tmp_path, args, kind):
    refuse(fill(args, world, tmp_path, tmp_path / "absent.file"), "absent.file", "no such" if kind != "CSV" else "not found")


@pytest.mark.parametrize(
    "reader, size, needle",
    [
        ("audit-threat", 16 * 2**20 + 1, "more than a threat-model file can be"),
        ("rules-rules", 16 * 2**20 + 1, "more than a rules file can be"),
        ("train-hierarchies", 16 * 2**20 + 1, "more than a hierarchy file can be"),
        ("audit-tree", 2**30 + 1, "more than a model file can be"),
        ("show", 2**30 + 1, "more than a model file can be"),
        ("report-result", 2**31 + 1, "more than an attack result file can be"),
    ],
)
def test_a_file_larger_than_its_kind_can_be_is_refused_unread(world, refuse, tmp_path, reader, size, needle):
    args = next(c[1] for c in READERS if c[0] == reader)
    path = tmp_path / "huge"
    for target in (path, tmp_path / "huge.yaml"):
        with open(target, "wb") as f:
            f.truncate(size)  # sparse: no disk used
    refuse(fill(args, world, tmp_path, path), "huge", needle)


@pytest.mark.parametrize("reader", ["audit-threat", "rules-rules"])
def test_dev_zero_is_refused_at_once_under_a_memory_cap(world, refuse_in_subprocess, tmp_path, reader):
    args = next(c[1] for c in READERS if c[0] == reader)
    refuse_in_subprocess(fill(args, world, tmp_path, "/dev/zero"), "/dev/zero: not a regular file")


BOMB = "".join([
    "a: &a [x, x, x, x, x, x, x, x, x]\n",
    *(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi")),
])


def test_a_yaml_anchor_bomb_in_known_is_refused_under_a_memory_cap(world, refuse_in_subprocess, tmp_path):
    threat = tmp_path / "bomb.yaml"
    threat.write_text("sensitive: class\nknown: &k [parents]\n" + BOMB.replace("a: &a", "x: &a") + "preset: *i\n")
    refuse_in_subprocess(["audit", "--tree", world.tree, "--data", world.data, "--threat", threat, "-q"], "bomb.yaml line", "YAML aliases")


def test_a_yaml_anchor_bomb_in_hierarchies_is_refused_under_a_memory_cap(world, refuse_in_subprocess, tmp_path):
    hierarchies = tmp_path / "bomb.yaml"
    hierarchies.write_text("bomb:\n" + "".join("  " + line + "\n" for line in BOMB.splitlines()) + "hierarchies:\n  workclass: {kind: categorical, tree: {ANY: *i}}\n")
    refuse_in_subprocess(["train", "--data", world.adult, "--class-attribute", "income", "--k", "5", "--hierarchies", hierarchies, "--out", tmp_path / "t.json", "-q"],
                         "bomb.yaml", "YAML aliases")


@pytest.mark.parametrize(
    "text, needles",
    [
        ("sensitive: class\nsensitive: parents\n", ("dup.yaml line 2", "key 'sensitive' is written twice (first on line 1)")),
        ("known: [parents]\nsensitive: class\nknown: [health]\n", ("dup.yaml line 3", "key 'known' is written twice")),
        ("base: &b {sensitive: class}\n<<: *b\n", ("dup.yaml line 2", "YAML aliases (*b)")),
        ("known: &k [parents]\nsensitive: class\npreset: *k\n", ("YAML aliases (*k)",)),
    ],
    ids=["sensitive-twice", "known-twice", "merge-key", "alias"],
)
def test_yaml_threat_files_without_aliases_or_keys_twice(world, refuse, tmp_path, text, needles):
    threat = tmp_path / "dup.yaml"
    threat.write_text(text)
    refuse(["audit", "--tree", world.tree, "--data", world.data, "--threat", threat, "-q"], *needles)


@pytest.mark.parametrize(
    "text, needles",
    [
        ("hierarchies:\n  workclass: {kind: categorical, tree: {ANY: [a, b]}}\n  workclass: {kind: categorical, tree: {ANY: [c, d]}}\n", ("key 'workclass' is written twice",)),
        ("hierarchies:\n  age:\n    kind: numeric\n    kind: categorical\n", ("key 'kind' is written twice",)),
    ],
    ids=["attribute-twice", "field-twice"],
)
def test_yaml_hierarchy_files_without_keys_twice(world, refuse, tmp_path, text, needles):
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    refuse(["train", "--data", world.adult, "--class-attribute", "income", "--k", "5", "--hierarchies", path, "--out", tmp_path / "t.json", "-q"], "dup.yaml", *needles)


@pytest.mark.parametrize("reader", ["audit-threat", "train-hierarchies", "rules-rules", "report-result", "show", "audit-data"])
def test_bytes_that_are_not_text_are_refused(world, refuse, tmp_path, reader):
    args = next(c[1] for c in READERS if c[0] == reader)
    path = tmp_path / "binary"
    for target in (path, tmp_path / "binary.yaml"):
        target.write_bytes(b"sensitive: \xff\xfe\x00\x81 class\n" * 3)
    refuse(fill(args, world, tmp_path, path), "binary", "not")


@pytest.mark.parametrize("reader", [r[0] for r in READERS if r[2] == "CSV"])
def test_a_json_document_given_for_a_csv_table_is_named(world, refuse, tmp_path, reader):
    """A model or result file passed where a table goes (--data model.json) is refused as JSON,
    naming the file (it was parsed as a one-column CSV: "the table has 303 records", "class_attribute
    names unknown column(s) 'y' (the columns are: {)" or a tokenizer's error)."""
    args = next(c[1] for c in READERS if c[0] == reader)
    path = tmp_path / "model.json"
    path.write_text('{\n "format": "ppdm-tree",\n "version": 1,\n "nodes": [1, 2, 3]\n}\n')
    refuse(fill(args, world, tmp_path, path), "model.json: a JSON document (ppdm-tree), not a CSV table")
