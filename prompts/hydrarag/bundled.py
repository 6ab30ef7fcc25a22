"""HydraRAG's bundled few-shot examples (``examples="bundled"``): the project's own movie examples, per role."""

from __future__ import annotations

BUNDLED: dict[str, list[str]] = {  # the project's movie examples (examples="bundled")
    "topics": [
        'Example: "Which country is the director of Amelie from?" -> ["Amelie"]',
        'Example: "what films did Kevin Bacon and Tom Hanks both star in" -> ["Kevin Bacon", "Tom Hanks"]',
    ],
    "analysis": [
        'Example: question "Which country is the director of Amelie from?", topic entities ["Amelie"]: '
        'sub-questions ["Who directed Amelie?", "Which country is that director from?"]; '
        'skyline "Amelie - directed by - director - citizen of - answer(country)"',
        'Example: question "what genre are the films Kevin Bacon acted in", topic entities '
        '["Kevin Bacon"]: sub-questions ["Which films did Kevin Bacon act in?", "What genre are '
        'those films?"]; skyline "Kevin Bacon - starred actors - movie - has genre - answer(genre)"',
    ],
    "text_paths": [
        'Example: paragraph 1 "Apollo 13 is a 1995 film directed by Ron Howard, who was born in '
        'Duncan, Oklahoma." -> paragraph 1, "Apollo 13 - directed by - Ron Howard - born in - '
        'Duncan, Oklahoma"',
        'Example: paragraph 2 "Tremors stars Kevin Bacon." -> paragraph 2, "Tremors - starred actors - Kevin Bacon"',
    ],
    "plan": [
        'Example: "who directed the films Tom Hanks starred in" → {"topic": "Tom Hanks", '
        '"relations": ["starred_actors", "directed_by"], "answer_type": "person"}',
        'Example: "what genre are the films Kevin Bacon acted in" → {"topic": "Kevin Bacon", '
        '"relations": ["starred_actors", "has_genre"], "answer_type": "genre"}',
    ],
    "selector": [
        'Example: question "who directed Big", available kg, docs, skyline "Big - directed by - answer(person)" -> '
        "a stable fact between two named entities, which the graph holds: kg",
        'Example: question "what happens to the hero at the end of Heat", available kg, docs -> the graph has the '
        "film but no plot relation, the documents may describe it: kg + docs",
    ],
    "follow_up": [
        'Example: question "who directed the films Tom Hanks starred in", paths "{Tom Hanks} ← starred actors ← '
        '{Big, Splash}", check "no: the directors are missing" -> missing: who directed Big and Splash; follow-up '
        '"who directed Big and Splash"; skyline "Big - directed by - answer(person)"; entities ["Big", "Splash"]',
        'Example: question "which language is Amelie in", paths "{Amelie} → directed by → {Jean-Pierre Jeunet}", '
        'check "no: no path names a language" -> missing: the language of the film; follow-up "what language is '
        'the film Amelie in"; skyline "Amelie - in language - answer(language)"; entities ["Amelie"]',
    ],
    "predict": [
        'Example: question "who directed Big", paths "{Big} → release year → {1988}", check "no: the director '
        'is missing" -> prediction "Penny Marshall", skyline "Big - directed by - Penny Marshall"',
        'Example: question "what genre is Tremors", paths "{Tremors} → starred actors → {Kevin Bacon}" -> '
        'predictions "Horror", skyline "Tremors - has genre - Horror"; "Comedy", skyline "Tremors - has genre - '
        'Comedy"',
    ],
    "select_paths": [
        'Example: question "who directed Big", skyline "Big - directed by - answer(person)", paths 1 "{Big} → '
        'release year → {1988}", 2 "{Big} → directed by → {Penny Marshall}" -> path 2 follows the skyline and '
        "names a person: [2]",
        'Example: question "what films did Kevin Bacon act in", skyline "Kevin Bacon - starred actors - '
        'answer(movie)", paths 1 "{Kevin Bacon} ← starred actors ← {Tremors, Apollo 13}", 2 "{Kevin Bacon} ← '
        'has tags ← {Footloose}" -> path 1 carries the relation asked for, path 2 only a tag: [1]',
    ],
    "refine": [
        'Example: question "who directed the films Tom Hanks starred in", paths "{Tom Hanks} ← starred actors ← '
        '{Big} → directed by → {Penny Marshall}", "{Big} → release year → {1988}" -> "Tom Hanks starred in '
        'Big; Big was directed by Penny Marshall."',
        'Example: question "who directed Apollo 13", paths "{Apollo 13} → directed by → {Ron Howard}", '
        '"Ron Howard - born in - Duncan, Oklahoma" -> "Apollo 13 was directed by Ron Howard."',
    ],
    "generate": [
        'Example: question "who directed Big", evidence "{Big} → directed by → {Penny Marshall}" -> answer '
        '"Penny Marshall"',
        'Example: question "what year was Tremors released", evidence "{Tremors} → starred actors → {Kevin Bacon}" '
        '-> the evidence does not say; from what is known of the film: answer "1990"',
    ],
    "path_summary": [
        'Example: skyline "Apollo 13 - directed by - director - born in - answer(place)", paths 1 "Apollo 13 - '
        'directed by - Ron Howard", 2 "Ron Howard - born in - Duncan, Oklahoma", 3 "Apollo 13 - released in - '
        '1995" -> "Apollo 13 - directed by - Ron Howard - born in - Duncan, Oklahoma" from [1, 2]',
        'Example: skyline "Big - directed by - answer(person)", paths 1 "Big - directed by - Penny Marshall", 2 '
        '"Big - directed by - Penny Marshall" -> "Big - directed by - Penny Marshall" from [1, 2]',
    ],
    "check": [
        'Example: question "who directed Big", evidence "{Big} → directed_by → {Penny Marshall}" -> yes, '
        'answer "Penny Marshall"',
        'Example: question "who directed Big", evidence "{Big} → release_year → {1988}" -> no, missing '
        '"the director of Big"',
    ],
}
