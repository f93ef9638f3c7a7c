"""Root cause 6: a model file with a hole is refused naming the field: non-finite numbers, counts
that do not add up or that are missing, sizes that disagree, unknown keys, values of the wrong
type, a structure that is not a tree; a LightGBM or XGBoost file cut or edited likewise."""

from __future__ import annotations

import copy
import json

import pytest


def _set(path, value):
    """A mutation setting ``path`` (keys and indices) of the document to ``value``."""

    def mutate(doc):
        *head, last = path
        for key in head:
            doc = doc[key]
        doc[last] = value

    return mutate


def _drop(path):
    def mutate(doc):
        *head, last = path
        for key in head:
            doc = doc[key]
        del doc[last]

    return mutate


def _leaf(doc):
    return next(i for i, n in enumerate(doc["nodes"]) if "split" not in n)


def _add_to_root_label(doc):
    """One more record of the root's own label at the root only: sizes agree, children's sums do not."""
    root = doc["nodes"][0]
    root["counts"][doc["classes"].index(root["label"])] += 1
    root["n_samples"] += 1


def _numeric_split(doc):
    return next(i for i, n in enumerate(doc["nodes"]) if n.get("split", {}).get("kind") == "threshold")


#: (id, the world's tree to start from, mutation, the command, needles). Commands rotate between
#: show, audit and prune: every one reads through the same validation.
TREE_MUTATIONS = [
    ("nan-threshold", "atree", lambda d: _set(["nodes", _numeric_split(d), "split", "threshold"], float("nan"))(d), "show", ("split.threshold", "expected a finite number, got nan")),
    ("inf-threshold", "atree", lambda d: _set(["nodes", _numeric_split(d), "split", "threshold"], float("inf"))(d), "prune", ("split.threshold", "finite")),
    ("text-threshold", "atree", lambda d: _set(["nodes", _numeric_split(d), "split", "threshold"], "9.5")(d), "audit", ("split.threshold", "expected a number")),
    ("no-counts", "tree", _drop(["nodes", 3, "counts"]), "audit", ("nodes[3].counts", "missing, but the file's disclosure is class-counts")),
    ("leaf-off-by-one", "tree", lambda d: d["nodes"][_leaf(d)]["counts"].__setitem__(0, d["nodes"][_leaf(d)]["counts"][0] + 1), "prune", ("n_samples", "but the node's class counts give")),
    ("internal-not-sum", "tree", lambda d: _add_to_root_label(d), "show", ("nodes[0].counts", "its children's add up to")),
    ("root-1e308", "tree", lambda d: d["nodes"][0].__setitem__("counts", [1e308] * len(d["classes"])), "audit", ("nodes[0].counts", "finite, 0 to 1e+15")),
    ("negative-count", "tree", lambda d: d["nodes"][3]["counts"].__setitem__(0, -1), "show", ("nodes[3].counts",)),
    ("boolean-count", "tree", lambda d: d["nodes"][3]["counts"].__setitem__(0, True), "prune", ("nodes[3].counts",)),
    ("counts-too-few", "tree", lambda d: d["nodes"][3]["counts"].pop(), "audit", ("nodes[3].counts", "expected 4 numbers")),
    ("size-disagrees", "tree", lambda d: d["nodes"][2].__setitem__("n_samples", d["nodes"][2]["n_samples"] + 5), "show", ("nodes[2].n_samples", "class counts give")),
    ("errors-above-size", "tree", lambda d: d["nodes"][2].__setitem__("n_errors", d["nodes"][2]["n_samples"] + 1), "show", ("nodes[2].n_errors",)),
    ("unknown-key", "tree", _set(["weights"], [1, 2]), "audit", ("weights: unknown key",)),
    ("unknown-node-key", "tree", _set(["nodes", 1, "weight"], 1), "prune", ("nodes[1].weight: unknown key",)),
    ("unknown-split-key", "tree", _set(["nodes", 0, "split", "note"], "x"), "show", ("nodes[0].split.note: unknown key",)),
    ("label-unknown", "tree", _set(["nodes", 3, "label"], "nope"), "audit", ("nodes[3].label", "'nope' is not one of the classes")),
    ("label-object", "tree", _set(["nodes", 3, "label"], {"x": 1}), "show", ("nodes[3].label",)),
    ("class-object", "tree", lambda d: d["classes"].append({"a": 1}), "audit", ("classes[4]", "expected a text or a number")),
    ("class-twice", "tree", lambda d: d["classes"].append(d["classes"][0]), "show", ("classes", "lists 'not_recom' twice")),
    ("category-object", "tree", lambda d: d["attributes"][0]["categories"].append({"a": 1}), "show", ("attributes[0].categories[3]", "expected a text or a number")),
    ("category-list", "tree", lambda d: d["attributes"][0]["categories"].append([1]), "prune", ("attributes[0].categories[3]",)),
    ("category-twice", "tree", lambda d: d["attributes"][0]["categories"].append(d["attributes"][0]["categories"][0]), "audit", ("attributes[0].categories", "twice")),
    ("attribute-twice", "tree", lambda d: d["attributes"].append(copy.deepcopy(d["attributes"][0])), "show", ("attributes[8].name", "is listed twice")),
    ("group-value-object", "tree", lambda d: d["nodes"][0]["split"]["groups"][0].append({"a": 1}), "audit", ("nodes[0].split.groups[0]", "expected texts or numbers")),
    ("group-value-unknown", "tree", lambda d: d["nodes"][0]["split"]["groups"][0].append("nope"), "show", ("nodes[0].split.groups[0]", "'nope' is not a category")),
    ("split-attribute-unknown", "tree", _set(["nodes", 0, "split", "attribute"], "nope"), "prune", ("nodes[0].split.attribute", "'nope' is not among")),
    ("default-out-of-range", "tree", _set(["nodes", 0, "split", "default"], 99), "show", ("nodes[0].split.default", "expected a branch from 0 to 2")),
    ("default-negative", "tree", _set(["nodes", 0, "split", "default"], -1), "audit", ("nodes[0].split.default",)),
    ("child-is-self", "tree", lambda d: d["nodes"][0]["children"].__setitem__(0, 0), "show", ("nodes[0].children",)),
    ("child-out-of-range", "tree", lambda d: d["nodes"][0]["children"].__setitem__(0, 9999), "audit", ("nodes[0].children", "node 9999")),
    ("child-true", "tree", lambda d: d["nodes"][0]["children"].__setitem__(0, True), "prune", ("nodes[0].children",)),
    ("child-twice", "tree", lambda d: d["nodes"][0]["children"].__setitem__(1, d["nodes"][0]["children"][0]), "show", ("nodes[0].children",)),
    ("leaf-with-children", "tree", lambda d: d["nodes"][_leaf(d)].__setitem__("children", [1]), "show", ("children", "a leaf (no split) has no children")),
    ("parent-wrong", "tree", _set(["nodes", 2, "parent"], 1), "audit", ("does not name",)),
    ("id-out-of-order", "tree", _set(["nodes", 2, "id"], 7), "show", ("nodes[2].id", "expected 2")),
    ("orphan", "tree", lambda d: d["nodes"].append({"id": len(d["nodes"]), "parent": 0, "label": d["classes"][0], "counts": [0] * 4, "n_samples": 0, "n_errors": 0}), "prune",
     ("does not list",)),
    ("version-2", "tree", _set(["version"], 2), "show", ("version", "unsupported version 2")),
    ("version-text", "tree", _set(["version"], "1"), "audit", ("version", "expected an integer")),
    ("disclosure-unknown", "tree", _set(["disclosure"], "everything"), "show", ("disclosure", "unknown disclosure 'everything'")),
    ("nodes-empty", "tree", _set(["nodes"], []), "prune", ("nodes", "at least one node")),
    ("removed-negative", "tree", _set(["removed_records"], -5), "show", ("removed_records",)),
    ("removed-huge", "tree", _set(["removed_records"], 1e300), "prune", ("removed_records", "0 to 1e+15")),
    ("class-attribute-empty", "tree", _set(["class_attribute"], " "), "show", ("class_attribute", "empty")),
    ("candidates-objects", "tree", _set(["nodes", 0, "candidates"], [{"a": 1}]), "prune", ("nodes[0].candidates[0]", "is not among the tree's attributes")),
    ("score-nan", "tree", _set(["nodes", 0, "score"], float("nan")), "show", ("nodes[0].score", "finite")),
    ("top-level-list", "tree", None, "audit", ("expected a JSON object",)),
]


