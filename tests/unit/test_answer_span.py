"""The answer rule on passages: a short span of the type the question asks for, never a passage id."""

from hybridrag.tools.answer_span import answer_span, answer_type
from hybridrag.tools.text import sentences

OLYMPICS = (
    "Ukraine competed at the 2014 Winter Olympics in Sochi, Russia, from 7 to 23 February 2014. "
    "The women's relay victory gave Ukraine its second Winter Games gold medal ever."
)
BAIUL = (
    "Oksana Baiul (born November 16, 1977) is a Ukrainian former competitive figure skater. "
    "She is the 1993 World champion and the 1994 Olympic champion in ladies' singles."
)


def test_the_first_question_word_decides_the_answer_type():
    assert answer_type("Where were the Olympics held when the skater won?") == "place"
    assert answer_type("When was Oksana Baiul born?") == "date"
    assert answer_type("What number largest airline is it?") == "number"
    assert answer_type("How many acts is the ballet in?") == "number"
    assert answer_type("Who directed a 2009 comedy?") == "name"
    assert answer_type("Tell me the cast of Tokyo Zombie") == "name"


def test_a_place_question_gets_the_city_and_country():
    q = "Where were the Olympics held when the 1993 World Champion figure skater's home country won its second gold?"
    assert answer_span(q, [OLYMPICS, BAIUL]) == "Sochi, Russia"


def test_a_date_question_gets_a_date_and_a_count_question_a_number():
    assert answer_span("When was Oksana Baiul born?", [BAIUL]) == "November 16, 1977"
    text = "Hawaiian Airlines is the 8th largest commercial airline in the United States."
    assert (
        answer_span("What number largest commercial airline in the United States is Hawaiian Airlines?", [text])
        == "8th"
    )


def test_the_question_own_entity_is_never_the_answer():
    text = "Forrest Gump was directed by Robert Zemeckis."
    assert answer_span("who directed Forrest Gump", [text]) == "Robert Zemeckis"


def test_no_candidate_falls_back_to_the_best_sentence_and_no_text_to_empty():
    assert answer_span("what happened there", ["it rained all day. nothing else happened there."]) == (
        "nothing else happened there."
    )
    assert answer_span("who?", []) == ""


def test_abbreviations_do_not_end_a_sentence():
    assert sentences("Joel Coen and J. Todd Anderson met Dr. Smith. Then they left.") == [
        "Joel Coen and J. Todd Anderson met Dr. Smith.",
        "Then they left.",
    ]
