"""HTTP throughput and latency at 1, 16 and 64 clients, the request batcher off and on.

Starts ``laya serve`` twice in subprocesses on 127.0.0.1 (so server and clients do not share a
GIL), serving ``mini`` — or, until ``laya/models/mini`` exists, the tiny ModernBERT fixture, with
a printed note — once as the old per-request server (``--batch-window-ms 0``: each request its
own forward passes, on a pool of ``--off-workers`` threads, 2 as before the batcher) and once with
the batcher on (``--window-ms``, default 2; ``--workers`` inference threads, default the server's
own), and measures in one run, alternating between them in rounds so drift in machine load hits
both alike:

* a direct ``Router.predict`` loop in this process (the baseline for one client),
* 1, 16 and 64 clients posting ``/v1/systemone`` (one state, three questions; keep-alive) to
  each server,

printing requests/s and p50/p99 latency for each row, the HTTP overhead as the ratio of the
one-client p50 to the direct p50, and the batcher's gain in requests/s at each client count. The
servers run with ``laya serve``'s own limits (h11 with a header cap and timeout, admission after
the body).

``--mixed`` measures fairness instead, on one server (the batcher on): small requests (the same
one state, three questions) from ``--small-clients`` clients, alone and then beside hostile
traffic — a client looping tournaments over 1,000 options, one looping 64-state batches, and one
that sends a tournament and hangs up — alternating in rounds; it prints the small requests'
p50/p99 beside their lone figures, what the background got done, and the server's refusals.

With ``--precisions A B`` the two servers both run the batcher and differ in ``--precision``
instead (e.g. ``fp32 int8``), and the gain printed is B's requests/s over A's at each client
count. ``--checkpoint base`` serves the base-width checkpoint of ``benchmarks/agent.py`` (built
and cached once) instead of ``mini``; any other value is a checkpoint directory.

    python benchmarks/server.py [--requests 192] [--rounds 4] [--window-ms 2] [--workers N]
                                [--off-workers 2] [--threads N] [--device cpu] [--fast]
                                [--precisions A B] [--checkpoint mini|base|PATH]
    python benchmarks/server.py --mixed [--requests 48] [--rounds 2] [--small-clients 1]
"""

import argparse
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import httpx

from laya.router import Router
from laya.server import MINI_DIR

CLIENTS = (1, 16, 64)

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "tiny-modernbert"
QUESTIONS = {
    "department": {
        "type": "choice",
        "instructions": "Which department should handle this?",
        "criteria": {"billing": "invoices, refunds", "technical": "bugs", "other": "the rest"},
    },
    "urgency": {
        "type": "score",
        "instructions": "How urgent is this?",
        "criteria": ["not urgent", "soon", "blocking"],
    },
    "churn_risk": {"type": "noul", "instructions": "Does the user threaten to leave?"},
}
STATE = "Hello, please refund my order {i}; it arrived broken and nobody answers my emails."


def checkpoint(name: str = "mini") -> Path:
    """``mini`` when installed, else the ModernBERT fixture (said so on stdout); ``base``: the
    checkpoint of benchmarks/agent.py; anything else: a directory."""
    if name == "base":
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "agent_bench", Path(__file__).with_name("agent.py")
        )
        assert spec is not None and spec.loader is not None
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
        return Path(bench.checkpoint())
    if name != "mini":
        return Path(name)
    if MINI_DIR.is_dir():
        return MINI_DIR
    print(f"note: {MINI_DIR} is absent; benchmarking the tiny ModernBERT fixture instead")
    return FIXTURE / "checkpoint"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(
    path: Path,
    args: argparse.Namespace,
    window_ms: float,
    workers: int | None,
    precision: str | None = None,
) -> tuple[Any, str]:
    """``laya serve`` in a subprocess, pinned to one checkpoint, once /health answers; and its URL."""
    port = free_port()
    argv = [
        "--port", str(port), "--models", f"bench={path}", "--model", "bench",
        "--device", args.device, "--batch-window-ms", str(window_ms), "--log-level", "warning",
        *(["--inference-workers", str(workers)] if workers else []),
        *(["--threads", str(args.threads)] if args.threads else []),
        *(["--fast"] if args.fast else []),
        *(["--precision", precision] if precision else []),
    ]  # fmt: skip
    code = f"import sys; from laya.server import serve_main; sys.exit(serve_main({argv!r}))"
    server = subprocess.Popen([sys.executable, "-c", code])
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and server.poll() is None:
        try:
            httpx.get(base + "/health", timeout=1)
            return server, base
        except httpx.HTTPError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def timed(fn: Callable[[int], object], indices: range) -> list[float]:
    """Latency of ``fn(i)`` for each index, in milliseconds."""
    latencies = []
    for i in indices:
        started = time.perf_counter()
        fn(i)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


class Run(NamedTuple):
    """One row's requests: client latencies and the server's own time for each (admission to
    answer, its ``X-Inference-Time-Ms``), in milliseconds; wall seconds; groups the batcher
    answered them in (0 when it is off)."""

    latencies: list[float]
    server_ms: list[float]
    seconds: float
    groups: int