def _command(command, path, world, tmp_path):
    return {
        "show": ["show", path],
        "audit": ["audit", "--tree", path, "--data", world.adult if "atree" in str(path) else world.data, "-q"],
        "prune": ["prune", "--tree", path, "--method", "1", "--s", "1", "--out", tmp_path / "p.json", "-q"],
    }[command]


@pytest.mark.parametrize("source, mutate, command, needles", [c[1:] for c in TREE_MUTATIONS], ids=[c[0] for c in TREE_MUTATIONS])
def test_a_tree_file_with_a_hole_is_refused_naming_the_field(world, refuse, tmp_path, source, mutate, command, needles):
    doc = world.json(source)
    if mutate is None:
        doc = [doc]
    else:
        mutate(doc)
    path = tmp_path / f"bad-{source}.json"
    path.write_text(json.dumps(doc))  # NaN and Infinity as Python's json writes them
    refuse(_command(command, path, world, tmp_path), path.name, *needles, outputs=[tmp_path / "p.json"])


@pytest.mark.parametrize(
    "command, other, needle",
    [("show", "xgb", "an xgboost-json model numbers its input columns: add --data"), ("show", "lgb", "a lightgbm-text model numbers its input columns"),
     ("prune", "forest", "a ppdm-forest model, not a ppdm-tree file"), ("prune", "xgb", "an XGBoost model, not a ppdm-tree file"),
     ("prune", "lgb", "a LightGBM model text file, not a ppdm tree file")],
)
def test_another_models_file_is_named_by_its_kind(world, refuse, needs, tmp_path, command, other, needle):
    path = needs(other)
    refuse(_command(command, path, world, tmp_path), needle)


