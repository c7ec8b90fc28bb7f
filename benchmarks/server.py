"""HTTP throughput and latency, with and without --fast: 1-64 clients, both routes, HTTP's cost.

Starts ``laya serve`` in a subprocess on 127.0.0.1 (so server and clients do not share a GIL)
serving ``mini`` — or, until ``laya/models/mini`` exists, the tiny ModernBERT fixture, with a
printed note — and measures in one run:

* a direct ``Router.predict`` loop in this process (the baseline) and one client posting
  ``/v1/systemone`` back to back (keep-alive) to a server without and one with ``--fast``,
  alternating in rounds,
* 16 and 64 clients posting at once to ``/v1/systemone`` (one state) and 1, 16 and 64 to
  ``/v1/systemone/batch`` (eight states a request), to each server in turn,

printing requests/s (and states/s for the batch route) and p50/p99 latency for each, the HTTP
overhead as the ratio of the one-client p50 to the direct p50, and what ``--fast`` runs (from its
/health) and gains. The servers run with ``laya serve``'s own limits (h11 with a header cap and
timeout, admission after the body).

    .venv/bin/python benchmarks/server.py [--requests 200] [--rounds 5] [--workers 2] [--threads N] [--device cpu]
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

import httpx

from laya.router import Router
from laya.server import MINI_DIR

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


def checkpoint() -> Path:
    """``mini`` when installed, else the ModernBERT fixture (said so on stdout)."""
    if MINI_DIR.is_dir():
        return MINI_DIR
    print(f"note: {MINI_DIR} is absent; benchmarking the tiny ModernBERT fixture instead")
    return FIXTURE / "checkpoint"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(path: Path, port: int, args: argparse.Namespace, fast: bool) -> subprocess.Popen:
    """``laya serve`` in a subprocess, pinned to one checkpoint; returns once /health answers."""
    argv = [
        "--port", str(port), "--models", f"bench={path}", "--default-model", "bench",
        "--device", args.device, "--inference-workers", str(args.workers),
        "--log-level", "warning", *(["--threads", str(args.threads)] if args.threads else []),
        *(["--fast"] if fast else []),
    ]  # fmt: skip
    code = f"import sys; from laya.server import serve_main; sys.exit(serve_main({argv!r}))"
    server = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and server.poll() is None:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
            return server
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


BATCH_STATES = 8


def http_run(base: str, clients: int, n: int, batch: bool = False) -> tuple[list[float], float]:
    """``n`` requests spread over ``clients`` threads, one keep-alive connection each."""
    latencies: list[list[float]] = [[] for _ in range(clients)]

    def client(k: int) -> None:
        with httpx.Client(base_url=base, timeout=120) as http:

            def post(i: int) -> None:
                if batch:
                    states = [STATE.format(i=i * BATCH_STATES + j) for j in range(BATCH_STATES)]
                    body = {"states": states, "questions": QUESTIONS}
                    http.post("/v1/systemone/batch", json=body).raise_for_status()
                else:
                    body = {"state": STATE.format(i=i), "questions": QUESTIONS}
                    http.post("/v1/systemone", json=body).raise_for_status()

            latencies[k] = timed(post, range(k, n, clients))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [ms for per in latencies for ms in per], time.perf_counter() - started


def report(label: str, latencies: list[float], seconds: float, states: int = 1) -> float:
    """Print one row; returns the p50."""
    cuts = statistics.quantiles(latencies, n=100)
    p50, p99 = statistics.median(latencies), cuts[98]
    rate = len(latencies) / seconds
    per_state = f"  ({rate * states:6.1f} states/s)" if states > 1 else ""
    print(f"{label:<32} {rate:7.1f} req/s{per_state}   p50 {p50:8.1f} ms   p99 {p99:8.1f} ms")
    return p50


def concurrent(base: str, n: int, suffix: str) -> None:
    """Rows for 16 and 64 clients on the single route and 1, 16 and 64 on the batch route."""
    for clients in (16, 64):
        report(f"single, {clients} clients{suffix}", *http_run(base, clients, n))
    for clients in (1, 16, 64):
        rows = max(clients, n // BATCH_STATES)
        latencies, seconds = http_run(base, clients, rows, batch=True)
        label = f"batch of {BATCH_STATES}, {clients} clients{suffix}"
        report(label, latencies, seconds, BATCH_STATES)


def main() -> None:
    """Measure the direct call, then HTTP with 1, 16 and 64 clients without and with --fast."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help=f"at least {2 * BATCH_STATES}")
    parser.add_argument("--rounds", type=int, default=5, help="direct/HTTP alternations")
    parser.add_argument("--workers", type=int, default=2, help="server inference workers")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="torch threads, here and in the server")
    args = parser.parse_args()
    if args.requests < 2 * BATCH_STATES:  # every row needs two latencies for its p99
        parser.error(f"--requests must be at least {2 * BATCH_STATES}, got {args.requests}")
    path, n = checkpoint(), args.requests
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    router = Router(models={"bench": str(path)}, default="bench", device=args.device)
    predict = lambda i: router.predict(STATE.format(i=i), QUESTIONS, model="bench")  # noqa: E731
    ports = {fast: free_port() for fast in (False, True)}
    servers = {fast: start_server(path, port, args, fast) for fast, port in ports.items()}
    bases = {fast: f"http://127.0.0.1:{port}" for fast, port in ports.items()}
    try:
        precision = httpx.get(bases[True] + "/health").json()["precision"]["bench"]
        timed(predict, range(10))
        for base in bases.values():
            http_run(base, 1, 10)
        direct, one = [], {False: [], True: []}
        for r in range(args.rounds):  # alternate, so drift in machine load hits all alike
            share = range(r, n, args.rounds)
            direct += timed(predict, share)
            for fast, base in bases.items():
                one[fast] += http_run(base, 1, len(share))[0]
        direct_p50 = report("direct Router.predict", direct, sum(direct) / 1000)
        one_p50 = report("single, 1 client", one[False], sum(one[False]) / 1000)
        fast_p50 = report("single, 1 client, --fast", one[True], sum(one[True]) / 1000)
        for fast, base in bases.items():
            concurrent(base, n, ", --fast" if fast else "")
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(30)
    print(f"HTTP overhead (p50, 1 client / direct): {one_p50 / direct_p50:.2f} x")
    print(f"--fast runs {precision}; p50 speed-up at 1 client: {one_p50 / fast_p50:.2f} x")
    print(f"checkpoint: {path}; {n} requests per row; inference workers: {args.workers}")


if __name__ == "__main__":
    main()
