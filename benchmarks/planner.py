"""Planner benchmark: generated skewed clusters with new brokers, planned and measured.

    python benchmarks/planner.py                 # all four sizes (the 1M one takes minutes)
    python benchmarks/planner.py --sizes 12/2000,50/50000

Each size runs in its own process so peak memory (ru_maxrss) is that size's alone.
Prints, per cluster: snapshot load seconds, planning seconds, writing seconds, peak
memory, replica moves and bytes against their lower bounds, final spreads (replicas,
preferred leaders, bytes), rack violations before/after, and as a baseline from the
same run, the replica moves Kafka's --generate would make.

    python benchmarks/planner.py --exact         # bytes against the exact optimum, small clusters

`--exact` plans each of EXACT_CLUSTERS (100-300 partitions, log-normal sizes, new brokers,
one decommission) three times: --optimizer heuristic, exact and auto, and prints each one's
bytes against the exact optimum and HiGHS's proven bound, with Kafka's --generate (over the
brokers that stay) as the baseline from the same run.

    python benchmarks/planner.py --corpus        # the corpus members up to 200 brokers / 200k partitions
    python benchmarks/planner.py --corpus 400b-1m,hot-topics-40b
    python benchmarks/planner.py --corpus samples/sample-cluster.json,uneven-7-5-newbroker \\
        --goals replica-count,bytes,topic-spread,preferred-leader,leader-imbalance

`--corpus` plans named members of kafka_rebalance.testing.corpus (clusters our generator did not
make: Pareto sizes, uneven racks, mixed RF, decommissions...), each in its own process, with
default options and the member's own (its decommission). Per member: planning seconds, bytes moved
against the certified bound (summary.optimizer.bytes_bound) and the combinatorial lower bound
(summary.lower_bounds.bytes_moved), against the exact optimum where the exact model takes the
member (PlanOptions(optimizer="exact"), members of at most CORPUS_EXACT_PARTITIONS partitions),
the largest eligible broker's bytes over their mean before and after, replica moves, leader
elections, leader changes (summary.leader_changes), and Kafka's --generate over the eligible
brokers as the baseline of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins"))

# brokers/partitions -> (racks, new brokers): racks divide the existing broker count
# so the generator places every partition on distinct racks.
SIZES = {
    (12, 2_000): (3, 3),
    (50, 50_000): (5, 5),
    (200, 200_000): (5, 10),
    (400, 1_000_000): (5, 20),
}


# name, brokers, racks, new brokers, partitions, replication factor, replica skew, decommission
EXACT_CLUSTERS = [
    ("8b-2r-2new-100p", 8, 2, 2, 100, 2, 0.5, ()),
    ("10b-3r-1new-200p", 10, 3, 1, 200, 3, 0.5, ()),
    ("12b-3r-3new-300p", 12, 3, 3, 300, 3, 0.5, ()),
    ("12b-3r-decommission-300p", 12, 3, 0, 300, 3, 1.0, (0,)),
    ("9b-0r-2new-150p-rf2", 9, 0, 2, 150, 2, 1.0, ()),
    ("11b-4r-3new-decommission-200p", 11, 4, 3, 200, 2, 1.0, (0,)),
]


def run_exact(workdir: Path) -> list[dict]:
    from kafka_rebalance.generate import ClusterSpec, generate_snapshot
    from kafka_rebalance.planner import PlanOptions, make_plan
    from kafka_rebalance.planner.kafka_generate import generate_moves

    rows = []
    for name, brokers, racks, new, partitions, rf, skew, decommission in EXACT_CLUSTERS:
        snap = generate_snapshot(ClusterSpec(
            cluster_id=name, brokers=brokers, racks=racks, topics=6, partitions=partitions, replication_factor=rf,
            replica_skew=skew, new_brokers=new, seed=7))
        row: dict = {"cluster": name}
        for optimizer in ("heuristic", "exact", "auto"):
            t0 = time.perf_counter()
            s = make_plan(snap, PlanOptions(optimizer=optimizer, decommission_brokers=decommission)).summary
            row[optimizer] = {"s": round(time.perf_counter() - t0, 2), "bytes": s["bytes_moved"], **s["optimizer"]}
        # The baseline an operator has without us: Kafka's --generate over the brokers that stay.
        t0 = time.perf_counter()
        kg = generate_moves(snap, [b for b in snap.live_broker_ids if b not in decommission])
        row["kafka_generate"] = {"s": round(time.perf_counter() - t0, 2), "bytes": kg["bytes_moved"]}
        opt = row["exact"]["bytes"]
        for optimizer in ("heuristic", "auto", "kafka_generate"):
            row[optimizer]["vs_exact"] = round(row[optimizer]["bytes"] / opt, 4) if opt else None
        rows.append(row)
    return rows


# The exact optimum is computed for members up to this many partitions (and HARD_LIMIT variables).
CORPUS_EXACT_PARTITIONS = 2_000
CORPUS_DEFAULT_MAX = (200, 200_000)  # brokers, partitions: --corpus with no names plans these


def topic_spread_figure(snap, plan, eligible: set[int]) -> int:
    """The topic-spread goal's figure (replicas and first replicas outside their topics' bands) on the plan's
    final assignment, whether or not the plan selected the goal: judged by the goal's own check."""
    from collections import Counter

    from kafka_rebalance.planner.goals.topic_spread import TopicSpreadGoal
    from kafka_rebalance.planner.goals.view import BalanceView, BrokerView, TopicLoad

    final = {(p.topic, p.partition): tuple(p.replicas) for p in snap.partitions}
    for batch in plan.batches:
        for step in batch.steps:
            final[(step.topic, step.partition)] = tuple(step.after)
    excluded = set(plan.options.exclude_topics)
    wanted = plan.options.replication_factor
    per: dict[str, dict[str, Counter]] = {}
    for p in snap.partitions:
        c = per.setdefault(p.topic, {k: Counter() for k in ("rf", "fixed", "replicas", "preferred")})
        row = final[(p.topic, p.partition)]
        if p.topic in excluded or p.leader < 0:
            c["fixed"].update(b for b in p.replicas if b in eligible)
        else:
            c["rf"][wanted or len(p.replicas)] += 1
        c["replicas"].update(b for b in row if b in eligible)
        if row and row[0] in eligible:
            c["preferred"][row[0]] += 1
    racked = any(b.rack is not None for b in snap.brokers)
    racks = tuple((b.id, b.rack if racked else None) for b in snap.brokers if b.id in eligible)
    topics = tuple(TopicLoad(t, *(tuple(sorted(c[k].items())) for k in ("rf", "fixed", "replicas", "preferred")))
                   for t, c in sorted(per.items()))
    brokers = tuple(BrokerView(b, 0, 0, 0, 0.0, 0.0, 0.0, 0, 0, 0) for b in sorted(eligible))
    view = BalanceView(brokers, (), 0.0, 0.0, (0, 0), topics=topics, racks=racks)
    return int(TopicSpreadGoal().check(view).value)


