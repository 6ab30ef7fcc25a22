"""A synthetic graph with STaRK-Prime's size and shape, written as a KB source the ingest reads.

Size (MoR paper, Table 7, "PRIME"): 129,375 entities and 8,100,498 relations (edges), average
degree 125.2; shape (MoR paper, App. B.1, after PrimeKG): ten entity types and eighteen relation
types. The papers name four of the types (disease, gene/protein, drug; effect/phenotype in
HybGRAG's App. B examples) and four relations ("indication" / "contra-indication" between drug
and disease in MoR 3.1; "phenotype present" and "associated with" in HybGRAG's examples); the
other six types and fourteen relations get generic names. Type sizes and relation shares are not
in the papers: they are drawn from a seeded Dirichlet(2).

Degrees are heavy-tailed by a Chung-Lu construction: every entity gets a weight ``1 + Lomax(2)``
(a Pareto tail with exponent 2, seeded), and each edge of a relation picks its head and tail in
the relation's two types with probability proportional to weight. Duplicate edges and self-loops
are dropped and redrawn, so the file holds exactly ``edges`` distinct triples.

Files (all streamed, per relation): ``kb.txt`` (``head|relation|tail``, :func:`kb.loaders.read_triples`),
``entities.jsonl`` (every entity with its type, :func:`kb.loaders.read_entities`; an entity no
edge drew still exists) and ``types.json`` (relation → [head type, tail type],
:func:`kb.loaders.read_type_map`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ENTITIES, EDGES = 129_375, 8_100_498  # MoR, Table 7 (STaRK PRIME)
TYPES = (
    "disease",
    "gene_protein",
    "drug",
    "effect_phenotype",
    "type_05",
    "type_06",
    "type_07",
    "type_08",
    "type_09",
    "type_10",
)
SCHEMA: tuple[tuple[str, str, str], ...] = (  # relation, head type, tail type
    ("indication", "drug", "disease"),
    ("contraindication", "drug", "disease"),
    ("phenotype_present", "disease", "effect_phenotype"),
    ("associated_with", "gene_protein", "disease"),
    ("relation_05", "gene_protein", "gene_protein"),
    ("relation_06", "drug", "gene_protein"),
    ("relation_07", "drug", "drug"),
    ("relation_08", "drug", "effect_phenotype"),
    ("relation_09", "gene_protein", "type_05"),
    ("relation_10", "gene_protein", "type_06"),
    ("relation_11", "gene_protein", "type_07"),
    ("relation_12", "gene_protein", "type_08"),
    ("relation_13", "type_05", "type_05"),
    ("relation_14", "type_09", "gene_protein"),
    ("relation_15", "type_10", "disease"),
    ("relation_16", "disease", "disease"),
    ("relation_17", "effect_phenotype", "effect_phenotype"),
    ("relation_18", "type_08", "type_08"),
)
SYLLABLES = (
    "ba",
    "ce",
    "di",
    "fo",
    "gu",
    "ha",
    "ki",
    "lo",
    "mu",
    "ne",
    "pi",
    "ro",
    "sa",
    "te",
    "vu",
    "xi",
    "za",
    "bro",
    "cla",
    "dre",
    "fli",
    "gro",
    "kra",
    "ple",
    "sto",
    "tri",
    "vel",
    "zor",
    "mar",
    "nil",
    "pen",
    "quo",
    "ris",
    "sol",
    "tam",
    "und",
    "vox",
    "wen",
    "yar",
    "zed",
)
TAIL_SHAPE = 2.0  # Lomax shape of the degree weights


def entity_name(code: int, etype: str) -> str:
    """A pseudo-word spelled from ``code`` in base 40, then the type: ``Bacedi disease``.

    At least 3 syllables; distinct codes give distinct words; ``|`` never occurs.
    """
    parts = []
    while True:
        code, d = divmod(code, len(SYLLABLES))
        parts.append(SYLLABLES[d])
        if code == 0 and len(parts) >= 3:
            break
    return "".join(parts).capitalize() + " " + etype.replace("_", " ")


def plan(entities: int = ENTITIES, edges: int = EDGES, seed: int = 0) -> dict:
    """Type of each entity index, entity names, weights, and the edge count of each relation (seeded)."""
    if entities < 10 * len(TYPES) or edges < len(SCHEMA):
        raise ValueError(
            f"need at least {10 * len(TYPES)} entities and {len(SCHEMA)} edges, got {entities} and {edges}"
        )
    rng = np.random.default_rng(seed)
    sizes = _split(rng.dirichlet(np.full(len(TYPES), 2.0)), entities, floor=10)
    shares = _split(rng.dirichlet(np.full(len(SCHEMA), 2.0)), edges, floor=1)
    types = np.repeat(np.arange(len(TYPES)), sizes)
    rng.shuffle(types)
    codes = rng.permutation(entities)  # names do not follow the index order
    names = [entity_name(int(c), TYPES[t]) for c, t in zip(codes, types, strict=True)]
    weights = rng.pareto(TAIL_SHAPE, entities) + 1.0
    for (rel, h, t), n in zip(SCHEMA, shares, strict=True):
        cap = int(sizes[TYPES.index(h)]) * (int(sizes[TYPES.index(t)]) - (h == t))
        if n > cap:
            raise ValueError(f"relation {rel} needs {n} distinct edges but only {cap} exist at this size")
    return {"types": types, "names": names, "weights": weights, "sizes": sizes, "shares": shares, "seed": seed}


def _split(p: np.ndarray, total: int, floor: int) -> np.ndarray:
    """``total`` split by proportions ``p``, each part at least ``floor``, summing exactly to ``total``."""
    out = floor + np.floor(p * (total - floor * len(p))).astype(np.int64)
    out[np.argmax(out)] += total - int(out.sum())
    return out


def relation_edges(p: dict, r: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (head, tail) entity indexes of relation ``r``, in draw order, no self-loops."""
    _, h_type, t_type = SCHEMA[r]
    want = int(p["shares"][r])
    heads_pool = np.flatnonzero(p["types"] == TYPES.index(h_type))
    tails_pool = np.flatnonzero(p["types"] == TYPES.index(t_type))
    ph = p["weights"][heads_pool] / p["weights"][heads_pool].sum()
    pt = p["weights"][tails_pool] / p["weights"][tails_pool].sum()
    keys = np.zeros(0, np.int64)
    n_all = np.int64(len(p["types"]))
    while len(keys) < want:
        draw = max(int((want - len(keys)) * 1.2), 16)
        h = heads_pool[rng.choice(len(heads_pool), draw, p=ph)]
        t = tails_pool[rng.choice(len(tails_pool), draw, p=pt)]
        k = h[h != t].astype(np.int64) * n_all + t[h != t]
        k = np.concatenate([keys, k])
        _, first = np.unique(k, return_index=True)
        keys = k[np.sort(first)][:want]
    return keys // n_all, keys % n_all


