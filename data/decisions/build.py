"""Build the laya-mini decision dataset: ``data/decisions/{train,dev,test}.jsonl``.

Usage::

    python data/decisions/build.py            # rewrite the three files next to this script
    python data/decisions/build.py --out DIR  # write them into DIR instead
    python data/decisions/build.py --stats    # also print counts and label balance

Each domain module (``dom_*.py``) holds hand-written *cores* (a message or trace with its true
labels) and *families* of questions (many phrasings, criteria variants and question ids). A state
is a core dressed in a wrapper (plain text, JSON object or conversation list); each state gets one
to three questions of different types whose gold answers follow from the core's labels. Cores are
split between train/dev/test, so every variant of one text stays in one split (``source`` = core).
Each core is dressed ``STATES_PER_CORE`` times on average, so a domain grows with its cores.

Standard library only; ``random.Random(SEED)`` makes re-runs byte-identical.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 6_2024
SPLITS = ("train", "dev", "test")
SPLIT_SHARES = (0.70, 0.15, 0.15)
STATES_PER_CORE = 3.5
QUESTION_COUNTS = (1, 2, 3)
QUESTION_COUNT_WEIGHTS = (0.25, 0.45, 0.30)
TYPES = ("choice", "score", "noul")
DOMAIN_MODULES = (
    "dom_support",
    "dom_billing",
    "dom_moderation",
    "dom_security",
    "dom_coding",
    "dom_email",
    "dom_reviews",
    "dom_hr",
    "dom_generic",
)
NOUL_CRITERIA = [
    None,
    None,
    None,
    {"true": "yes, the statement holds", "false": "no, the statement does not hold"},
    {"true": "yes", "false": "no"},
    {"true": "the text says so", "false": "the text does not say so"},
    {"true": "correct", "false": "incorrect"},
]


def load_domains():
    """Import every domain module (they live next to this script) and return their specs."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    return [importlib.import_module(name).DOMAIN for name in DOMAIN_MODULES]


def label_of(family, labels):
    """The gold answer of ``family`` for a state with ``labels``, or None if it does not apply."""
    if family["type"] == "noul":
        return family["test"](labels)
    return labels.get(family["key"])


def universe(family):
    """Every answer a family can have (used for balancing)."""
    if family["type"] == "choice":
        return list(family["options"])
    if family["type"] == "score":
        return list(range(len(family["styles"][0])))
    return [True, False]


def choice_criteria(rng, family, gold):
    """Pick 2..6 options (gold always in), as a dict with descriptions or a plain list."""
    options = family["options"]
    labels = list(options)
    count = min(len(labels), 6)
    if count > 2 and rng.random() < 0.4:
        count = rng.randint(2, count)
    chosen = [gold] + rng.sample([x for x in labels if x != gold], count - 1)
    if rng.random() < 0.5:
        chosen.sort(key=labels.index)
    else:
        rng.shuffle(chosen)
    described = all(options[x] for x in chosen)
    if described and rng.random() < 0.6:
        return {x: rng.choice(options[x]) for x in chosen}
    return chosen


def instructions(rng, family, labels):
    """One phrasing of the family's instructions; templates may quote a state-specific claim."""
    text = rng.choice(family["instructions"])
    return text.replace("{claim}", labels.get("claim_text", "")) if "{claim}" in text else text


def make_question(rng, family, gold, labels):
    """A public question definition for one family."""
    question = {"type": family["type"], "instructions": instructions(rng, family, labels)}
    if family["type"] == "choice":
        question["criteria"] = choice_criteria(rng, family, gold)
    elif family["type"] == "score":
        question["criteria"] = list(rng.choice(family["styles"]))
    else:
        criteria = rng.choice(family.get("criteria", NOUL_CRITERIA))
        if criteria is not None:
            question["criteria"] = dict(criteria)
    return question


class Balancer:
    """Keeps each family's gold answers roughly balanced by refusing over-used answers."""

    def __init__(self):
        self.counts = defaultdict(Counter)
        self.types = Counter()
        self.truth = defaultdict(Counter)

    def accepts(self, key, family, gold):
        """True while ``gold`` is not far ahead of the family's least-used answer."""
        counts = self.counts[key]
        least = min(counts[x] for x in universe(family))
        return counts[gold] <= 1.2 * least + 2

    def record(self, key, family, gold):
        self.counts[key][gold] += 1
        self.types[family["type"]] += 1
        if family["type"] == "noul":
            self.truth[key[0]][gold] += 1

    def prefer_rare(self, domain, qtype, options):
        """For noul questions keep only options answering the domain's less-used truth value."""
        if qtype != "noul":
            return options
        target = min((True, False), key=lambda b: self.truth[domain][b])
        return [o for o in options if o[2] == target] or options

    def type_order(self, rng):
        """Question types, least used first (random tie-break)."""
        return sorted(TYPES, key=lambda t: (self.types[t], rng.random()))


