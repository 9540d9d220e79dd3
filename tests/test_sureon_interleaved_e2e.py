"""Sureon's interleaved prompt (Fig. 17) through the REAL lmms-eval CLI, offline: lmms-eval's own chat model
``openai`` (which builds its request from the task's ``doc_to_messages``) and the ``medhorizon_openai`` bridge
(from ``PlannedFrames.interleaved``), both against a loopback server that records each request body."""

import json
import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV, lmms_eval_command

pytestmark = pytest.mark.e2e

TASK = "sureon_synthetic_visual_noblur"
TIMEOUT_S = 900
STAMP = re.compile(r"^Frame (\d+) at \d+\.\d s:$")


class _ChatServer(BaseHTTPRequestHandler):
    bodies: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        reply = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": "A"}}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def requests_sent(tmp_path_factory):
    root = tmp_path_factory.mktemp("sureon_interleaved")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    runs = {"chat": ("openai", f"model_version=chat-model,base_url={base_url},api_key=test,max_retries=1"),
            "bridge": ("medhorizon_openai", f"model=bridge-model,base_url={base_url},api_key=test,image_format=png,"
                                            "max_retries=1")}
    procs = {}
    for name, (model, args) in runs.items():
        out = root / name
        out.mkdir()
        cmd = lmms_eval_command(model, [TASK], out, model_args=args, limit=1) + ["--gen_kwargs", "max_new_tokens=4"]
        log = open(out / "lmms_eval.log", "w")
        procs[name] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                        env={**os.environ, **OFFLINE_ENV, "OMP_NUM_THREADS": "1"}), out)
    try:
        for proc, _ in procs.values():
            proc.wait(timeout=TIMEOUT_S)
    finally:
        server.shutdown()
        for proc, _ in procs.values():
            if proc.poll() is None:
                proc.kill()
    by_model = {}
    for body in _ChatServer.bodies:
        by_model.setdefault(body["model"], []).append(body)
    logs = {name: (out / "lmms_eval.log").read_text()[-3000:] for name, (_, out) in procs.items()}
    return by_model, logs


@pytest.mark.parametrize("model", ["chat-model", "bridge-model"])
def test_each_frame_follows_its_timestamp_in_the_request(requests_sent, model):
    by_model, logs = requests_sent
    assert by_model.get(model), f"no request from {model}; logs: {logs}"
    (body,) = by_model[model]
    parts = [p for m in body["messages"] if m["role"] == "user" for p in m["content"]]
    kinds = [p["type"] for p in parts]
    n = kinds.count("image_url")
    assert 4 <= n <= 8
    assert kinds == ["text", *(["text", "image_url"] * n), "text"], kinds
    assert parts[0]["text"].startswith("This is a clip from ")
    assert parts[-1]["text"].startswith("\nQuestion: ")
    stamps = [parts[1 + 2 * k]["text"] for k in range(n)]
    assert [int(STAMP.match(s).group(1)) for s in stamps] == list(range(1, n + 1)), stamps


def test_lmms_eval_and_the_bridge_send_the_same_texts(requests_sent):
    by_model, _ = requests_sent
    texts = {m: [p["text"] for p in by_model[m][0]["messages"][-1]["content"] if p["type"] == "text"]
             for m in ("chat-model", "bridge-model")}
    assert texts["chat-model"] == texts["bridge-model"]