def run_corpus_one(name: str, goals: tuple[str, ...] = (), exact: bool = True) -> dict:
    from kafka_rebalance.errors import PlanError
    from kafka_rebalance.planner import PlanOptions, make_plan
    from kafka_rebalance.planner.kafka_generate import generate_moves
    from kafka_rebalance.snapshot import load_snapshot
    from kafka_rebalance.testing import corpus

    t0 = time.perf_counter()
    # a member's name, or a snapshot file (the sample cluster) planned with default options
    snap, opts = (load_snapshot(Path(name)), {}) if name.endswith(".json") else corpus.member(name)
    opts = {**opts, "goals": goals}
    t1 = time.perf_counter()
    row: dict = {"member": name, "brokers": len(snap.brokers), "partitions": len(snap.partitions),
                 "decommissioned": len(opts.get("decommission_brokers", ())), "build_s": round(t1 - t0, 2)}
    c1 = time.process_time()
    try:
        plan = make_plan(snap, PlanOptions(**opts))
    except PlanError as exc:
        row["error"] = str(exc)
        return row
    t2 = time.perf_counter()
    c2 = time.process_time()
    s = plan.summary
    eligible = {int(b) for b in s["targets"]["replicas"]}

    def max_over_mean(rows: list[dict]) -> float:
        held = [r["size_bytes"] for r in rows if r["broker_id"] in eligible]
        mean = sum(held) / len(held)
        return round(max(held) / mean, 3) if mean else 1.0

    row.update({
        "plan_s": round(t2 - t1, 2),
        # CPU seconds: on a shared machine the wall-clock figure says as much about the neighbours
        "plan_cpu_s": round(c2 - c1, 2),
        "optimizer": s["optimizer"]["used"],
        "bytes_moved": s["bytes_moved"],
        "bytes_bound": s["optimizer"]["bytes_bound"],
        "lower_bound": s["lower_bounds"]["bytes_moved"],
        "byte_max_mean_before": max_over_mean(s["before"]),
        "byte_max_mean_after": max_over_mean(s["projected"]),
        "replicas_reached": s["targets"]["replicas_reached"],
        "bytes_reached": s["targets"]["bytes_reached"],
        "replica_moves": s["replica_moves"],
        "elections": s["leader_elections"],
        "leader_changes": s["leader_changes"],
        "rack_unrepaired": len(s["rack_violations_unrepaired"]),
        "topic_spread_before": topic_spread_figure(snap, replace(plan, batches=[]), eligible),
        "topic_spread_after": topic_spread_figure(snap, plan, eligible),
    })
    if exact and len(snap.partitions) <= CORPUS_EXACT_PARTITIONS:
        t3 = time.perf_counter()
        try:
            e = make_plan(snap, PlanOptions(optimizer="exact", **opts)).summary
            row["exact"] = {"bytes": e["bytes_moved"], "status": e["optimizer"]["exact_status"],
                            "gap_percent": e["optimizer"]["gap_percent"], "bound": e["optimizer"]["bytes_bound"],
                            "widened": e["optimizer"]["band_widened_bytes"], "s": round(time.perf_counter() - t3, 2)}
        except PlanError as exc:
            row["exact"] = {"error": str(exc).split(":")[1].strip() if ":" in str(exc) else str(exc),
                            "s": round(time.perf_counter() - t3, 2)}
    t4 = time.perf_counter()
    kg = generate_moves(snap, sorted(eligible))
    row["kafka_generate"] = {"bytes": kg["bytes_moved"], "moves": kg["replica_moves"], "s": round(time.perf_counter() - t4, 2)}
    return row


