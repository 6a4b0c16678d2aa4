"""The JSON Schema of task files (schema/task-file.v1.json) accepts every
example task file and the paper suite written as one, and refuses what the
loader refuses: an unknown field, an unknown check kind, a wrong type."""

import copy
import json
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schema" / "task-file.v1.json").read_text())
EXAMPLES = sorted((ROOT / "examples" / "tasks").glob("**/*.json"))


def validator():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


def test_there_are_examples_for_every_domain_and_the_paper_suite():
    names = {path.stem for path in EXAMPLES}
    assert {"scheduling", "travel", "support", "ecommerce", "paper"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_schema_accepts_the_example(path):
    errors = [e.message for e in validator().iter_errors(json.loads(path.read_text()))]
    assert errors == []


def test_the_schema_refuses_what_the_loader_refuses():
    good = json.loads((ROOT / "examples" / "tasks" / "scheduling.json").read_text())
    breaks = [
        lambda f: f["tasks"][0].update(expected=[]),
        lambda f: f["tasks"][0]["expect"][0].update(kind="close_to"),
        lambda f: f["tasks"][0].update(level="two"),
        lambda f: f["tasks"][0].update(domain="bakery"),
        lambda f: f.update(version=2),
        lambda f: f["tasks"][0].update(state={}),
    ]
    for i, brk in enumerate(breaks):
        bad = copy.deepcopy(good)
        brk(bad)
        assert not validator().is_valid(bad), i