def write_prime(
    out_dir: str | Path, entities: int = ENTITIES, edges: int = EDGES, seed: int = 0, chunk: int = 200_000
) -> dict:
    """Write ``kb.txt``, ``entities.jsonl`` and ``types.json`` into ``out_dir``; return the counts.

    Each file is written to a ``.tmp`` name and renamed when complete, so a killed run leaves no
    file that looks finished.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p = plan(entities, edges, seed)
    names = p["names"]
    _atomic(out / "types.json", lambda f: json.dump({r: [h, t] for r, h, t in SCHEMA}, f, indent=1))

    def ents(f) -> None:
        for i in range(0, entities, chunk):
            f.writelines(
                json.dumps({"id": names[j], "name": names[j], "type": TYPES[p["types"][j]]}) + "\n"
                for j in range(i, min(i + chunk, entities))
            )

    _atomic(out / "entities.jsonl", ents)
    degree = np.zeros(entities, np.int64)
    rng = np.random.default_rng([seed, 1])

    def triples(f) -> None:
        for r, (rel, _, _) in enumerate(SCHEMA):
            h, t = relation_edges(p, r, rng)
            degree[:] += np.bincount(h, minlength=entities) + np.bincount(t, minlength=entities)
            for i in range(0, len(h), chunk):
                f.writelines(
                    f"{names[a]}|{rel}|{names[b]}\n"
                    for a, b in zip(h[i : i + chunk].tolist(), t[i : i + chunk].tolist(), strict=True)
                )

    _atomic(out / "kb.txt", triples)
    return {
        "entities": entities,
        "edges": int(degree.sum() // 2),
        "types": len(TYPES),
        "relations": len(SCHEMA),
        "seed": seed,
        "type_sizes": dict(zip(TYPES, p["sizes"].tolist(), strict=True)),
        "relation_edges": {r: int(n) for (r, _, _), n in zip(SCHEMA, p["shares"], strict=True)},
        "degree": degree_summary(degree),
    }


def degree_summary(degree: np.ndarray) -> dict:
    """Mean, median, high percentiles and maximum of a degree array, and the isolated count."""
    q = np.percentile(degree, [50, 90, 99, 99.9])
    return {
        "mean": float(degree.mean()),
        "p50": float(q[0]),
        "p90": float(q[1]),
        "p99": float(q[2]),
        "p999": float(q[3]),
        "max": int(degree.max()),
        "isolated": int((degree == 0).sum()),
    }


def _atomic(path: Path, write) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        write(f)
    tmp.replace(path)