def corpus_table(rows: list[dict]) -> str:
    """The members as one Markdown table (docs/PERFORMANCE.md)."""
    def gb(x: int) -> str:
        return f"{x / 1e9:,.2f}"

    def ratio(a: int, b: int) -> str:
        return f"{a / b:.3f}x" if b else ("1x" if not a else "-")

    out = ["| member | brokers / partitions (decom.) | plan s (CPU s) | optimizer | GB moved | certified bound GB (moved / bound) "
           "| lower bound GB | exact optimum GB (moved / exact) | byte max/mean before -> after | counts / bytes reached "
           "| replica moves | elections | leader changes | Kafka `--generate` GB (x ours), moves |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['member']} | {r['brokers']} / {r['partitions']:,} ({r['decommissioned']}) | refused: {r['error']} |"
                       + " |" * 11)
            continue
        e = r.get("exact")
        if e is None:
            exact = "not run (size)"
        elif "error" in e:
            exact = f"{e['error']} ({e['s']} s)"
        else:
            exact = f"{gb(e['bytes'])}, {e['status']}, gap {e['gap_percent']} %, {e['s']} s ({ratio(r['bytes_moved'], e['bytes'])})"
        k = r["kafka_generate"]
        out.append(
            f"| {r['member']} | {r['brokers']} / {r['partitions']:,} ({r['decommissioned']}) "
            f"| {r['plan_s']} ({r.get('plan_cpu_s', '-')}) | {r['optimizer']} "
            f"| {gb(r['bytes_moved'])} | {gb(r['bytes_bound'])} ({ratio(r['bytes_moved'], r['bytes_bound'])}) "
            f"| {gb(r['lower_bound'])} | {exact} | {r['byte_max_mean_before']} -> {r['byte_max_mean_after']} "
            f"| {'yes' if r['replicas_reached'] else 'no'} / {'yes' if r['bytes_reached'] else 'no'} "
            f"| {r['replica_moves']:,} | {r['elections']:,} | {r['leader_changes']:,} "
            f"| {gb(k['bytes'])} ({ratio(k['bytes'], r['bytes_moved'])}), {k['moves']:,} |")
    return "\n".join(out)


