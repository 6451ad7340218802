"""The JSON of `list --json`, `info --json` (on the default device) and `compare --json` (two saved
reports) validates against docs/list.schema.json, docs/info.schema.json and docs/compare.schema.json,
and each schema rejects a document with a planted error, so a schema that accepts anything fails here."""
import copy
import json
import os
import tempfile

import jsonschema  # Debian's python3-jsonschema

from clitest import SOURCE_DIR, expect, load_json, main, run

FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures", "reports")


def schema(name):
    with open(os.path.join(SOURCE_DIR, "docs", f"{name}.schema.json")) as f:
        return json.load(f)


def validator(name):
    """A draft-07 validator that resolves references by $id into report.schema.json (info's) and
    machine-choice.schema.json (compare's machine_choice)."""
    s = schema(name)
    store = {x["$id"]: x for x in (schema("report"), schema("machine-choice"))}
    resolver = jsonschema.RefResolver.from_schema(s, store=store)
    return jsonschema.Draft7Validator(s, resolver=resolver)


def expect_valid(name, doc):
    errors = sorted(validator(name).iter_errors(doc), key=lambda e: list(e.absolute_path))
    expect(not errors, f"{name}.schema.json rejects real output: " +
           "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]))


def expect_rejected(name, doc, what):
    expect(not validator(name).is_valid(doc), f"{name}.schema.json accepted {what}")


def json_of(*args):
    r = run(*args)
    expect(r.rc == 0, f"{' '.join(args)} failed", r)
    return load_json(r.stdout, r)


def test_list_json_matches_its_schema():
    doc = json_of("list", "--json")
    expect_valid("list", doc)
    broken = copy.deepcopy(doc)
    broken["platforms"][0]["devices"][0]["selector"] = "first"
    expect_rejected("list", broken, "a selector that is not P:D")


def test_info_json_matches_its_schema():
    doc = json_of("info", "--json")
    expect_valid("info", doc)
    broken = copy.deepcopy(doc)
    del broken["compute_units"]
    expect_rejected("info", broken, "a device without compute_units")


def test_compare_json_matches_its_schema():
    a = os.path.join(FIXTURES, "pocl_kernel_quick.json")
    b = os.path.join(FIXTURES, "synthetic_minimal.json")
    for pair in ((a, b), (a, a), (b, a)):
        doc = json_of("compare", *pair, "--json")
        expect_valid("compare", doc)
    verdicts = {m["verdict"] for m in doc["metrics"]}
    expect("only_in_a" in verdicts and "only_in_b" in verdicts, f"fixtures do not exercise both sides: {verdicts}")
    broken = copy.deepcopy(doc)
    broken["metrics"][0]["verdict"] = "better"
    expect_rejected("compare", broken, "an unknown verdict")


def test_compare_json_machine_choice_matches_its_schema():
    """Two reports with workloads, one priced and one not: the best / best value / cheapest block
    with figures, nulls and caveats validates; a malformed one does not."""
    d = tempfile.mkdtemp(prefix="clprobe-schema-")
    with open(os.path.join(FIXTURES, "default_quick.json")) as f:
        base = json.load(f)
    paths = []
    for i, price in enumerate((2.5, None)):
        base["options"]["price_per_hour"] = price
        paths.append(os.path.join(d, f"priced{i}.json"))
        with open(paths[-1], "w") as f:
            json.dump(base, f)
    doc = json_of("compare", *paths, "--json")
    expect_valid("compare", doc)
    choice = doc["machine_choice"]
    expect([c["workload"] for c in choice] == ["glm", "attention"], f"machine_choice: {choice}")
    expect(choice[0]["best_value"]["index"] == 0 and choice[0]["caveats"], f"{choice[0]}")
    broken = copy.deepcopy(doc)
    broken["machine_choice"][0]["cheapest"] = paths[0]
    expect_rejected("compare", broken, "a choice given as a bare name")
    broken = copy.deepcopy(doc)
    del broken["machine_choice"][0]["reports"][0]["cost_basis"]
    expect_rejected("compare", broken, "a row without its cost basis")


def with_drift(path, factors, out_dir):
    """A copy of a saved report with a drift block of checks whose rates are 100 and 40 times each factor."""
    with open(path) as f:
        doc = json.load(f)
    checks = [{"offset_seconds": 1.0 + i, "before_probe": "kernel.bandwidth", "compute_gflops": 100 * x,
               "memory_gb_per_s": 40 * x} for i, x in enumerate(factors)]
    series = {"n": len(factors), "median": 0, "spread": max(factors) / min(factors) - 1}
    doc["drift"] = {"checks": checks, "compute": series, "memory": series, "note": "", "cost_seconds": 0.1}
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, os.path.basename(path))
    with open(out, "w") as f:
        json.dump(doc, f)
    return out


def test_compare_json_with_drift_matches_its_schema():
    a = os.path.join(FIXTURES, "pocl_kernel_quick.json")
    with tempfile.TemporaryDirectory() as d:
        # B's reference spread 30% within the run, and its machine half as fast as A's.
        steady = with_drift(a, [1.0, 1.01], os.path.join(d, "a"))
        slower = with_drift(a, [0.5, 0.65], os.path.join(d, "b"))
        doc = json_of("compare", steady, slower, "--json")
        expect_valid("compare", doc)
        machine = doc.get("machine", {})
        expect(machine.get("shifts", [{}])[0].get("verdict") == "slower" and machine.get("regressed") is True,
               f"the slower machine is not called: {machine}")
        expect(doc["regressed"] is True, "the comparison does not say the gate fails")
        expect(abs(machine["spread_b"] - 0.3) < 1e-9, f"B's spread within the run: {machine}")
        # The spread within a run and the machine's shift widen no band: every band is what the same
        # samples get without drift checks.
        plain = json_of("compare", a, a, "--json")
        bands = {(m["metric"], json.dumps(m["labels"], sort_keys=True)): m["band"] for m in plain["metrics"]}
        widened = [m["metric"] for m in doc["metrics"] if m["method"] != "best_of" and
                   abs(m["band"] - bands[(m["metric"], json.dumps(m["labels"], sort_keys=True))]) > 1e-12]
        expect(not widened, f"bands widened by the drift: {widened}")
        expect("machine" not in plain, "reports without drift compare as before")
        broken = copy.deepcopy(doc)
        broken["machine"]["shifts"][0]["series"] = "guess"
        expect_rejected("compare", broken, "an unknown reference series")


if __name__ == "__main__":
    main([test_list_json_matches_its_schema, test_info_json_matches_its_schema, test_compare_json_matches_its_schema,
          test_compare_json_with_drift_matches_its_schema, test_compare_json_machine_choice_matches_its_schema])
