"""``protocol ROW --serve vllm``: the ``vllm serve`` command(s) for a row's open checkpoint, and the run against it.

The row's model is served by vLLM (tensor parallel within a replica, data
parallel across replicas, on one or several nodes: the head node serves the
API, the others join with ``--headless``); ``medhorizon_openai`` sends each
item's planned frames as one video (``frames_as=video``, see
:mod:`medhorizon_tasks.adapters.lmms_eval.bridges.vllm_video`), ``num_concurrent``
at a time so that every replica is kept busy. The flags are vLLM's
(``vllm serve --help``; docs.vllm.ai "Data Parallel Deployment"). Pure text:
nothing here starts a process.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from ..benchmarks.medhorizon.model_settings import ModelSetting
from ..core.errors import MedHorizonError

__all__ = ["ServePlan", "VIDEO_ADAPTERS", "serve_commands"]

# adapters whose model vLLM takes as a video with its times, and the client-side pixel budget that matches the
# bridge's (qwen-vl-utils' rule with the model's patch x merge factor; none: the server's processor sizes frames)
VIDEO_ADAPTERS = {"medhorizon_qwen3_vl": "pixel_factor=32", "medhorizon_qwen2_5_vl": "pixel_factor=28",
                  "medhorizon_gemma4": "", "medhorizon_molmo2": ""}
_TRANSLATED = ("pretrained", "device_map")  # model args with a vLLM meaning (the model; vLLM places it itself)
RPC_PORT = 13345


@dataclass(frozen=True)
class ServePlan:
    tensor_parallel: int = 1
    data_parallel: int = 1
    nodes: int = 1
    head: str = "HEAD_NODE_IP"
    port: int = 8000
    num_concurrent: int | None = None  # default: 8 requests in flight per replica

    def __post_init__(self):
        for name in ("tensor_parallel", "data_parallel", "nodes", "port"):
            if int(getattr(self, name)) < 1:
                raise MedHorizonError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        if self.data_parallel % self.nodes:
            raise MedHorizonError(f"--data-parallel {self.data_parallel} must be a multiple of --nodes {self.nodes} "
                                  "(each node runs the same number of replicas)")


def _model_args(s: ModelSetting) -> dict:
    args = dict(part.split("=", 1) for part in s.model_args.split(",") if part)
    other = sorted(set(args) - set(_TRANSLATED))
    if other:
        raise MedHorizonError(f"{s.row}: model arg(s) {', '.join(other)} have no vLLM serving equivalent here; run "
                              f"`medhorizon-tasks protocol {s.row}` (transformers) instead")
    return args


def serve_commands(s: ModelSetting, plan: ServePlan, output_path: str = "results/") -> list[tuple[str, str]]:
    """``[(where, command), ...]``: one ``vllm serve`` per node, then the run; MedHorizonError for a row that
    vLLM cannot serve with its frames as one timed video."""
    if not s.runnable or s.adapter not in VIDEO_ADAPTERS or s.encoder:
        served = ", ".join(sorted(VIDEO_ADAPTERS))
        raise MedHorizonError(f"{s.paper_row} ({s.row}) has no vLLM video path here: --serve vllm takes rows whose "
                              f"adapter is one of {served}" + ("" if s.runnable else f" ({s.note})"))
    model = _model_args(s)["pretrained"]
    local = plan.data_parallel // plan.nodes
    common = ["--tensor-parallel-size", str(plan.tensor_parallel), "--data-parallel-size", str(plan.data_parallel),
              "--limit-mm-per-prompt", json.dumps({"video": 1}),
              "--media-io-kwargs", json.dumps({"video": {"num_frames": -1}})]
    commands = []
    if plan.nodes == 1:
        commands.append(("server", shlex.join(["vllm", "serve", model, *common, "--port", str(plan.port)])))
    else:
        multi = ["--data-parallel-size-local", str(local), "--data-parallel-address", plan.head,
                 "--data-parallel-rpc-port", str(RPC_PORT)]
        commands.append((f"node 0 ({plan.head}, serves the API)",
                         shlex.join(["vllm", "serve", model, *common, *multi, "--port", str(plan.port)])))
        for node in range(1, plan.nodes):
            commands.append((f"node {node}", shlex.join(["vllm", "serve", model, "--headless", *common, *multi,
                                                         "--data-parallel-start-rank", str(node * local)])))
    concurrent = plan.num_concurrent or 8 * plan.data_parallel
    args = ",".join(a for a in (f"model={model}", f"base_url=http://{plan.head if plan.nodes > 1 else 'localhost'}"
                                f":{plan.port}/v1", "api_key=EMPTY", "frames_as=video",
                                f"num_concurrent={concurrent}", VIDEO_ADAPTERS[s.adapter]) if a)
    run = ["medhorizon-tasks", "run", "--model", "medhorizon_openai", "--model_args", args, "--tasks", s.task,
           *(["--gen_kwargs", f"max_new_tokens={s.max_new_tokens}"] if s.max_new_tokens else []),
           "--batch_size", "1", "--log_samples", "--output_path", output_path]
    commands.append(("client", shlex.join(run)))
    return commands
