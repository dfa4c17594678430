"""Every dashboard panel shows real data from a real Prometheus scrape.

Starts the real utilityd and a real Prometheus (Debian's package, loopback,
1 s scrapes, the repository's alert rules), drives decisions through the
service with the simulator plus a trickle of bad requests, then runs every
PromQL expression of the Grafana dashboard and of the alert rules against
Prometheus's HTTP API. Each must parse; every dashboard query must return
data. Also checks that the deploy files parse and agree with the repository.

  /usr/bin/python3 prometheus_e2e_test.py UTILITYD SIM STUBS_DIR
"""
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

import yaml

UTILITYD, SIM, STUBS = sys.argv[1:4]
sys.path.insert(0, STUBS)
import grpc  # noqa: E402
from utilityd.v1 import decision_service_pb2 as pb  # noqa: E402
from utilityd.v1 import decision_service_pb2_grpc as rpc  # noqa: E402

ROOT = os.getcwd()
DASHBOARD = os.path.join(ROOT, "deploy/grafana/dashboards/utilityd.json")
RULES = os.path.join(ROOT, "deploy/prometheus/rules.yml")
RATE = "10s"  # $__rate_interval at a 1 s scrape


def read_text(path):
    with open(path) as f:
        return f.read()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if predicate():
                return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


def dashboard_queries():
    queries = []
    for panel in json.loads(read_text(DASHBOARD))["panels"]:
        for target in panel["targets"]:
            expr = (target["expr"]
                    .replace("$behaviour_set", ".*")
                    .replace("$__rate_interval", RATE)
                    .replace("$decision_hz", "10"))
            queries.append((panel["title"], expr))
    return queries


def rule_queries():
    groups = yaml.safe_load(read_text(RULES))["groups"]
    return [(r["alert"], r["expr"]) for g in groups for r in g["rules"]]


METRIC = r"\b((?:utilityd|grpc_server|process)_[a-z0-9_]+)"
SUFFIXES = ("_bucket", "_sum", "_count")


def deployed_names():
    """Every metric name the dashboard, the alert rules and the rules' unit
    tests read, with the label names their selectors match on."""
    texts = [e for _, e in dashboard_queries() + rule_queries()]
    texts.append(read_text("tests/deploy/rules_test.yml"))
    names = {}
    for text in texts:
        for m in re.finditer(METRIC + r"(\{[^}]*\})?", text):
            labels = re.findall(r"([a-z_]+)\s*(?:=~|!~|!=|=)", m.group(2) or "")
            names.setdefault(m.group(1), set()).update(labels)
    return names


def documented_names():
    """Every metric name docs/OBSERVABILITY.md's table lists."""
    names = set()
    for line in read_text("docs/OBSERVABILITY.md").splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`" + METRIC[2:] + r"`", line.split("|")[1]))
    return names


def exposition(text):
    """The scrape's families: name -> (type, the label names its samples
    carry)."""
    types, labels = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            types[name] = kind
            labels[name] = set()
        elif line and not line.startswith("#"):
            m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?", line)
            name = m.group(1)
            family = next((name[:-len(s)] for s in SUFFIXES
                           if name.endswith(s) and types.get(name[:-len(s)]) == "histogram"),
                          name)
            labels.setdefault(family, set()).update(
                re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(2) or ""))
    return {name: (types.get(name), labels.get(name, set())) for name in types}


class PrometheusEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="utilityd_prom_")
        cls.procs = []
        port_file = os.path.join(cls.dir, "ports")
        # A shadow candidate: the arena mage with take_cover at half weight.
        shadow = os.path.join(cls.dir, "shadow")
        os.mkdir(shadow)
        arena = read_text("examples/behaviour_sets/arena_mage.yaml")
        with open(os.path.join(shadow, "arena_mage.yaml"), "w") as f:
            f.write(arena.replace("  - name: take_cover\n",
                                  "  - name: take_cover\n    weight: 0.5\n", 1))
        # A canary serving the same change to half the agents, for the
        # canary row.
        canary = os.path.join(cls.dir, "canary")
        shutil.copytree("examples/behaviour_sets", canary)
        shutil.copy(os.path.join(shadow, "arena_mage.yaml"), canary)
        cls.procs.append(subprocess.Popen(
            [UTILITYD, "--config_dir=examples/behaviour_sets",
             "--grpc_address=127.0.0.1:0", "--http_address=127.0.0.1:0",
             "--shadow_config_dir=" + shadow, "--shadow_sample=0.5",
             "--canary_config_dir=" + canary, "--canary_share=0.5",
             "--port_file=" + port_file],
            stderr=open(os.path.join(cls.dir, "utilityd.log"), "w")))
        wait_for(lambda: len(read_text(port_file).split()) == 2, 20, "utilityd")
        grpc_port, http_port = read_text(port_file).split()
        cls.metrics_url = "http://127.0.0.1:%s/metrics" % http_port
        cls.target = "127.0.0.1:" + grpc_port

        cls.prom = "http://127.0.0.1:%d" % free_port()
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [RULES],
            "scrape_configs": [{"job_name": "utilityd", "static_configs": [
                {"targets": ["127.0.0.1:" + http_port]}]}],
        }
        config_path = os.path.join(cls.dir, "prometheus.yml")
        yaml.safe_dump(config, open(config_path, "w"))
        cls.procs.append(subprocess.Popen(
            ["prometheus", "--config.file=" + config_path,
             "--storage.tsdb.path=" + os.path.join(cls.dir, "data"),
             "--web.listen-address=" + cls.prom[len("http://"):],
             "--log.level=warn"],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(cls.dir, "prometheus.log"), "w")))
        wait_for(lambda: urllib.request.urlopen(cls.prom + "/-/ready").status == 200,
                 30, "prometheus")

        # Load: the simulator (villagers and mages over one stream) and a
        # trickle of bad requests so error panels have data.
        cls.procs.append(subprocess.Popen(
            [SIM, "--target=" + cls.target, "--world=all", "--agents=20",
             "--hz=10", "--duration=60s", "--report_every=100s"],
            stdout=subprocess.DEVNULL))
        # Goblins sharing attack tokens, for the coordination panels.
        cls.procs.append(subprocess.Popen(
            [SIM, "--target=" + cls.target, "--world=goblins", "--agents=24",
             "--hz=10", "--duration=60s", "--report_every=100s"],
            stdout=subprocess.DEVNULL))
        cls.stop = threading.Event()
        cls.bad = threading.Thread(target=cls.bad_requests, daemon=True)
        cls.bad.start()
        # Enough scrapes for rates over RATE to exist.
        wait_for(lambda: cls.query_value(
            'sum(rate(utilityd_decisions_total[%s]))' % RATE) > 0, 40, "decision rates")
        wait_for(lambda: cls.query_value(
            'sum(rate(grpc_server_handled_total{grpc_code!="OK"}[%s]))' % RATE) > 0,
            20, "error rates")
        time.sleep(3)

    @classmethod
    def bad_requests(cls):
        channel = grpc.insecure_channel(cls.target)
        stub = rpc.DecisionServiceStub(channel)
        while not cls.stop.is_set():
            try:
                stub.GetBehaviourSet(pb.GetBehaviourSetRequest(name="no_such_set"))
            except grpc.RpcError:
                pass
            stub.Decide(pb.DecideRequest(agents=[
                pb.AgentSnapshot(agent_id="bad", behaviour_set="eat_hide_wander",
                                 factors=[1.0])]))
            time.sleep(0.3)
        channel.close()

    @classmethod
    def tearDownClass(cls):
        cls.stop.set()
        for p in reversed(cls.procs):
            p.terminate()
            p.wait(timeout=30)
        shutil.rmtree(cls.dir)

    @classmethod
    def query(cls, expr):
        url = cls.prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        try:
            return json.load(urllib.request.urlopen(url))
        except urllib.error.HTTPError as e:
            return json.load(e)

    @classmethod
    def query_value(cls, expr):
        result = cls.query(expr)["data"]["result"]
        return float(result[0]["value"][1]) if result else 0.0

    def test_every_dashboard_query_returns_data(self):
        queries = dashboard_queries()
        self.assertGreaterEqual(len(queries), 16)
        empty = []
        for title, expr in queries:
            answer = self.query(expr)
            self.assertEqual(answer["status"], "success", (title, expr, answer))
            if not answer["data"]["result"]:
                empty.append((title, expr))
        self.assertEqual(empty, [], "panels without data")

    def test_every_name_deploy_and_the_docs_use_is_exposed(self):
        """The metrics contract: each name the dashboard, the alert rules
        and docs/OBSERVABILITY.md use is in a live scrape, with the type its
        use needs and the labels its selectors match on."""
        families = exposition(urllib.request.urlopen(self.metrics_url).read().decode())
        deployed = deployed_names()
        self.assertGreaterEqual(len(deployed), 15)
        missing = []
        for name, labels in sorted(deployed.items()):
            base = next((name[:-len(s)] for s in SUFFIXES
                         if name.endswith(s) and name[:-len(s)] in families), name)
            if base not in families:
                missing.append(name)
                continue
            kind, exposed = families[base]
            if base != name:
                self.assertEqual(kind, "histogram", name)
            elif name.endswith("_total"):
                self.assertEqual(kind, "counter", name)
            self.assertLessEqual(labels - {"le", "job", "instance"}, exposed,
                                 (name, labels, exposed))
        for name in sorted(documented_names()):
            if name not in families:
                missing.append(name)
        self.assertEqual(missing, [], "names deploy/ or the docs use, not exposed")

    def test_every_alert_rule_parses_and_evaluates(self):
        for alert, expr in rule_queries():
            answer = self.query(expr)
            self.assertEqual(answer["status"], "success", (alert, answer))
        rules = json.load(urllib.request.urlopen(self.prom + "/api/v1/rules"))
        loaded = [r for g in rules["data"]["groups"] for r in g["rules"]]
        self.assertEqual(len(loaded), len(rule_queries()))
        wait_for(lambda: all(r.get("health") == "ok" for r in json.load(
            urllib.request.urlopen(self.prom + "/api/v1/rules"))["data"]["groups"][0]["rules"]),
            10, "rules evaluated without error")

    def test_the_scrape_target_is_up(self):
        self.assertEqual(self.query_value('up{job="utilityd"}'), 1.0)

    def test_promtool_accepts_the_shipped_config_and_rules(self):
        for args in (["check", "config", "deploy/prometheus/prometheus.yml"],
                     ["check", "rules", RULES],
                     # The alerts fire on the series that should fire them.
                     ["test", "rules", "tests/deploy/rules_test.yml"]):
            done = subprocess.run(["promtool"] + args, capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)