FOREST_MUTATIONS = [
    ("no-trees", _set(["trees"], []), ("trees", "at least one tree")),
    ("tree-not-object", _set(["trees", 0], "x"), ("trees[0]", "expected an object")),
    ("multiplicities-bad", _set(["trees", 0, "multiplicities"], "!!"), ("trees[0].multiplicities", "base-36")),
    ("multiplicities-negative", _set(["trees", 0, "multiplicities"], [-1] * 300), ("trees[0].multiplicities",)),
    ("combine-unknown", _set(["combine"], "majority"), ("combine", "expected one of")),
    ("node-label-unknown", _set(["trees", 0, "nodes", 0, "label"], "nope"), ("trees[0].nodes[0].label",)),
    ("known-unknown", _set(["trees", 0, "known"], ["everything"]), ("trees[0].known[0]",)),
]


@pytest.mark.parametrize("mutate, needles", [c[1:] for c in FOREST_MUTATIONS], ids=[c[0] for c in FOREST_MUTATIONS])
def test_a_forest_file_with_a_hole_is_refused_naming_the_field(world, refuse, tmp_path, mutate, needles):
    doc = world.json("forest")
    mutate(doc)
    path = tmp_path / "bad-forest.json"
    path.write_text(json.dumps(doc))
    refuse(["audit", "--model", path, "--data", world.train, "-q"], "bad-forest.json", *needles)


