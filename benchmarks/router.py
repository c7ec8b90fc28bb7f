"""Router throughput: one ``predict_batch`` over 60 mixed requests against 60 ``predict`` calls.

Runs on the tiny fixture checkpoints (CPU unless ``--device``), registered under the three built-in
names, so it measures the Router's own work — routing, grouping, shared forward passes — rather
than a big encoder. Prints both timings, their ratio, and the routing cost per request.

    .venv/bin/python benchmarks/router.py [--repeat 3] [--device cpu]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from laya.router import Router

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
MODELS = {
    "english": str(FIXTURES / "tiny-modernbert" / "checkpoint"),
    "multilingual": str(FIXTURES / "tiny-bert" / "checkpoint"),
    "typed-decisions": str(FIXTURES / "tiny-modernbert" / "checkpoint"),
}
STATES = [
    "Hello, please refund my order, it arrived broken and nobody answers my emails.",
    "Bonjour, je voudrais un remboursement pour ma commande, elle est arrivée cassée.",
    "Привет, мой заказ пришёл сломанным, верните, пожалуйста, деньги.",
    "Hola, necesito un reembolso de mi pedido porque llegó roto y no funciona.",
    "Bitte erstatten Sie mir den Betrag zurück, ich warte seit zwei Wochen darauf.",
    "注文した商品が壊れて届きました。返金をお願いします。",
]
QUESTIONS = [
    {
        "department": {
            "type": "choice",
            "instructions": "Which department should handle this?",
            "criteria": {"billing": "invoices, refunds", "technical": "bugs", "other": "the rest"},
        },
        "churn_risk": {"type": "noul", "instructions": "Does the user threaten to leave?"},
    },
    {
        "urgency": {
            "type": "score",
            "instructions": "How urgent is this?",
            "criteria": ["not urgent", "soon", "blocking"],
        }
    },
]


def requests(n: int = 60) -> list[dict]:
    """``n`` requests over six languages and two question sets."""
    return [
        {"state": f"{STATES[i % len(STATES)]} (ticket {i})", "questions": QUESTIONS[i % 5 == 4]}
        for i in range(n)
    ]


def best_of(repeat: int, fn) -> float:
    """The fastest of ``repeat`` runs, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    """Time both ways of answering the same requests and check they agree."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    router = Router(models=MODELS, device=args.device, max_loaded=3).preload(list(MODELS))
    batch = requests()
    one_by_one = lambda: [router.predict(r["state"], r["questions"]) for r in batch]  # noqa: E731
    assert router.predict_batch(batch) == one_by_one(), "predict_batch disagrees with predict"
    t_batch = best_of(args.repeat, lambda: router.predict_batch(batch))
    t_single = best_of(args.repeat, one_by_one)
    t_route = best_of(
        args.repeat, lambda: [router.route(r["state"], r["questions"]) for r in batch]
    )
    print(f"requests:               {len(batch)}")
    print(f"predict_batch:          {t_batch * 1e3:8.1f} ms")
    print(f"60 x predict:           {t_single * 1e3:8.1f} ms")
    print(f"ratio (predict/batch):  {t_single / t_batch:8.2f} x")
    print(f"routing per request:    {t_route / len(batch) * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