def combined(runs: list[Run]) -> Run:
    """The rounds of one row as one run."""
    return Run(
        [ms for run in runs for ms in run.latencies],
        [ms for run in runs for ms in run.server_ms],
        sum(run.seconds for run in runs),
        sum(run.groups for run in runs),
    )


def groups_answered(base: str) -> int:
    return httpx.get(base + "/health").json().get("batches", {}).get("groups", 0)


def http_run(base: str, clients: int, indices: range) -> Run:
    """The requests of ``indices`` spread over ``clients`` threads, one keep-alive connection each."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    server_ms: list[float] = []

    def client(k: int) -> None:
        with httpx.Client(base_url=base, timeout=120) as http:

            def post(i: int) -> None:
                body = {"state": STATE.format(i=i), "questions": QUESTIONS}
                reply = http.post("/v1/systemone", json=body).raise_for_status()
                server_ms.append(float(reply.headers["x-inference-time-ms"]))

            latencies[k] = timed(post, indices[k::clients])

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    groups = groups_answered(base)
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    flat = [ms for per in latencies for ms in per]
    return Run(flat, server_ms, seconds, groups_answered(base) - groups)


def report(
    label: str, latencies: list[float], seconds: float, groups: int = 0
) -> tuple[float, float]:
    """Print one row; returns requests/s and the p50."""
    p50, p99 = statistics.median(latencies), statistics.quantiles(latencies, n=100)[98]
    rate = len(latencies) / seconds
    size = f"   {len(latencies) / groups:5.1f} per group" if groups else ""
    print(f"{label:<30} {rate:7.1f} req/s   p50 {p50:8.1f} ms   p99 {p99:8.1f} ms{size}")
    return rate, p50


TOURNAMENT = {
    "state": STATE.format(i=0) + " The log says: kernel: Out of memory: Killed process 23811.",
    "questions": {
        "error": {
            "type": "choice",
            "instructions": "Which error class is this?",
            "criteria": {f"class_{i}": f"error family {i} of the system" for i in range(1000)},
        }
    },
    "tournament": True,
}
BATCH = {"states": [STATE.format(i=i) for i in range(64)], "questions": QUESTIONS}


class Background:
    """Hostile traffic on threads until stopped: tournaments, batches, and a client that sends a
    tournament and hangs up; what each got done."""

    def __init__(self, base: str) -> None:
        self.base, self.stop = base, threading.Event()
        self.done = {"tournaments": 0, "batches": 0, "hung up": 0, "refused": 0}
        self.threads = [
            threading.Thread(target=self._loop, args=("/v1/systemone", TOURNAMENT, "tournaments")),
            threading.Thread(target=self._loop, args=("/v1/systemone/batch", BATCH, "batches")),
            threading.Thread(target=self._hang_ups),
        ]

    def __enter__(self) -> "Background":
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()

    def _loop(self, path: str, body: dict, name: str) -> None:
        with httpx.Client(base_url=self.base, timeout=300) as http:
            while not self.stop.is_set():
                reply = http.post(path, json=body)
                self.done[name if reply.status_code == 200 else "refused"] += 1

    def _hang_ups(self) -> None:
        port = int(self.base.rsplit(":", 1)[1])
        data = httpx.Request("POST", self.base + "/v1/systemone", json=TOURNAMENT).read()
        head = (
            "POST /v1/systemone HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n"
        ).encode()
        while not self.stop.wait(2.0):  # a benchmark's pacing: one hang-up every 2 s
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(head + data)
                self.stop.wait(0.2)
            self.done["hung up"] += 1


def refusals(base: str) -> dict[str, float]:
    """The server's refusals by reason (its /metrics)."""
    found = {}
    for line in httpx.get(base + "/metrics").text.splitlines():
        if line.startswith("laya_refusals_total{"):
            name, value = line.split()
            found[name.split('"')[1]] = float(value)
    return found


def mixed(args: argparse.Namespace, path: Path) -> None:
    """Small requests alone, then beside tournaments, batches and hung-up clients, alternating."""
    server, base = start_server(path, args, args.window_ms, args.workers)
    n, clients = args.requests, args.small_clients
    lone: list[Run] = []
    beside: list[Run] = []
    background = dict.fromkeys(("tournaments", "batches", "hung up", "refused"), 0)
    try:
        http_run(base, 1, range(10))
        for r in range(args.rounds):
            share = range(r, n, args.rounds)
            lone.append(http_run(base, clients, share))
            with Background(base) as hostile:
                beside.append(http_run(base, clients, share))
            for key, count in hostile.done.items():
                background[key] += count
        refused = refusals(base)
    finally:
        server.terminate()
        server.wait(30)
    alone, mixed_run = combined(lone), combined(beside)
    _, lone_p50 = report(
        f"small, alone ({clients} client{'s' * (clients > 1)})", alone.latencies, alone.seconds
    )
    _, mixed_p50 = report("small, beside the hostile mix", mixed_run.latencies, mixed_run.seconds)
    lone_p99 = statistics.quantiles(alone.latencies, n=100)[98]
    mixed_p99 = statistics.quantiles(mixed_run.latencies, n=100)[98]
    print(
        f"beside / alone: p50 {mixed_p50 / lone_p50:.2f} x, p99 {mixed_p99 / lone_p99:.2f} x; "
        f"the background answered {background['tournaments']} tournaments of 1,000 options and "
        f"{background['batches']} batches of 64 states, hung up {background['hung up']} times, "
        f"was refused {background['refused']} times; the server's refusals: {refused or 'none'}"
    )
    print(f"checkpoint: {path}; {n} small requests each way in {args.rounds} rounds")