LIGHTGBM_EDITS = [
    ("cut-before-end", lambda t: t[: t.index("Tree=1")], ("ends before 'end of trees'",)),
    ("cut-mid-file", lambda t: t[: len(t) // 3], ("ends before 'end of trees'",)),
    ("only-header", lambda t: "tree\n", ("ends before 'end of trees'",)),
    ("fewer-trees-than-sizes", lambda t: t.replace("tree_sizes=", "tree_sizes=1 ", 1), ("tree_sizes",)),
    ("threshold-text", lambda t: t.replace("threshold=", "threshold=abc ", 1), ("tree 0: threshold holds 'abc', not a number",)),
    ("leaf-count-nan", lambda t: t.replace("leaf_count=", "leaf_count=nan ", 1), ("tree 0: leaf_count",)),
    ("leaf-count-negative", lambda t: _replace_field(t, "leaf_count", lambda v: "-" + v), ("tree 0: leaf_count",)),
    ("child-out-of-range", lambda t: _replace_field(t, "left_child", lambda v: "99"), ("LightGBM tree 0", "child 99")),
    ("child-is-root", lambda t: _replace_field(t, "left_child", lambda v: "0"), ("LightGBM tree 0", "child 0")),
    ("extra-leaf-value", lambda t: t.replace("leaf_value=", "leaf_value=1 ", 1), ("LightGBM tree 0", "leaf values for")),
    ("header-number-text", lambda t: t.replace("num_tree_per_iteration=", "num_tree_per_iteration=x", 1), ("malformed lightgbm-text model",)),
]


def _replace_field(text, key, change):
    """Change the first value of the first ``key=`` line."""
    start = text.index(f"\n{key}=") + len(key) + 2
    end = start + len(text[start:].split(maxsplit=1)[0])
    return text[:start] + change(text[start:end]) + text[end:]


@pytest.mark.parametrize("edit, needles", [c[1:] for c in LIGHTGBM_EDITS], ids=[c[0] for c in LIGHTGBM_EDITS])
def test_a_lightgbm_file_cut_or_edited_is_refused(world, refuse, needs, tmp_path, edit, needles):
    path = tmp_path / "bad.lgb.txt"
    path.write_text(edit(needs("lgb").read_text()))
    refuse(["audit", "--model", path, "--data", world.train, "-q"], "bad.lgb.txt", *needles)


def _tree0(doc):
    return doc["learner"]["gradient_booster"]["model"]["trees"][0]


XGBOOST_EDITS = [
    ("cut", None, ("neither JSON",)),
    ("nan-split", lambda d: _tree0(d)["split_conditions"].__setitem__(0, float("nan")), ("XGBoost tree 0", "split_conditions")),
    ("child-out-of-range", lambda d: _tree0(d)["left_children"].__setitem__(0, 999), ("XGBoost tree 0", "child 999")),
    ("child-is-self", lambda d: _tree0(d)["left_children"].__setitem__(0, 0), ("XGBoost tree 0", "child 0")),
    ("negative-hessian", lambda d: _tree0(d)["sum_hessian"].__setitem__(0, -5), ("XGBoost tree 0", "cover")),
    ("short-array", lambda d: _tree0(d)["right_children"].pop(), ("XGBoost tree 0", "right children for")),
    ("tree-not-object", lambda d: d["learner"]["gradient_booster"]["model"]["trees"].__setitem__(0, "x"), ("XGBoost tree 0: expected an object",)),
    ("no-trees", lambda d: d["learner"]["gradient_booster"]["model"].__setitem__("trees", []), ("trees is empty",)),
    ("learner-text", lambda d: d.__setitem__("learner", "x"), ("learner is missing or malformed",)),
    ("base-score-text", lambda d: d["learner"]["learner_model_param"].__setitem__("base_score", "abc"), ("malformed xgboost-json model",)),
    ("tree-info-out-of-range", lambda d: d["learner"]["gradient_booster"]["model"].__setitem__("tree_info", [99] * 99), ("tree_info",)),
]


@pytest.mark.parametrize("edit, needles", [c[1:] for c in XGBOOST_EDITS], ids=[c[0] for c in XGBOOST_EDITS])
def test_an_xgboost_file_cut_or_edited_is_refused(world, refuse, needs, tmp_path, edit, needles):
    text = needs("xgb").read_text()
    path = tmp_path / "bad.xgb.json"
    if edit is None:
        path.write_text(text[: len(text) // 2])
    else:
        doc = json.loads(text)
        edit(doc)
        path.write_text(json.dumps(doc))
    refuse(["audit", "--model", path, "--data", world.train, "-q"], "bad.xgb.json", *needles)


def test_a_zip_that_is_not_a_skops_file_is_named(world, refuse, tmp_path):
    pytest.importorskip("skops")
    import zipfile

    path = tmp_path / "model.skops"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a model")
    refuse(["audit", "--model", path, "--data", world.data, "-q"], "model.skops", "not a skops model file")


def test_a_pickle_is_never_read(world, refuse, tmp_path):
    import pickle

    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps({"a": 1}))
    refuse(["audit", "--model", path, "--data", world.data, "-q"], "model.pkl", "never pickles")


def test_the_pickle_refusal_names_every_format_read(world, refuse, tmp_path):
    """A pickle is refused naming what is read instead, skops files among them (it named JSON and
    LightGBM text only, though skops is how the README saves a scikit-learn pipeline)."""
    path = tmp_path / "model.pkl"
    path.write_bytes(b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x94.")
    refuse(["audit", "--model", path, "--data", world.data, "-q"], "model.pkl", "skops files, never pickles")