def pick_questions(rng, domain, labels, balancer):
    """One to three questions of distinct types for a state, with their gold answers."""
    wanted = rng.choices(QUESTION_COUNTS, QUESTION_COUNT_WEIGHTS)[0]
    picked = []
    for qtype in balancer.type_order(rng):
        if len(picked) == wanted:
            break
        options = []
        for index, family in enumerate(domain["families"]):
            gold = label_of(family, labels) if family["type"] == qtype else None
            key = (domain["name"], index)
            if gold is not None and balancer.accepts(key, family, gold):
                options.append((key, family, gold))
        options = balancer.prefer_rare(domain["name"], qtype, options)
        if options:
            weights = [family.get("weight", 1) for _, family, _ in options]
            picked.append(rng.choices(options, weights)[0])
    questions, answers = {}, {}
    for key, family, gold in picked:
        balancer.record(key, family, gold)
        qid = rng.choice(family["qids"])
        while qid in questions:
            qid += "_2"
        questions[qid] = make_question(rng, family, gold, labels)
        answers[qid] = gold
    return questions, answers


def split_of(position, total):
    """Split name of the core at ``position`` among ``total`` shuffled cores."""
    train_end = round(total * SPLIT_SHARES[0])
    dev_end = train_end + round(total * SPLIT_SHARES[1])
    return "train" if position < train_end else "dev" if position < dev_end else "test"


def build_domain(rng, domain, balancer, seen):
    """All rows of one domain, as (split, row) pairs."""
    cores = list(enumerate(domain["cores"]))
    rng.shuffle(cores)
    split = {index: split_of(pos, len(cores)) for pos, (index, _) in enumerate(cores)}
    rows = []
    for n in range(round(STATES_PER_CORE * len(cores))):
        index, core = cores[n % len(cores)]
        for _ in range(30):
            state, labels = domain["make"](rng, core)
            text = json.dumps(state, ensure_ascii=False, sort_keys=True)
            if text not in seen:
                break
        seen.add(text)
        questions, answers = pick_questions(rng, domain, labels, balancer)
        if not questions:
            continue
        row = {
            "id": f"{domain['prefix']}-{n + 1:04d}",
            "domain": domain["name"],
            "source": f"{domain['prefix']}-c{index + 1:03d}",
            "state": state,
            "questions": questions,
            "answers": answers,
        }
        rows.append((split[index], row))
    return rows


def build():
    """Every row of the dataset grouped by split, and the balancer with per-family counts."""
    rng = random.Random(SEED)
    balancer, seen = Balancer(), set()
    splits = {name: [] for name in SPLITS}
    for domain in load_domains():
        for split, row in build_domain(rng, domain, balancer, seen):
            splits[split].append(row)
    for rows in splits.values():
        rng.shuffle(rows)
    return splits, balancer


def write(splits, out):
    """Write one JSONL file per split into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in splits.items():
        with open(out / f"{name}.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def stats(splits, balancer):
    """Human-readable counts per split, domain and question type, plus label balance."""
    lines = ["split      states  questions  choice  score  noul"]
    per_domain = defaultdict(Counter)
    answers = defaultdict(Counter)
    for name, rows in splits.items():
        types = Counter()
        for row in rows:
            per_domain[row["domain"]][name] += 1
            for qid, q in row["questions"].items():
                types[q["type"]] += 1
                per_domain[row["domain"]][q["type"]] += 1
                answers[(row["domain"], q["type"])][row["answers"][qid]] += 1
        total = sum(types.values())
        counts = "  ".join(f"{types[t]:>5}" for t in TYPES)
        lines.append(f"{name:<9} {len(rows):>7} {total:>10}  {counts}")
    lines += ["", "domain            train  dev  test  choice  score  noul"]
    for domain, c in per_domain.items():
        lines.append(
            f"{domain:<17} {c['train']:>5} {c['dev']:>4} {c['test']:>5}"
            f"  {c['choice']:>6} {c['score']:>6} {c['noul']:>5}"
        )
    lines += ["", "label balance per question family (all splits; share of the most common answer)"]
    for (domain, index), counter in balancer.counts.items():
        family = next(d for d in load_domains() if d["name"] == domain)["families"][index]
        what = family.get("key") or family["qids"][0]
        lines.append(f"{domain:<17} {family['type']:<6} {what:<15} {share_line(counter)}")
    lines += ["", "label balance per domain and type"]
    for (domain, qtype), counter in answers.items():
        lines.append(f"{domain:<17} {qtype:<6} {share_line(counter)}")
    return "\n".join(lines)


def share_line(counter):
    """``top=<answer> <share>  [answer=count, ...]`` for one answer counter."""
    top, count = counter.most_common(1)[0]
    dist = ", ".join(f"{k}={v}" for k, v in sorted(counter.items(), key=str))
    return f"top={top!s:<16} {count / sum(counter.values()):.2f}  [{dist}]"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output directory")
    parser.add_argument("--stats", action="store_true", help="print counts and label balance")
    args = parser.parse_args(argv)
    splits, balancer = build()
    write(splits, args.out)
    if args.stats:
        print(stats(splits, balancer))


if __name__ == "__main__":
    main()
