"""Write the bundled sample KB (a MetaQA slice) into kb/sample/.

Usage: python scripts/make_sample.py ../shared/datasets/metaqa/kb.txt
Movies are collected breadth-first over shared actors from Tom Hanks; 30% of their
triples (seeded) are held out of the graph and written as passages about the movie.
"""

import json
import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hybridrag.kb.loaders import read_triples  # noqa: E402
from hybridrag.kb.verbalise import passages_about_heads  # noqa: E402

N_MOVIES, HELD_OUT, SEED = 300, 0.3, 7
out = Path(__file__).resolve().parents[1] / "kb" / "sample"
triples = list(read_triples(Path(sys.argv[1])))
by_movie, movies_of = defaultdict(list), defaultdict(list)
for t in triples:
    by_movie[t.head].append(t)
    if t.type == "starred_actors":
        movies_of[t.tail].append(t.head)
chosen, queue, seen = [], ["Tom Hanks"], {"Tom Hanks"}
while queue and len(chosen) < N_MOVIES:
    for movie in sorted(movies_of[queue.pop(0)]):
        if movie not in chosen and len(chosen) < N_MOVIES:
            chosen.append(movie)
            for a in (t.tail for t in by_movie[movie] if t.type == "starred_actors"):
                if a not in seen:
                    seen.add(a)
                    queue.append(a)
rng = random.Random(SEED)
kept, held = [], []
for movie in chosen:
    for t in by_movie[movie]:
        (held if rng.random() < HELD_OUT else kept).append(t)
(out / "triples.txt").write_text("".join(f"{t.head}|{t.type}|{t.tail}\n" for t in kept), encoding="utf-8")
with open(out / "passages.jsonl", "w", encoding="utf-8") as f:
    for p in passages_about_heads(held):
        f.write(json.dumps({"id": p.id, "text": p.text, "entity_id": p.entity_id}) + "\n")
print(f"{len(chosen)} movies, {len(kept)} triples in the graph, {len(held)} facts as passages")  # noqa: T201
