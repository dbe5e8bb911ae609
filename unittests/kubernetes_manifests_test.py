#!/usr/bin/env python3
"""The Kubernetes manifests of scripts/kubernetes/ (README "Auditing a fleet"), without a cluster:
each parses as YAML with the fields its kind requires, and each container's command runs here as the
pod would run it (its environment from the manifest, the program, volume and reference pointed at
this build and a temporary folder, reference devices for the GPUs): two nodes' audits, a health
check of one against the other's result, the fleet Job on them (no outlier), then again with a
planted outlier (exit 1, exactly it named).

    unittests/kubernetes_manifests_test.py SOURCE_DIR BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("skipped: python3-yaml is not installed")
    sys.exit(77)

SRC, BINARY = sys.argv[1], sys.argv[2]
FOLDER = os.path.join(SRC, "scripts", "kubernetes")
RUN_ARGS = "--device ref:ati-r520 --suite scalar --quick --seed 1"


def load(name):
    with open(os.path.join(FOLDER, name)) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    assert len(docs) == 1, f"{name}: one object per file"
    return docs[0]


def check_shape(name, m):
    kind = m["kind"]
    assert (m["apiVersion"], kind) in {("batch/v1", "Job"), ("apps/v1", "DaemonSet")}, f"{name}: {kind}"
    assert m["metadata"]["name"], name
    spec = m["spec"]
    template = spec["template"]
    pod = template["spec"]
    if kind == "Job":
        assert pod["restartPolicy"] in ("Never", "OnFailure"), f"{name}: a Job's pods must not restart Always"
    else:
        selector = spec["selector"]["matchLabels"]
        labels = template["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in selector.items()), f"{name}: the selector must match the pods"
    volumes = {v["name"] for v in pod.get("volumes", [])}
    for c in pod["containers"]:
        assert c["name"] and c["image"] and c["command"], f"{name}: container fields"
        names = [e["name"] for e in c.get("env", [])]
        assert len(names) == len(set(names)), f"{name}: an env variable twice"
        for mount in c.get("volumeMounts", []):
            assert mount["name"] in volumes, f"{name}: volume {mount['name']} is not declared"


def run_container(name, m, results, node, overrides):
    """The manifest's container command, run here; its exit status and output."""
    c = m["spec"]["template"]["spec"]["containers"][0]
    env = dict(os.environ)
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = str(e["value"])
        elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName":
            env[e["name"]] = node
    env.update({"GPUPARANOIA": BINARY, "RESULTS": results})
    env.update(overrides)
    p = subprocess.run(c["command"], env=env, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


def main():
    manifests = {n: load(n) for n in sorted(os.listdir(FOLDER)) if n.endswith(".yaml")}
    assert {"audit-job.yaml", "fleet-job.yaml", "check-daemonset.yaml"} <= set(manifests), manifests.keys()
    for name, m in manifests.items():
        check_shape(name, m)
    with tempfile.TemporaryDirectory() as results:
        for node in ("node-a", "node-b"):
            rc, out = run_container("audit", manifests["audit-job.yaml"], results, node,
                                    {"GPUPARANOIA_ARGS": RUN_ARGS})
            assert rc == 0, f"audit on {node}: {rc}\n{out}"
            assert os.path.exists(os.path.join(results, node, "ref-ati-r520.json")), out
        reference = os.path.join(results, "node-b", "ref-ati-r520.json")
        rc, out = run_container("check", manifests["check-daemonset.yaml"], results, "node-a",
                                {"REFERENCE": reference, "GPUPARANOIA_SECONDS": "1", "GPUPARANOIA_INTERVAL": "0",
                                 "GPUPARANOIA_ARGS": "--device ref:ati-r520"})
        assert rc == 0 and "computes as recorded" in out, f"check: {rc}\n{out}"
        assert os.path.exists(os.path.join(results, "checks", "node-a", "ref-ati-r520.json")), out
        rc, out = run_container("fleet", manifests["fleet-job.yaml"], results, "node-a", {})
        assert rc == 0, f"fleet without an outlier: {rc}\n{out}"
        assert os.path.exists(os.path.join(results, "fleet.md")) and "0 outliers" in out, out
        with open(reference) as f:
            planted = json.load(f)
        planted["host"]["hostname"] = "node-c"
        planted["profile"]["scalar"]["binary32"]["mul"]["rounding"] = "rne"
        os.makedirs(os.path.join(results, "node-c"))
        with open(os.path.join(results, "node-c", "ref-ati-r520.json"), "w") as f:
            json.dump(planted, f)
        rc, out = run_container("fleet", manifests["fleet-job.yaml"], results, "node-a", {})
        assert rc == 1, f"fleet with an outlier: {rc}\n{out}"
        assert "1 outlier" in out and "OUTLIER node-c ref:ati-r520" in out, out
        assert out.count("OUTLIER") == 1, out
    print("ok: the manifests parse, and their commands audit, check and aggregate here")


main()
