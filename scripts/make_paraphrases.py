"""Write MetaQA dev questions the way people type them: evals/data/metaqa_paraphrases.jsonl.

``python scripts/make_paraphrases.py`` takes a seeded sample of MetaQA dev questions (1, 2 and 3
hops, every question type) and rewrites each in one of several wordings of our own for its type:
no brackets, about a third with the names in lower case, about one in six with a typo in a name
(two neighbouring letters swapped). Answers and topic come from the original line. The file is
data, written once and committed: the same seed gives the same file.

``--held-out`` writes ``evals/data/metaqa_paraphrases_test.jsonl`` (dataset ``metaqa-paraphrase-test``):
61 other 1-hop dev questions (up to 5 a question type), none of the paraphrase set and none of the SmolLM2
banks' questions (positions 300-1300 of the seed-0 shuffle), in wordings of :data:`HELD_OUT`, written
after fusion was tuned on the paraphrase set and used by no tuning, with the same noise. MetaQA's
test split is not on this machine, so dev questions outside every tuned and banked set stand in for it.
It also writes ``evals/data/metaqa_paraphrases_test_multihop.jsonl`` (``metaqa-paraphrase-test:2hop`` and
``:3hop``): 3 dev questions of every 2- and 3-hop question type, none of positions 0-1300 of the seed-0 shuffle
(the SmolLM2 suite's evaluated questions and the banks' questions) and none of the paraphrase set, in the
:data:`HELD_OUT_MULTI` wordings (none of them a wording of the tuned set), with the same noise.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "evals" / "data" / "metaqa_paraphrases.jsonl"
PER_TYPE = {1: 7, 2: 4, 3: 5}  # questions per question type: 13 + 21 + 15 types, 247 questions
SEED = 20261127

ONE_HOP = {
    "actor_to_movie": ["what has {x} been in", "films with {x}", "which movies star {x}"],
    "director_to_movie": ["what did {x} direct", "movies made by {x}", "list the films {x} directed"],
    "writer_to_movie": ["what did {x} write", "films written by {x}", "which screenplays are by {x}"],
    "movie_to_actor": ["who is in {x}", "Tell me the cast of {x}", "who plays in {x}"],
    "movie_to_director": ["who made {x}", "who was the director of {x}", "{x} was directed by whom"],
    "movie_to_writer": ["who wrote {x}", "whose script is {x}", "who was the writer of {x}"],
    "movie_to_genre": ["what kind of film is {x}", "genre of {x}?", "what type of movie is {x}"],
    "movie_to_year": ["what year did {x} come out", "when did {x} come out", "release year of {x}"],
    "movie_to_language": ["what language is {x} in", "which language is {x} in", "{x} is in what language"],
    "movie_to_tags": ["what is {x} about", "describe {x} in a few words", "what topics does {x} cover"],
    "movie_to_imdbrating": ["what is the rating of {x}", "how good is {x} rated", "imdb rating for {x}"],
    "movie_to_imdbvotes": ["how many votes does {x} have", "how popular is {x}", "imdb votes of {x}"],
    "tag_to_movie": ["movies about {x}", "films to do with {x}", "give me some {x} films"],
}
HELD_OUT = {  # other wordings, for the held-out set only
    "actor_to_movie": ["what films has {x} acted in", "{x} filmography", "show me movies featuring {x}"],
    "director_to_movie": ["which pictures did {x} helm", "name the movies {x} directed", "{x} as a director"],
    "writer_to_movie": ["movies with a script by {x}", "what has {x} written", "{x} screenwriting credits"],
    "movie_to_actor": ["which actors appear in {x}", "{x} cast list", "who acts in {x}"],
    "movie_to_director": ["who was behind the camera on {x}", "director of {x}?", "{x} director"],
    "movie_to_writer": ["who penned {x}", "screenwriter of {x}", "{x} was written by who"],
    "movie_to_genre": ["what's the genre of {x}", "what sort of movie is {x}", "{x} genre"],
    "movie_to_year": ["{x} release date", "what year was {x} made", "in which year did {x} premiere"],
    "movie_to_language": ["what language was {x} filmed in", "{x} original language", "language spoken in {x}"],
    "movie_to_tags": ["keywords for {x}", "what themes does {x} have", "tags of {x}"],
    "movie_to_imdbrating": ["{x} imdb score", "is {x} any good", "what do critics think of {x}"],
    "movie_to_imdbvotes": ["is {x} well known", "how many people voted on {x}", "{x} popularity"],
    "tag_to_movie": ["recommend a film about {x}", "{x} movies", "films tagged {x}"],
}
HELD_OUT_PER_TYPE = 5
HELD_OUT_OUT = ROOT / "evals" / "data" / "metaqa_paraphrases_test.jsonl"
HELD_OUT_MULTI_OUT = HELD_OUT_OUT.with_name("metaqa_paraphrases_test_multihop.jsonl")
HELD_OUT_MULTI_PER_TYPE = 3
HELD_OUT_MULTI = {  # held-out wordings at 2 and 3 hops: films reached from {x}, then what is asked of them ({f})
    "films": {
        "actor": ["{x}'s movies", "films featuring {x}", "pictures with {x} in the cast"],
        "director": ["movies helmed by {x}", "{x}'s directing work", "films made under {x}'s direction"],
        "writer": ["movies penned by {x}", "{x}'s screenplays", "films from a script by {x}"],
    },
    "costars": {  # <role>_to_movie_to_<same role>
        "actor": ["co-stars of {x}", "who has shared the screen with {x}", "{x} appeared alongside which actors"],
        "director": ["who co-directed a film with {x}", "{x} shared directing credits with whom", "{x}'s co-directors"],
        "writer": ["{x}'s writing partners", "who co-wrote a script with {x}", "{x} shared a writing credit with who"],
    },
    "shared": {  # movie_to_<role>_to_movie: the films sharing that role with {x}
        "actor": ["movies that share a cast member with {x}", "other pictures featuring {x}'s stars"],
        "director": ["other films helmed by {x}'s director", "pictures from the same filmmaker as {x}"],
        "writer": ["other movies penned by {x}'s screenwriter", "pictures from the same scriptwriter as {x}"],
    },
    "ask": {  # the last hop of a noun phrase of films
        "movie": ["name {f}", "suggest {f}", "which titles are {f}"],
        "year": ["in what year did {f} premiere", "{f} came out in which years", "premiere dates of {f}"],
        "language": ["what tongue are {f} in", "{f} are spoken in which languages", "original languages of {f}"],
        "genre": ["which genres do {f} fall under", "{f} belong to what genres", "what style of movie are {f}"],
        "actor": ["name the performers in {f}", "{f} featured which actors", "cast members of {f}"],
        "director": ["who helmed {f}", "{f} were directed by whom", "filmmakers behind {f}"],
        "writer": ["who penned {f}", "{f} had which screenwriters", "who scripted {f}"],
    },
}
FILMS = {  # the films reached from the topic by the first hop
    "actor": ["the films {x} was in", "movies starring {x}"],
    "director": ["the movies {x} directed", "films by director {x}"],
    "writer": ["the films {x} wrote", "movies written by {x}"],
}
SHARED = {  # movie_to_<role>_to_movie: films sharing that role with the topic film
    "actor": ["films sharing an actor with {x}", "movies with the same actors as {x}"],
    "director": ["films by whoever directed {x}", "the other movies of the director of {x}"],
    "writer": ["films by the writer of {x}", "the other films written by the writer of {x}"],
}
ASK = {  # the last hop, asked of a noun phrase of films
    "movie": ["what are {f}", "list {f}"],
    "year": ["when were {f} released", "what years did {f} come out"],
    "language": ["what languages are {f} in", "which languages do {f} use"],
    "genre": ["what genres are {f}", "what kinds of film are {f}"],
    "actor": ["who acted in {f}", "who stars in {f}"],
    "director": ["who directed {f}", "who made {f}"],
    "writer": ["who wrote {f}", "who are the writers of {f}"],
}


def wordings(qtype: str) -> list[str]:
    """Templates for a question type (``{x}`` is the topic entity)."""
    if qtype in ONE_HOP:
        return ONE_HOP[qtype]
    parts = qtype.split("_to_")
    if len(parts) == 3 and parts[0] != "movie":  # <role>_to_movie_to_<target>
        if parts[0] == parts[2]:
            return [f"who worked with {{x}} as a {parts[0]}", f"which other {parts[0]}s shared a film with {{x}}"]
        films = FILMS[parts[0]]
        return [a.replace("{f}", f) for a in ASK[parts[2]] for f in films]
    if len(parts) == 3:  # movie_to_<role>_to_movie
        return [a.replace("{f}", f) for a in ASK["movie"] for f in SHARED[parts[1]]]
    return [a.replace("{f}", f) for a in ASK[parts[3]] for f in SHARED[parts[1]]]  # 3 hops


def held_out_wordings(qtype: str) -> list[str]:
    """:data:`HELD_OUT_MULTI` templates for a 2- or 3-hop question type (``{x}`` is the topic entity)."""
    parts, table = qtype.split("_to_"), HELD_OUT_MULTI
    if len(parts) == 3 and parts[0] != "movie" and parts[0] == parts[2]:
        return table["costars"][parts[0]]
    if len(parts) == 3 and parts[0] != "movie":
        return [a.replace("{f}", f) for a in table["ask"][parts[2]] for f in table["films"][parts[0]]]
    shared = table["shared"][parts[1]]
    return [a.replace("{f}", f) for a in table["ask"]["movie" if len(parts) == 3 else parts[3]] for f in shared]


def typo(name: str, rng: random.Random) -> str:
    """The name with two neighbouring letters of its longest word swapped."""
    words = name.split()
    i = max(range(len(words)), key=lambda j: len(words[j]))
    w = words[i]
    if len(w) < 5:
        return name
    k = rng.randrange(1, len(w) - 2)
    words[i] = w[:k] + w[k + 1] + w[k] + w[k + 2 :]
    return " ".join(words)


def paraphrase(topic: str, qtype: str, rng: random.Random, held_out: bool = False) -> tuple[str, str]:
    """(question as a person might type it, the kind of noise applied)."""
    name, noise = topic, "none"
    roll = rng.random()
    if roll < 0.33:
        name, noise = topic.lower(), "lower-case"
    elif roll < 0.5:
        name, noise = typo(topic, rng), "typo"
    if held_out:
        templates = HELD_OUT[qtype] if qtype in HELD_OUT else held_out_wordings(qtype)
    else:
        templates = wordings(qtype)
    return rng.choice(templates).replace("{x}", name), noise


def _row(hops: int, n: int, line: str, qtype: str, rng: random.Random, held_out: bool = False) -> dict:
    question, answers = line.split("\t")
    topic = re.search(r"\[([^\]]+)\]", question).group(1)
    text, noise = paraphrase(topic, qtype, rng, held_out)
    return {
        "id": f"metaqa-{hops}hop-para{'-test' if held_out else ''}:{n + 1}",
        "question": text,
        "answers": answers.split("|"),
        "topic": topic,
        "hops": hops,
        "qtype": qtype,
        "noise": noise,
        "original": question,
    }


def _dev(hops: int) -> tuple[list[str], dict[str, list[int]]]:
    datasets = ROOT.parent / "shared" / "datasets" / "metaqa"
    lines = (datasets / f"dev_{hops}hop.txt").read_text(encoding="utf-8").splitlines()
    types = (datasets / f"dev_{hops}hop_qtype.txt").read_text(encoding="utf-8").splitlines()
    by_type: dict[str, list[int]] = defaultdict(list)
    for n, qtype in enumerate(types):
        by_type[qtype.strip()].append(n)
    return lines, by_type


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} questions to {path.relative_to(ROOT)}")


def main() -> None:
    """Write the paraphrase file."""
    rng = random.Random(SEED)
    rows = []
    for hops, per_type in PER_TYPE.items():
        lines, by_type = _dev(hops)
        for qtype in sorted(by_type):
            for n in rng.sample(by_type[qtype], min(per_type, len(by_type[qtype]))):
                rows.append(_row(hops, n, lines[n], qtype, rng))
    _write(OUT, rows)


def held_out() -> None:
    """Write the held-out file: other 1-hop dev questions in the :data:`HELD_OUT` wordings."""
    lines, by_type = _dev(1)
    taken = {json.loads(r)["original"] for r in OUT.read_text(encoding="utf-8").splitlines()}
    order = list(range(len(lines)))
    random.Random(0).shuffle(order)  # the SmolLM2 banks' questions: positions 300-1300 of this shuffle
    banked = set(order[300:1300])
    rng = random.Random(SEED + 1)
    rows = []
    for qtype in sorted(by_type):
        free = [n for n in by_type[qtype] if n not in banked and lines[n].split("\t")[0] not in taken]
        for n in rng.sample(free, min(HELD_OUT_PER_TYPE, len(free))):
            rows.append(_row(1, n, lines[n], qtype, rng, held_out=True))
    _write(HELD_OUT_OUT, rows)
    held_out_multihop(taken)


def _plain(line: str) -> str:
    return line.split("\t")[0].replace("[", "").replace("]", "").strip().casefold()


def held_out_multihop(taken: set[str]) -> None:
    """Write the 2- and 3-hop held-out file: dev questions no suite asks or banks, in :data:`HELD_OUT_MULTI` wordings.

    Args:
        taken: the paraphrase set's original questions (MetaQA wording), never held out.
    """
    rng = random.Random(SEED + 2)  # its own generator: the 1-hop file stays as it was
    rows = []
    for hops in (2, 3):
        lines, by_type = _dev(hops)
        order = list(range(len(lines)))
        random.Random(0).shuffle(order)  # 0-299: the SmolLM2 suite's questions; 300-1299: the banks'
        used = {_plain(lines[n]) for n in order[:1300]} | {_plain(t) for t in taken}
        for qtype in sorted(by_type):
            free = [n for n in by_type[qtype] if _plain(lines[n]) not in used]
            for n in rng.sample(free, HELD_OUT_MULTI_PER_TYPE):
                rows.append(_row(hops, n, lines[n], qtype, rng, held_out=True))
                if rows[-1]["noise"] == "typo" and rows[-1]["topic"] in rows[-1]["question"]:
                    rows[-1]["noise"] = "none"  # a name of short words only: typo() left it as it was
    _write(HELD_OUT_MULTI_OUT, rows)


if __name__ == "__main__":
    held_out() if "--held-out" in sys.argv[1:] else main()
