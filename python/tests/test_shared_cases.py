"""The cases of shared_cases.json through the Python package (pure Python:
no GPU, no torch). unittests/Runtime/SharedCasesTest.cpp runs the same
cases through the C++ runtime: manifests read with the same messages, grids
and workspaces evaluated alike, the same peak table and the same explain
report, line for line."""

import copy
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from attn_mlir import explain as ex  # noqa: E402
from attn_mlir.manifest import Manifest, ManifestError  # noqa: E402

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "shared_cases.json")) as f:
    CASES = json.load(f)


def edit(data, case):
    """`data` with the case's "set" and "remove" JSON pointers applied."""
    data = copy.deepcopy(data)
    for pointer, value in list(case.get("set", {}).items()) + [(p, None) for p in case.get("remove", [])]:
        *path, last = pointer.split("/")[1:]
        parent = data
        for key in path:
            parent = parent[int(key) if isinstance(parent, list) else key]
        if pointer in case.get("remove", []):
            del parent[int(last) if isinstance(parent, list) else last]
        elif isinstance(parent, list) and last == "-":
            parent.append(value)
        else:
            parent[int(last) if isinstance(parent, list) else last] = value
    return data


def facts(d):
    kernel = dict(d["kernel"], tensor_cores=ex.TensorCores(**d["kernel"]["tensor_cores"]))
    return ex.Facts(ex.Sizes(**d["sizes"]), d["dtype"], d["tf32"], d["causal"], d["mask_elements"],
                    d["mask_dtype"], d["median_ms"], ex.Device(**d["device"]), ex.Kernel(**kernel),
                    [ex.Operand(**o) for o in d["operands"]], tuple(d["mask_blocks"]),
                    tuple(d["causal_rows"]))


class SharedCasesTest(unittest.TestCase):
    def test_manifests(self):
        for case in CASES["manifest_cases"]:
            with self.subTest(case["name"]):
                data = edit(CASES["manifests"][case["manifest"]], case)
                if "error" in case:
                    with self.assertRaises(ManifestError) as caught:
                        Manifest(data)
                    self.assertEqual(str(caught.exception), case["error"])
                    continue
                m, sizes = Manifest(data), case.get("sizes")
                for key, get in (("grid", lambda: list(m.grid_for(sizes))),
                                 ("prologue_grids", lambda: [list(m.prologue_grid_for(i, sizes))
                                                             for i in range(len(m.prologue))]),
                                 ("epilogue_grids", lambda: [list(m.epilogue_grid_for(i, sizes))
                                                             for i in range(len(m.epilogue))]),
                                 ("workspace_bytes", lambda: {n: m.workspace_bytes(n, sizes)
                                                              for n in m.workspaces})):
                    if key in case:
                        self.assertEqual(get(), case[key])
                for key, call in (("grid_error", lambda: m.grid_for(sizes)),
                                  ("workspace_error", lambda: [m.workspace_bytes(n, sizes)
                                                               for n in m.workspaces])):
                    if key in case:
                        with self.assertRaises(ValueError) as caught:
                            call()
                        self.assertEqual(str(caught.exception), case[key])

    def test_peaks(self):
        for case in CASES["peak_cases"]:
            with self.subTest(case):
                self.assertEqual(ex.peak_tflops(case["chip"], case["device"], case["dtype"],
                                                case["tf32"]), (case["tflops"], case["note"]))

    def test_explain(self):
        for case in CASES["explain_cases"]:
            with self.subTest(case["name"]):
                report = ex.compute(facts(case["facts"]))
                self.assertEqual(report.lines(), case["lines"])
                self.assertEqual(json.loads(json.dumps(ex.to_json(report))), case["json"])


if __name__ == "__main__":
    unittest.main()
