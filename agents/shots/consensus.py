"""Solved examples that disagree with their look-alikes: KB gaps, not question intents.

A question solved from its gold answers (:mod:`agents.shots.solve`) takes the KB path that
reaches them best. On an incomplete KB that path can be wrong when the right edge is missing:
"which person directed <E>" solved by ``has_tags`` because a tag spells the director's name.
Such an example is then shown to a small model, which copies it.

The masked question says what is asked, so near-identical masked questions should share a
path. An example is an *outlier* when, among its nearest peers of the same path length
(cosine ≥ :data:`SIMILARITY` over the entity-masked embeddings, at most :data:`PEERS`, at least
:data:`MIN_PEERS`), more than half follow one other path and at most a quarter follow its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from hybridrag.agents.shots.example import SolvedExample

SIMILARITY = 0.9
PEERS = 30
MIN_PEERS = 3
REASON = "path disagrees with its nearest solved look-alikes (a KB gap?)"


def outliers(
    examples: Sequence[SolvedExample],
    vectors: np.ndarray,
    peers: Sequence[SolvedExample],
    peer_vectors: np.ndarray,
    similarity: float = SIMILARITY,
    k: int = PEERS,
) -> list[int]:
    """Indices of ``examples`` whose path their peers outvote (vectors: unit rows, masked text).

    ``peers`` may include ``examples`` themselves (an example never counts as its own peer:
    the same object, or the same question and path, is skipped).
    """
    if not len(examples) or not len(peers):
        return []
    scores = np.asarray(vectors, dtype=np.float32) @ np.asarray(peer_vectors, dtype=np.float32).T
    out = []
    for i, (ex, row) in enumerate(zip(examples, scores, strict=True)):
        near = []
        for j in np.argsort(-row):
            if row[j] < similarity or len(near) >= k:
                break
            peer = peers[j]
            same = peer is ex or (peer.question == ex.question and peer.relations == ex.relations)
            if not same and len(peer.relations) == len(ex.relations):
                near.append(peer.relations)
        if len(near) < MIN_PEERS:
            continue
        votes = Counter(near)
        top, top_n = votes.most_common(1)[0]
        if top != ex.relations and top_n > len(near) / 2 and votes[ex.relations] <= len(near) / 4:
            out.append(i)
    return out