def main() -> None:
    """The direct call, then 1, 16 and 64 clients with the batcher off and on, alternating; or,
    with ``--mixed``, small requests alone and beside hostile traffic."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, help="per row, at least 16 (default 192; mixed 48)")
    parser.add_argument("--rounds", type=int, help="alternations (default 4; mixed 2)")
    parser.add_argument("--mixed", action="store_true", help="small requests beside hostile ones")
    parser.add_argument("--small-clients", type=int, default=1, help="with --mixed")
    parser.add_argument("--window-ms", type=float, default=2.0, help="the batcher's window")
    parser.add_argument("--workers", type=int, help="inference workers with the batcher on")
    parser.add_argument(
        "--off-workers", type=int, default=2, help="inference workers with the batcher off"
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="torch threads, here and in the servers")
    parser.add_argument("--fast", action="store_true", help="both servers with --fast")
    parser.add_argument(
        "--precisions",
        nargs=2,
        metavar=("A", "B"),
        help="two batcher-on servers with --precision A and B instead of batcher off and on",
    )
    parser.add_argument("--checkpoint", default="mini", help="mini, base (agent.py's) or a path")
    args = parser.parse_args()
    args.requests = args.requests or (48 if args.mixed else 192)
    args.rounds = args.rounds or (2 if args.mixed else 4)
    if args.requests < 16:  # every row needs latencies enough for its p99
        parser.error(f"--requests must be at least 16, got {args.requests}")
    path, n = checkpoint(args.checkpoint), args.requests
    if args.mixed:
        mixed(args, path)
        return
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    direct = {"precision": args.precisions[0]} if args.precisions else {}  # as the first server
    router = Router(
        models={"bench": str(path)}, default="bench", device=args.device, agent_kwargs=direct
    )

    def predict(i: int) -> object:
        return router.predict(STATE.format(i=i), QUESTIONS, model="bench")

    if args.precisions:
        a, b = args.precisions
        servers = ((a, args.window_ms, args.workers, a), (b, args.window_ms, args.workers, b))
    else:
        servers = (("off", 0.0, args.off_workers, None), ("on", args.window_ms, args.workers, None))
    started = {k: start_server(path, args, w, n, p) for k, w, n, p in servers}
    first, second = (k for k, *_ in servers)
    bases = {k: base for k, (_, base) in started.items()}
    try:
        timed(predict, range(10))
        for base in bases.values():
            http_run(base, 1, range(10))
        direct: list[float] = []
        rounds: dict[tuple[str, int], list[Run]] = {(k, c): [] for k in bases for c in CLIENTS}
        for r in range(args.rounds):
            share = range(r, n, args.rounds)
            direct += timed(predict, share)
            for clients in CLIENTS:
                for key, base in bases.items():
                    rounds[key, clients].append(http_run(base, clients, share))
        _, direct_p50 = report("direct Router.predict", direct, sum(direct) / 1000)
        rows = {row: combined(runs) for row, runs in rounds.items()}
        rates, p50s = {}, {}
        for clients in CLIENTS:
            for key in bases:
                what = f"precision {key}" if args.precisions else f"batcher {key}"
                label = f"{clients} client{'s' if clients > 1 else ''}, {what}"
                run = rows[key, clients]
                rates[key, clients], p50s[key, clients] = report(
                    label, run.latencies, run.seconds, run.groups
                )
    finally:
        for server, _ in started.values():
            server.terminate()
            server.wait(30)
    for clients in CLIENTS:
        gain = rates[second, clients] / rates[first, clients]
        print(f"{second} / {first} at {clients} clients: {gain:.2f} x req/s")
    inside = statistics.median(rows[second, 1].server_ms)
    print(
        f"1 client, {second}, p50 {p50s[second, 1]:.1f} ms = direct {direct_p50:.1f} ms "
        f"{p50s[second, 1] - direct_p50:+.1f} ms ({p50s[second, 1] / direct_p50:.2f} x): the "
        f"server holds a request {inside:.1f} ms from admission to answer (parse, queue, thread "
        f"hops, the call), the rest is HTTP, routing and rendering, both ends"
    )
    workers = f"off {args.off_workers}, on {args.workers or 'the default'}"
    print(
        f"checkpoint: {path}; {n} requests per row; window {args.window_ms:g} ms; "
        f"inference workers: {args.workers or 'the default' if args.precisions else workers}"
    )


if __name__ == "__main__":
    main()