class DeployFiles(unittest.TestCase):
    def test_manifests_and_compose_parse(self):
        kinds = []
        for path in glob.glob("deploy/k8s/*.yaml"):
            for doc in yaml.safe_load_all(read_text(path)):
                if doc and "kind" in doc:
                    kinds.append(doc["kind"])
        for kind in ["Deployment", "Service", "HorizontalPodAutoscaler",
                     "PodDisruptionBudget", "ConfigMap", "ServiceMonitor"]:
            self.assertIn(kind, kinds)
        compose = yaml.safe_load(read_text("deploy/compose/docker-compose.yml"))
        self.assertEqual(set(compose["services"]),
                         {"utilityd", "simulator", "prometheus", "grafana"})
        for path in glob.glob("deploy/grafana/provisioning/*/*.yml"):
            self.assertIsNotNone(yaml.safe_load(read_text(path)))

    def test_deployment_probes_run_as_non_root_read_only(self):
        deployment = yaml.safe_load(read_text("deploy/k8s/deployment.yaml"))
        spec = deployment["spec"]["template"]["spec"]
        container = spec["containers"][0]
        self.assertTrue(spec["securityContext"]["runAsNonRoot"])
        self.assertTrue(container["securityContext"]["readOnlyRootFilesystem"])
        # Readiness off the decision path (docs/RELIABILITY.md, "Overload").
        self.assertEqual(container["readinessProbe"]["httpGet"]["path"],
                         "/readyz")
        self.assertIn("--max_connection_age=5m", container["args"])
        mount = container["volumeMounts"][0]
        self.assertNotIn("subPath", mount)  # subPath mounts never update
        # The inspector's token comes from a Secret, mounted as a file.
        self.assertIn("--admin_token_file=/etc/utilityd/admin/token",
                      container["args"])
        secrets = [v["secret"]["secretName"] for v in spec["volumes"]
                   if "secret" in v]
        self.assertEqual(secrets, ["utilityd-admin-token"])
        compose = yaml.safe_load(read_text("deploy/compose/docker-compose.yml"))
        self.assertIn("--admin_token_file=/run/secrets/admin_token",
                      compose["services"]["utilityd"]["command"])
        self.assertEqual(compose["services"]["utilityd"]["secrets"],
                         ["admin_token"])

    def test_configmap_matches_the_bundled_sets(self):
        configmap = yaml.safe_load(read_text("deploy/k8s/configmap.yaml"))
        for path in glob.glob("examples/behaviour_sets/*.yaml"):
            self.assertEqual(configmap["data"][os.path.basename(path)],
                             read_text(path), path)

    def test_dockerfile_uses_the_install_script_and_a_health_check(self):
        dockerfile = read_text("Dockerfile")
        self.assertIn("RUN scripts/install-deps.sh", dockerfile)
        self.assertIn('HEALTHCHECK', dockerfile)
        self.assertIn('"utilityctl", "health"', dockerfile)
        self.assertIn("USER 10001", dockerfile)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