def spec_for(brokers: int, partitions: int):
    from kafka_rebalance.generate import ClusterSpec

    racks, new = SIZES.get((brokers, partitions), (3, max(1, brokers // 20)))
    return ClusterSpec(
        cluster_id=f"bench-{brokers}-{partitions}", brokers=brokers, racks=racks, topics=max(10, partitions // 1000),
        partitions=partitions, replication_factor=3, replica_skew=0.5, leader_skew=0.1, new_brokers=new,
        under_replicated=0.01, mean_partition_mb=64.0, seed=7,
    )


def rack_violations(snapshot, rows_by_partition) -> int:
    rack = snapshot.rack_of
    n_racks = len({r for r in rack.values()})
    bad = 0
    for reps in rows_by_partition:
        cap = -(-len(reps) // n_racks)
        racks = [rack[b] for b in reps]
        if max(racks.count(r) for r in set(racks)) > cap:
            bad += 1
    return bad


def run_one(brokers: int, partitions: int, workdir: Path) -> dict:
    from kafka_rebalance.balance import byte_deviation, count_spread
    from kafka_rebalance.generate import generate
    from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
    from kafka_rebalance.planner.kafka_generate import generate_moves
    from kafka_rebalance.snapshot import load_snapshot

    spec = spec_for(brokers, partitions)
    path = workdir / f"bench-{brokers}-{partitions}.parquet"
    if not path.exists():
        generate(spec, path)
    t0 = time.perf_counter()
    snap = load_snapshot(path)
    t1 = time.perf_counter()
    plan = make_plan(snap, PlanOptions())
    t2 = time.perf_counter()
    out = Path(tempfile.mkdtemp(dir=workdir)) / "plan"
    write_plan(plan, out, str(path))
    t3 = time.perf_counter()
    shutil.rmtree(out.parent)  # the figures are what we keep, not 1000s of batch files
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    s = plan.summary
    final = {}
    for batch in plan.batches:
        for step in batch.steps:
            final[(step.topic, step.partition)] = step.after
    after_rows = [final.get((p.topic, p.partition), p.replicas) for p in snap.partitions]
    before_v = rack_violations(snap, [p.replicas for p in snap.partitions])
    after_v = rack_violations(snap, after_rows)
    proj = s["projected"]
    live = [r for r in proj if r["broker_id"] in set(snap.live_broker_ids)]
    t4 = time.perf_counter()
    baseline = generate_moves(snap)
    t5 = time.perf_counter()
    return {
        "cluster": f"{brokers} brokers / {partitions:,} partitions ({spec.racks} racks, {spec.new_brokers} new)",
        "load_s": round(t1 - t0, 2),
        "plan_s": round(t2 - t1, 2),
        "write_s": round(t3 - t2, 2),
        "peak_mb": round(peak_mb),
        "batches": len(plan.batches),
        "replica_moves": s["replica_moves"],
        "moves_lower_bound": s["lower_bounds"]["replica_moves"],
        "moves_ratio": s["ratio_to_lower_bound"]["replica_moves"],
        "bytes_moved": s["bytes_moved"],
        "bytes_lower_bound": s["lower_bounds"]["bytes_moved"],
        "bytes_ratio": s["ratio_to_lower_bound"]["bytes_moved"],
        "optimizer": s["optimizer"]["used"],
        "bytes_gap_percent": s["optimizer"]["gap_percent"],
        "reorders": s["reorders"],
        "elections": s["leader_elections"],
        "leader_changes": s["leader_changes"],
        "estimated_hours": round(s["estimated_seconds"] / 3600, 2),
        "continuous_hours": round(s["continuous"]["estimated_seconds"] / 3600, 2),
        "bound_hours": round(s["continuous"]["physical_bound_seconds"] / 3600, 2),
        "continuous_ratio": s["continuous"]["ratio_to_bound"],
        "batched_ratio": s["continuous"]["batched_ratio_to_bound"],
        "replicas_before": count_spread([r["replicas"] for r in s["before"] if r in s["before"]]),
        "replicas_after": count_spread([r["replicas"] for r in live]),
        "preferred_after": count_spread([r["preferred_leaders"] for r in live]),
        "bytes_dev_before": round(byte_deviation([r["size_bytes"] for r in s["before"]]), 3),
        "bytes_dev_after": round(byte_deviation([r["size_bytes"] for r in live]), 3),
        "rack_violations_before": before_v,
        "rack_violations_after": after_v,
        "kafka_generate_moves": baseline["replica_moves"],
        "kafka_generate_bytes": baseline["bytes_moved"],
        "kafka_generate_s": round(t5 - t4, 2),
    }


def spread_table(rows: list[dict]) -> str:
    """The figures docs/PLANNER.md's topic-spread section records, one row per run."""
    out = ["| member | goals | GB moved | replica moves | topic-spread before -> after | plan CPU s |", "|---|---|---|---|---|---|"]
    for r in rows:
        if "error" not in r:
            out.append(f"| {r['member']} | {r.get('goals') or 'default'} | {r['bytes_moved'] / 1e9:,.2f} | {r['replica_moves']:,} "
                       f"| {r['topic_spread_before']:,} -> {r['topic_spread_after']:,} | {r['plan_cpu_s']} |")
    return "\n".join(out)


def run_corpus(names: str, goals: str = "", exact: bool = True) -> None:
    from kafka_rebalance.testing import corpus

    if names:
        chosen = [n.strip() for n in names.split(",") if n.strip()]
        unknown = [n for n in chosen if n not in corpus.MEMBERS and not n.endswith(".json")]
        if unknown:
            sys.exit(f"--corpus: no member(s) {', '.join(unknown)}; members: {', '.join(corpus.MEMBERS)}")
    else:
        cap_b, cap_p = CORPUS_DEFAULT_MAX
        chosen = [n for n, m in corpus.MEMBERS.items() if m.brokers <= cap_b and m.partitions <= cap_p]
    rows = []
    for name in chosen:
        t0 = time.perf_counter()
        args = [sys.executable, __file__, "--corpus-one", name, "--goals", goals, *([] if exact else ["--no-exact"])]
        res = subprocess.run(args, capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": "0"})
        if res.returncode != 0:
            print(f"{name}: FAILED\n{res.stderr}", file=sys.stderr)
            continue
        r = json.loads(res.stdout.strip().splitlines()[-1])
        r["goals"] = goals
        rows.append(r)
        print(f"== {name} ({time.perf_counter() - t0:.1f} s in all)\n   {json.dumps(r)}")
        sys.stdout.flush()
    print()
    print(corpus_table(rows))
    print()
    print(spread_table(rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=",".join(f"{b}/{p}" for b, p in SIZES), help="brokers/partitions,...")
    ap.add_argument("--workdir", default=str(ROOT / ".bench"), help="where snapshots and plans go")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", nargs="?", const="", metavar="NAME,...",
                    help="plan corpus members (default: every member up to 200 brokers / 200k partitions)")
    ap.add_argument("--corpus-one", help=argparse.SUPPRESS)
    ap.add_argument("--exact", action="store_true", help="compare heuristic, exact and auto on small clusters")
    ap.add_argument("--no-exact", action="store_true", help="with --corpus: skip the exact optimum column (minutes per member)")
    ap.add_argument("--goals", default="", metavar="GOAL,...",
                    help="with --corpus: the soft goals to plan with (plan --goals; default: the default goals)")
    args = ap.parse_args()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    if args.corpus_one:
        print(json.dumps(run_corpus_one(args.corpus_one, tuple(g for g in args.goals.split(",") if g), not args.no_exact)))
        return
    if args.corpus is not None:
        run_corpus(args.corpus, args.goals, not args.no_exact)
        return
    if args.exact:
        for r in run_exact(workdir):
            e, h, a = r["exact"], r["heuristic"], r["auto"]
            print(f"== {r['cluster']}")
            print(f"   exact     {e['bytes']:>16,} bytes  {e['exact_status']}, proven bound {e['bytes_bound']:,} "
                  f"(gap {e['gap_percent']} %, widened {e['band_widened_bytes']:,})  {e['s']}s")
            print(f"   heuristic {h['bytes']:>16,} bytes  = {h['vs_exact']}x exact  {h['s']}s")
            print(f"   auto      {a['bytes']:>16,} bytes  = {a['vs_exact']}x exact  (used {a['used']})  {a['s']}s")
            k = r["kafka_generate"]
            print(f"   kafka gen {k['bytes']:>16,} bytes  = {k['vs_exact']}x exact  (--generate)  {k['s']}s")
            sys.stdout.flush()
        return
    if args.one:
        b, p = (int(x) for x in args.one.split("/"))
        print(json.dumps(run_one(b, p, workdir)))
        return
    for item in args.sizes.split(","):
        res = subprocess.run(
            [sys.executable, __file__, "--one", item, "--workdir", str(workdir)], capture_output=True, text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        if res.returncode != 0:
            print(f"{item}: FAILED\n{res.stderr}", file=sys.stderr)
            continue
        r = json.loads(res.stdout.strip().splitlines()[-1])
        ra, pa = r["replicas_after"], r["preferred_after"]
        print(f"== {r['cluster']}")
        print(f"   load {r['load_s']}s  plan {r['plan_s']}s  write {r['write_s']}s  peak {r['peak_mb']} MB  batches {r['batches']}")
        print(f"   moves {r['replica_moves']:,} / lower bound {r['moves_lower_bound']:,} = {r['moves_ratio']}x   "
              f"Kafka --generate: {r['kafka_generate_moves']:,} moves ({r['kafka_generate_s']}s)")
        print(f"   bytes {r['bytes_moved']:,} / certified bound {r['bytes_lower_bound']:,} = {r['bytes_ratio']}x "
              f"(optimizer {r['optimizer']}, gap {r['bytes_gap_percent']} %)   "
              f"Kafka --generate: {r['kafka_generate_bytes']:,}")
        print(f"   replicas per broker {r['replicas_before']['min']}..{r['replicas_before']['max']} -> {ra['min']}..{ra['max']} "
              f"(ideal {ra['ideal']:.1f}, outside [floor, ceil]: {ra['brokers_outside']}); preferred leaders -> "
              f"{pa['min']}..{pa['max']} (outside: {pa['brokers_outside']})")
        print(f"   byte deviation {r['bytes_dev_before']:.1%} -> {r['bytes_dev_after']:.1%}; rack violations "
              f"{r['rack_violations_before']} -> {r['rack_violations_after']}; reorders {r['reorders']:,}, "
              f"elections {r['elections']:,}, leader changes {r['leader_changes']:,}")
        print(f"   duration at 50 MiB/s: continuous {r['continuous_hours']} h = {r['continuous_ratio']}x the physical "
              f"bound {r['bound_hours']} h; in batches {r['estimated_hours']} h = {r['batched_ratio']}x")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
