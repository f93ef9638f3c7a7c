"""Root cause 7: every number an option takes is checked: NaN and infinity, out of range, out of
what the command can do, and options that name nothing are refused with the option named."""

from __future__ import annotations

import pytest

#: (id, arguments, needles). {data} {tree} {adult} {rules} {w} are filled in.
CASES = [
    ("support-nan", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--support", "nan", "--confidence", "0.5"], ("--support", "'nan' is not a finite number")),
    ("support-inf", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--support", "inf", "--confidence", "0.5"], ("--support", "inf is not in the range")),
    ("support-zero", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--support", "0", "--confidence", "0.5", "-q"], ("--support 0",)),
    ("support-tiny", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--support", "1e-300", "--confidence", "0.5", "-q"], ("--support 1e-300", "above the cap")),
    ("confidence-2", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--support", "0.1", "--confidence", "2"], ("--confidence", "2.0 is not in the range 0<=x<=1")),
    ("confidence-text", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--support", "0.1", "--confidence", "high"], ("--confidence", "'high'")),
    ("max-itemsets-0", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--support", "0.1", "--confidence", "0.5", "--max-itemsets", "0"], ("--max-itemsets",)),
    ("rules-qi-comma", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--support", "0.1", "--confidence", "0.5", "--quasi-identifiers", ",", "-q"],
     ("--quasi-identifiers: no column named in ','",)),
    ("rules-qi-sensitive", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--support", "0.1", "--confidence", "0.5", "--quasi-identifiers", "class,parents", "-q"],
     ("--quasi-identifiers: 'class' is the sensitive column",)),
    ("bins-million", ["disguise", "--data", "{adult}", "--theta", "0.8", "--bins", "1000000", "--out", "{w}/d.csv"], ("--bins", "1000000 is not in the range 2<=x<=1000")),
    ("bins-one", ["disguise", "--data", "{adult}", "--theta", "0.8", "--bins", "1", "--out", "{w}/d.csv"], ("--bins",)),
    ("hierarchy-bins-billion", ["hierarchy", "--data", "{adult}", "--column", "age", "--bins", "1000000000"], ("--bins 1000000000", "at most 1,000")),
    ("hierarchy-bins-one", ["hierarchy", "--data", "{adult}", "--column", "age", "--bins", "1"], ("--bins", "1 is not in the range x>=2")),
    ("theta-nan", ["disguise", "--data", "{data}", "--theta", "nan", "--out", "{w}/d.csv"], ("--theta", "'nan' is not a finite number")),
    ("theta-above-one", ["disguise", "--data", "{data}", "--theta", "1.5", "--out", "{w}/d.csv"], ("--theta", "1.5")),
    ("theta-minus-inf", ["disguise", "--data", "{data}", "--theta", "-inf", "--out", "{w}/d.csv"], ("--theta",)),
    ("disguise-columns-comma", ["disguise", "--data", "{data}", "--theta", "0.8", "--columns", ",", "--out", "{w}/d.csv", "-q"], ("--columns: no column named in ','",)),
    ("disguise-median-no-numeric", ["disguise", "--data", "{data}", "--theta", "0.8", "--median", "--out", "{w}/d.csv", "-q"], ("--median cuts numeric columns",)),
    ("disguise-bins-no-numeric", ["disguise", "--data", "{adult}", "--theta", "0.8", "--bins", "4", "--columns", "sex,race", "--out", "{w}/d.csv", "-q"], ("--bins cuts numeric columns", "sex, race")),
    ("disguise-seed-negative", ["disguise", "--data", "{data}", "--theta", "0.8", "--seed", "-1", "--out", "{w}/d.csv"], ("--seed", "-1 is not in the range")),
    ("exact-time-limit-nan", ["audit", "--tree", "{tree}", "--data", "{data}", "--exact", "--exact-time-limit", "nan"], ("--exact-time-limit", "'nan' is not a finite number")),
    ("exact-time-limit-zero", ["audit", "--tree", "{tree}", "--data", "{data}", "--exact", "--exact-time-limit", "0"], ("--exact-time-limit", "0.0 is not in the range x>0")),
    ("exact-time-limit-alone", ["audit", "--tree", "{tree}", "--data", "{data}", "--exact-time-limit", "5", "-q"], ("--exact-time-limit needs --exact",)),
    ("time-limit-nan", ["audit", "--tree", "{tree}", "--data", "{data}", "--internal", "--time-limit", "nan"], ("--time-limit", "'nan'")),
    ("time-limit-negative", ["audit", "--tree", "{tree}", "--data", "{data}", "--internal", "--time-limit", "-1"], ("--time-limit", "-1.0 is not in the range x>=0")),
    ("time-limit-alone", ["audit", "--tree", "{tree}", "--data", "{data}", "--time-limit", "5", "-q"], ("--time-limit", "it needs --internal")),
    ("top-negative", ["audit", "--tree", "{tree}", "--data", "{data}", "--top", "-1"], ("--top", "-1 is not in the range x>=0")),
    ("known-comma", ["audit", "--tree", "{tree}", "--data", "{data}", "--known", ",", "-q"], ("--known: no column named in ','",)),
    ("known-empty", ["audit", "--tree", "{tree}", "--data", "{data}", "--known", "", "-q"], ("--known: no column named in ''",)),
    ("known-unknown-column", ["audit", "--tree", "{tree}", "--data", "{data}", "--known", "nope", "-q"], ("known column(s) not in the data: 'nope'",)),
    ("known-the-sensitive", ["audit", "--tree", "{tree}", "--data", "{data}", "--known", "class", "-q"], ("the sensitive column 'class' cannot also be known",)),
    ("known-individuals-text", ["audit", "--tree", "{tree}", "--data", "{data}", "--known-individuals", "a", "-q"], ("--known-individuals: 'a' is not a row number",)),
    ("known-individuals-negative", ["audit", "--tree", "{tree}", "--data", "{data}", "--known-individuals", "-1", "-q"], ("--known-individuals: '-1'",)),
    ("known-individuals-beyond", ["audit", "--tree", "{tree}", "--data", "{data}", "--known-individuals", "300", "-q"], ("known individual row 300 is outside the table's 300 rows",)),
    ("known-individuals-comma", ["audit", "--tree", "{tree}", "--data", "{data}", "--known-individuals", ",", "-q"], ("--known-individuals: no row named in ','",)),
    ("known-individuals-twice", ["audit", "--tree", "{tree}", "--data", "{data}", "--known-individuals", "1,2,1", "-q"], ("--known-individuals: row 1 is listed twice",)),
    ("audit-criterion-with-model", ["audit", "--tree", "{tree}", "--data", "{data}", "--criterion", "gini", "-q"], ("--criterion and --max-depth train a tree with --dataset",)),
    ("audit-class-other", ["audit", "--tree", "{tree}", "--data", "{data}", "--class", "parents", "-q"], ("--class 'parents': the model predicts 'class'",)),
    ("prune-s-nan", ["prune", "--tree", "{tree}", "--method", "1", "--s", "nan", "--out", "{w}/p.json"], ("--s", "'nan' is not a finite number")),
    ("prune-s-negative", ["prune", "--tree", "{tree}", "--method", "1", "--s", "-1", "--out", "{w}/p.json"], ("--s", "-1.0")),
    ("prune-s-overflow", ["prune", "--tree", "{tree}", "--method", "1", "--s", "1e400", "--out", "{w}/p.json"], ("--s", "'1e400' is not a finite number")),
    ("prune-s-everything", ["prune", "--tree", "{tree}", "--method", "1", "--s", "1e300", "--out", "{w}/p.json", "-q"], ("Method 1 would remove the whole tree",)),
    ("prune-method-3", ["prune", "--tree", "{tree}", "--method", "3", "--s", "1", "--out", "{w}/p.json"], ("--method", "'3' is not one of '1', '2'")),
    ("train-max-depth-negative", ["train", "--data", "{data}", "--class-attribute", "class", "--max-depth", "-1", "--out", "{w}/t.json"], ("--max-depth",)),
    ("train-test-size-one", ["train", "--data", "{data}", "--class-attribute", "class", "--test-size", "1", "--out", "{w}/t.json", "-q"], ("--test-size must be in [0, 1), got 1.0",)),
    ("train-test-size-nan", ["train", "--data", "{data}", "--class-attribute", "class", "--test-size", "nan", "--out", "{w}/t.json"], ("--test-size", "'nan'")),
    ("train-test-size-negative", ["train", "--data", "{data}", "--class-attribute", "class", "--test-size", "-0.1", "--out", "{w}/t.json", "-q"], ("--test-size must be in [0, 1)",)),
    ("train-l-nan", ["train", "--data", "{data}", "--class-attribute", "class", "--l", "nan", "--out", "{w}/t.json"], ("--l", "'nan'")),
    ("train-l-below-one", ["train", "--data", "{data}", "--class-attribute", "class", "--l", "0.5", "--out", "{w}/t.json"], ("--l", "0.5 is not in the range x>=1")),
    ("train-k-zero", ["train", "--data", "{data}", "--class-attribute", "class", "--k", "0", "--out", "{w}/t.json"], ("--k", "0 is not in the range x>=1")),
    ("train-k-beyond-table", ["train", "--data", "{data}", "--class-attribute", "class", "--k", "100000", "--out", "{w}/t.json", "-q"], ("breaches k = 100000",)),
    ("train-seed-huge", ["train", "--data", "{data}", "--class-attribute", "class", "--seed", "99999999999999999999", "--out", "{w}/t.json"], ("--seed",)),
    ("train-seed-negative", ["train", "--data", "{data}", "--class-attribute", "class", "--seed", "-1", "--out", "{w}/t.json"], ("--seed", "-1 is not in the range 0<=x<=4294967295")),
    ("train-min-samples-leaf-zero", ["train", "--data", "{data}", "--class-attribute", "class", "--min-samples-leaf", "0", "--out", "{w}/t.json"], ("--min-samples-leaf",)),
    ("train-attributes-comma", ["train", "--data", "{data}", "--class-attribute", "class", "--attributes", ",", "--out", "{w}/t.json", "-q"], ("--attributes: no column named in ','",)),
    ("train-theta-half", ["train", "--data", "{data}", "--class-attribute", "class", "--theta", "0.5", "--out", "{w}/t.json", "-q"], ("theta = 0.5 cannot be inverted",)),
    ("train-kadet-qi-comma", ["train", "--data", "{data}", "--class-attribute", "class", "--k", "5", "--quasi-identifiers", ",", "--out", "{w}/t.json", "-q"], ("--quasi-identifiers: no column named",)),
    ("attack-threshold-nan", ["attack", "--model", "{tree}", "--data", "{data}", "--attack", "background", "--known", "{data}", "--threshold", "nan"], ("--threshold", "'nan'")),
    ("attack-threshold-two", ["attack", "--model", "{tree}", "--data", "{data}", "--attack", "background", "--known", "{data}", "--threshold", "2"], ("threshold must be in (0, 1], got 2.0",)),
    ("attack-qi-comma", ["attack", "--model", "{tree}", "--data", "{data}", "--quasi-identifiers", ","], ("--quasi-identifiers: no column named in ','",)),
    ("attack-qi-unknown", ["attack", "--model", "{tree}", "--data", "{data}", "--quasi-identifiers", "nope"], ("'nope'",)),
    ("defend-target-nan", ["defend", "--model", "{tree}", "--data", "{data}", "--target", "certain=nan", "-q"], ("'certain=nan'", "'nan' is not a finite number")),
    ("defend-target-share-two", ["defend", "--model", "{tree}", "--data", "{data}", "--target", "confident=2@0.9", "-q"], ("confident: the share must be in [0, 1], got 2",)),
    ("defend-target-span-negative", ["defend", "--model", "{tree}", "--data", "{data}", "--target", "span=-1", "-q"], ("'span=-1'",)),
    ("defend-target-l-inf", ["defend", "--model", "{tree}", "--data", "{data}", "--target", "l=inf", "-q"], ("'l=inf'", "not a finite number")),
    ("defend-target-unknown", ["defend", "--model", "{tree}", "--data", "{data}", "--target", "bogus=1", "-q"], ("unknown measure 'bogus'",)),
    ("defend-target-empty", ["defend", "--model", "{tree}", "--data", "{data}", "--target", "", "-q"], ("target: empty",)),
    ("defend-target-confidence-nan", ["defend", "--model", "{tree}", "--data", "{data}", "--target", "confident=0.1@nan", "-q"], ("'confident=0.1@nan'",)),
    ("defend-families-unknown", ["defend", "--model", "{tree}", "--data", "{data}", "--families", "bogus", "-q"], ("unknown candidate family 'bogus'",)),
    ("defend-families-comma", ["defend", "--model", "{tree}", "--data", "{data}", "--families", ",", "-q"], ("no candidate family chosen",)),
    ("defend-risk-unknown", ["defend", "--model", "{tree}", "--data", "{data}", "--risk", "bogus", "-q"], ("the target has no measure 'bogus'",)),
    ("defend-time-budget-zero", ["defend", "--model", "{tree}", "--data", "{data}", "--time-budget", "0"], ("--time-budget", "0.0 is not in the range x>0")),
    ("defend-test-size-one", ["defend", "--data", "{data}", "--class-attribute", "class", "--test-size", "1", "-q"], ("--test-size must be in [0, 1), got 1.0",)),
    ("defend-seed-huge", ["defend", "--data", "{data}", "--class-attribute", "class", "--seed", "4294967296", "-q"], ("--seed", "4294967296")),
    ("defend-model-and-max-depth", ["defend", "--model", "{tree}", "--data", "{data}", "--max-depth", "2", "-q"], ("train a model: not with --model",)),
    ("show-max-depth-zero", ["show", "{tree}", "--max-depth", "0"], ("--max-depth", "0 is not in the range x>=1")),
    ("show-disclosure-more", ["show", "{w}/labels.json", "--disclosure", "class-counts"], ("holds only labels; it cannot show class-counts",)),
]


@pytest.mark.parametrize("args, needles", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_numbers_and_lists_given_to_options_are_checked(world, refuse, tmp_path, args, needles):
    if "{w}/labels.json" in args:
        doc = world.json("tree")
        doc["disclosure"] = "labels"
        for node in doc["nodes"]:
            for key in ("counts", "n_samples", "n_errors"):
                node.pop(key, None)
        doc.pop("removed_records", None)
        import json

        (tmp_path / "labels.json").write_text(json.dumps(doc))
    names = {n: str(getattr(world, n)) for n in ("data", "tree", "adult", "rules")}
    filled = [a.format(**names, w=tmp_path) for a in args]
    refuse(filled, *needles, outputs=[tmp_path / "d.csv", tmp_path / "t.json", tmp_path / "p.json"])
